package snowflake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"os"
)

// errWrongPassphrase is returned for an encrypted key that does not decrypt.
var errWrongPassphrase = errors.New("the key does not decrypt: wrong passphrase, or a corrupt file")

// readPrivateKey reads the RSA key of key-pair authentication from a file:
// a PEM "PRIVATE KEY" (PKCS#8), "RSA PRIVATE KEY" (PKCS#1), "ENCRYPTED
// PRIVATE KEY" (PKCS#8 with PBES2: PBKDF2 and AES-CBC, what `openssl pkcs8
// -topk8 -v2 aes-256-cbc` writes), or the same as DER. Its errors never
// contain the key or the passphrase.
func readPrivateKey(path, passphrase string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parsePrivateKey(data, passphrase)
}

func parsePrivateKey(data []byte, passphrase string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return rsaKey(x509.ParsePKCS8PrivateKey(data))
	}
	switch block.Type {
	case "PRIVATE KEY":
		return rsaKey(x509.ParsePKCS8PrivateKey(block.Bytes))
	case "RSA PRIVATE KEY":
		if _, encrypted := block.Headers["DEK-Info"]; encrypted {
			return nil, errors.New("legacy PEM encryption is not supported: convert the key with openssl pkcs8 -topk8 -v2 aes-256-cbc")
		}
		return rsaKey(x509.ParsePKCS1PrivateKey(block.Bytes))
	case "ENCRYPTED PRIVATE KEY":
		if passphrase == "" {
			return nil, fmt.Errorf("the key is encrypted: set %s", EnvPrivateKeyPassphrase)
		}
		der, err := decryptPKCS8(block.Bytes, passphrase)
		if err != nil {
			return nil, err
		}
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, errWrongPassphrase
		}
		return rsaKey(key, nil)
	}
	return nil, fmt.Errorf("unexpected PEM block %q: want PRIVATE KEY or ENCRYPTED PRIVATE KEY", block.Type)
}

func rsaKey(key any, err error) (*rsa.PrivateKey, error) {
	if err != nil {
		return nil, fmt.Errorf("not a PKCS#8 or PKCS#1 private key: %w", err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the key is a %T: Snowflake key-pair authentication needs an RSA key", key)
	}
	return rsaKey, nil
}

// The ASN.1 of an encrypted PKCS#8 key (RFC 5958, RFC 8018).
type encryptedKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

type pbes2Params struct {
	KDF        pkix.AlgorithmIdentifier
	Encryption pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

// decryptPKCS8 decrypts the DER of an EncryptedPrivateKeyInfo protected
// with PBES2 (PBKDF2 with HMAC-SHA1/256/512, AES-128/192/256-CBC).
func decryptPKCS8(der []byte, passphrase string) ([]byte, error) {
	var info encryptedKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("not an encrypted PKCS#8 key: %w", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("unsupported key encryption %v: re-encrypt with openssl pkcs8 -topk8 -v2 aes-256-cbc", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("reading PBES2 parameters: %w", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("unsupported key derivation %v (want PBKDF2)", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("reading PBKDF2 parameters: %w", err)
	}
	var prf func() hash.Hash
	switch alg := kdf.PRF.Algorithm; {
	case len(alg) == 0 || alg.Equal(oidHMACSHA1):
		prf = sha1.New
	case alg.Equal(oidHMACSHA256):
		prf = sha256.New
	case alg.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("unsupported PBKDF2 hash %v", alg)
	}
	keyLen := map[string]int{oidAES128CBC.String(): 16, oidAES192CBC.String(): 24, oidAES256CBC.String(): 32}[params.Encryption.Algorithm.String()]
	if keyLen == 0 {
		return nil, fmt.Errorf("unsupported key cipher %v (want AES-CBC)", params.Encryption.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Encryption.Parameters.FullBytes, &iv); err != nil || len(iv) != aes.BlockSize {
		return nil, errors.New("reading the cipher's IV: malformed")
	}
	key, err := pbkdf2.Key(prf, passphrase, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(info.Data) == 0 || len(info.Data)%aes.BlockSize != 0 {
		return nil, errors.New("encrypted key data is not a whole number of blocks")
	}
	plain := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.Data)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, errWrongPassphrase
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errWrongPassphrase
		}
	}
	return plain[:len(plain)-pad], nil
}
