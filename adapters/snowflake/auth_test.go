package snowflake_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters/snowflake"
)

// env returns a LookupEnv over vars.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func build(t *testing.T, dsn string, vars map[string]string) (*gosnowflake.Config, error) {
	t.Helper()
	return snowflake.DriverConfig(snowflake.Config{DSN: dsn, LookupEnv: env(vars)})
}

func TestDriverConfigFromDSN(t *testing.T) {
	sf, err := build(t, "alice:s3cr%40t@myorg-acct/ANALYTICS/MARTS?warehouse=wh&role=analyst", map[string]string{snowflake.EnvPassword: "from-env"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"user", sf.User, "alice"}, {"password (the DSN's wins)", sf.Password, "s3cr@t"}, {"account", sf.Account, "myorg-acct"},
		{"database", sf.Database, "ANALYTICS"}, {"schema", sf.Schema, "MARTS"}, {"warehouse", sf.Warehouse, "wh"},
		{"role", sf.Role, "analyst"}, {"authenticator", sf.Authenticator.String(), "SNOWFLAKE"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	for k, want := range map[string]string{"TIMEZONE": "UTC", "WEEK_START": "1", "QUOTED_IDENTIFIERS_IGNORE_CASE": "false"} {
		if v := sf.Params[k]; v == nil || *v != want {
			t.Errorf("session parameter %s = %v, want %s", k, v, want)
		}
	}
}

func TestDriverConfigKeepsTheDSNsSessionParameters(t *testing.T) {
	t.Parallel()
	sf, err := build(t, "alice:pw@acct/DB?timezone=America%2FNew_York", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := sf.Params["timezone"]; v == nil || *v != "America/New_York" {
		t.Errorf("timezone = %v, want the DSN's America/New_York", v)
	}
	if _, set := sf.Params["TIMEZONE"]; set {
		t.Error("the default TIMEZONE was added beside the DSN's timezone")
	}
}

func TestDriverConfigWarehouseOverridesTheDSNs(t *testing.T) {
	t.Parallel()
	sf, err := snowflake.DriverConfig(snowflake.Config{DSN: "alice:pw@acct/DB?warehouse=small", Warehouse: "BIG", LookupEnv: env(nil)})
	if err != nil || sf.Warehouse != "BIG" {
		t.Fatalf("warehouse = %v, %v; want the target's BIG", sf, err)
	}
}

func TestDriverConfigPasswordFromEnv(t *testing.T) {
	t.Parallel()
	sf, err := build(t, "alice@acct/DB/S", map[string]string{snowflake.EnvPassword: "p@ss:word/?"})
	if err != nil {
		t.Fatal(err)
	}
	if sf.Password != "p@ss:word/?" || sf.User != "alice" || sf.Database != "DB" || sf.Schema != "S" {
		t.Errorf("got user %q password %q db %q schema %q", sf.User, sf.Password, sf.Database, sf.Schema)
	}
}

func TestDriverConfigMissingPassword(t *testing.T) {
	t.Parallel()
	_, err := build(t, "alice@acct/DB", nil)
	if err == nil || !strings.Contains(err.Error(), snowflake.EnvPassword) || !strings.Contains(err.Error(), snowflake.EnvPrivateKeyPath) {
		t.Fatalf("err = %v, want one naming %s and %s", err, snowflake.EnvPassword, snowflake.EnvPrivateKeyPath)
	}
	if strings.Contains(err.Error(), "placeholder") {
		t.Errorf("the error leaks the parser placeholder: %v", err)
	}
}

func TestDriverConfigErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"alice:hunter2secret@acct",       // no database
		"alice:hunt%zzer2secret@acct/DB", // a bad escape inside the password
	} {
		_, err := build(t, dsn, nil)
		if err == nil {
			t.Errorf("%s: no error", dsn)
			continue
		}
		for _, secret := range []string{"hunter2secret", "hunt", "zzer", dsn} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q contains %q", err, secret)
			}
		}
	}
}

func TestDriverConfigTokenAuth(t *testing.T) {
	t.Parallel()
	sf, err := build(t, "alice@acct/DB", map[string]string{snowflake.EnvAuthenticator: "oauth", snowflake.EnvToken: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	if sf.Authenticator != gosnowflake.AuthTypeOAuth || sf.Token != "tok-123" {
		t.Errorf("authenticator %s token %q, want OAUTH with the env token", sf.Authenticator, sf.Token)
	}
	_, err = build(t, "alice@acct/DB", map[string]string{snowflake.EnvAuthenticator: "programmatic_access_token"})
	if err == nil || !strings.Contains(err.Error(), snowflake.EnvToken) {
		t.Errorf("PAT without a token: %v, want an error naming %s", err, snowflake.EnvToken)
	}
}

// writeKey writes a PEM block to a file and returns its path.
func writeKey(t *testing.T, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.p8")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDriverConfigKeyPair(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(key)
	for name, path := range map[string]string{
		"PKCS#8": writeKey(t, "PRIVATE KEY", pkcs8),
		"PKCS#1": writeKey(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)),
	} {
		sf, err := build(t, "svc_refill@acct/DB?role=LOADER", map[string]string{snowflake.EnvPrivateKeyPath: path, snowflake.EnvPassword: ""})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sf.Authenticator != gosnowflake.AuthTypeJwt || sf.PrivateKey == nil || !sf.PrivateKey.Equal(key) || sf.Password != "" {
			t.Errorf("%s: authenticator %s, key loaded %v, password %q; want SNOWFLAKE_JWT with the file's key", name, sf.Authenticator,
				sf.PrivateKey != nil && sf.PrivateKey.Equal(key), sf.Password)
		}
	}
	// A password in the DSN keeps password authentication.
	sf, err := build(t, "alice:pw@acct/DB", map[string]string{snowflake.EnvPrivateKeyPath: writeKey(t, "PRIVATE KEY", pkcs8)})
	if err != nil || sf.Authenticator != gosnowflake.AuthTypeSnowflake || sf.PrivateKey != nil {
		t.Errorf("DSN password with a key in the env: %v, %v", sf, err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	if _, err := build(t, "alice@acct/DB", map[string]string{snowflake.EnvPrivateKeyPath: writeKey(t, "PRIVATE KEY", ecDER)}); err == nil || !strings.Contains(err.Error(), "RSA") {
		t.Errorf("an ECDSA key: %v, want an error asking for RSA", err)
	}
}

func TestDriverConfigEncryptedKey(t *testing.T) {
	t.Parallel()
	pubPEM, err := os.ReadFile("testdata/rsa_key.pub")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pubPEM)
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"testdata/rsa_key_aes256.p8", "testdata/rsa_key_aes128_sha1.p8"} {
		vars := map[string]string{snowflake.EnvPrivateKeyPath: file, snowflake.EnvPrivateKeyPassphrase: "refill-test"}
		sf, err := build(t, "svc@acct/DB", vars)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if !sf.PrivateKey.PublicKey.Equal(pub) {
			t.Errorf("%s decrypts to another key", file)
		}
		vars[snowflake.EnvPrivateKeyPassphrase] = "wrong-passphrase"
		if _, err := build(t, "svc@acct/DB", vars); err == nil || !strings.Contains(err.Error(), "passphrase") || strings.Contains(err.Error(), "wrong-passphrase") {
			t.Errorf("%s with a wrong passphrase: %v", file, err)
		}
		delete(vars, snowflake.EnvPrivateKeyPassphrase)
		if _, err := build(t, "svc@acct/DB", vars); err == nil || !strings.Contains(err.Error(), snowflake.EnvPrivateKeyPassphrase) {
			t.Errorf("%s without a passphrase: %v, want an error naming %s", file, err, snowflake.EnvPrivateKeyPassphrase)
		}
	}
}

func TestDriverConfigJWTNeedsAKey(t *testing.T) {
	_, err := build(t, "svc@acct/DB?authenticator=SNOWFLAKE_JWT", nil)
	if err == nil || !strings.Contains(err.Error(), snowflake.EnvPrivateKeyPath) {
		t.Errorf("err = %v, want one naming %s", err, snowflake.EnvPrivateKeyPath)
	}
}

func TestDefaultSchema(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"alice:pw@acct/DB/MARTS?warehouse=WH": "MARTS",
		"alice:pw@acct/DB":                    "PUBLIC",
		"alice@acct/DB/my%20schema":           "my schema",
	} {
		if got := snowflake.DefaultSchema(dsn); got != want {
			t.Errorf("DefaultSchema(%q) = %q, want %q", dsn, got, want)
		}
	}
}
