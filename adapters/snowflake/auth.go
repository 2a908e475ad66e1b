package snowflake

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/snowflakedb/gosnowflake"
)

// The environment variables that supply credentials a DSN leaves out. A
// value written in the DSN always wins; none of them is ever logged.
const (
	// EnvPassword is the password for the default (SNOWFLAKE) and the
	// USERNAME_PASSWORD_MFA authenticators.
	EnvPassword = "SNOWFLAKE_PASSWORD"
	// EnvPrivateKeyPath is a PEM file holding the RSA key for key-pair
	// authentication (PKCS#8, optionally encrypted, or PKCS#1). When it is
	// set and the DSN has neither a password nor an authenticator, the
	// authenticator is SNOWFLAKE_JWT.
	EnvPrivateKeyPath = "SNOWFLAKE_PRIVATE_KEY_PATH"
	// EnvPrivateKeyPassphrase decrypts an ENCRYPTED PRIVATE KEY file.
	EnvPrivateKeyPassphrase = "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE"
	// EnvAuthenticator names the authenticator when the DSN has no
	// authenticator= parameter: snowflake, snowflake_jwt, oauth,
	// programmatic_access_token, externalbrowser, username_password_mfa or
	// an Okta URL.
	EnvAuthenticator = "SNOWFLAKE_AUTHENTICATOR"
	// EnvToken is the token of the OAUTH and PROGRAMMATIC_ACCESS_TOKEN
	// authenticators when the DSN has no token= or tokenFilePath=.
	EnvToken = "SNOWFLAKE_TOKEN"
)

// placeholder stands in for a password the DSN leaves out, only so that
// gosnowflake's parser accepts the DSN; it is replaced before anything
// connects and never reaches the server.
const placeholder = "refill-placeholder"

// sessionDefaults are session parameters refill relies on, set at login
// unless the DSN sets them: the dialect's timestamps are UTC, its weeks start
// on Monday, and quoted identifiers keep their case.
var sessionDefaults = [][2]string{
	{"TIMEZONE", "UTC"},
	{"WEEK_START", "1"},
	{"QUOTED_IDENTIFIERS_IGNORE_CASE", "false"},
}

// driverConfig builds the gosnowflake configuration for cfg without
// connecting: it parses cfg.DSN (gosnowflake's format,
// user[:password]@account/database[/schema][?warehouse=..&role=..]), fills
// in what the DSN omits from the environment variables above (read through
// cfg.LookupEnv), applies cfg.Warehouse, and checks that the chosen
// authenticator has its credential. Its errors never contain the DSN, the
// password, the token or the key.
func driverConfig(cfg Config) (*gosnowflake.Config, error) {
	env := cfg.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	get := func(k string) string { v, _ := env(k); return v } // secrets are used as they are
	if cfg.DSN == "" {
		return nil, errors.New("snowflake: the target has no dsn (user@account/database/schema?warehouse=...)")
	}
	d := splitDSN(cfg.DSN)
	dsn := cfg.DSN
	if d.hasUser && !d.hasPassword {
		dsn = dsn[:d.at] + ":" + placeholder + dsn[d.at:]
	}
	keyPath := strings.TrimSpace(get(EnvPrivateKeyPath))
	if !d.params["authenticator"] {
		switch auth := strings.TrimSpace(get(EnvAuthenticator)); {
		case auth != "":
			dsn = addParam(dsn, "authenticator", auth)
		case keyPath != "" && !d.hasPassword:
			dsn = addParam(dsn, "authenticator", gosnowflake.AuthTypeJwt.String())
		}
	}
	sf, err := gosnowflake.ParseDSN(dsn)
	if err != nil {
		return nil, dsnError(err)
	}
	if !d.hasPassword {
		sf.Password = get(EnvPassword) // replaces the placeholder
	}
	if !d.params["tracing"] {
		// The driver logs its own errors to stderr; refill reports them.
		sf.Tracing = "OFF"
	}
	if sf.Token == "" { // neither token= nor tokenFilePath= in the DSN
		sf.Token = get(EnvToken)
	}
	if sf.Database == "" {
		return nil, errors.New("snowflake: the dsn names no database: write user@account/DATABASE/SCHEMA")
	}
	if cfg.Warehouse != "" {
		sf.Warehouse = cfg.Warehouse
	}
	for _, p := range sessionDefaults {
		if !hasParam(sf.Params, p[0]) {
			v := p[1]
			sf.Params[p[0]] = &v
		}
	}
	if err := checkCredentials(sf, keyPath, get(EnvPrivateKeyPassphrase)); err != nil {
		return nil, err
	}
	return sf, nil
}

// checkCredentials loads the private key for key-pair auth and reports a
// missing credential for the authenticators that need one.
func checkCredentials(sf *gosnowflake.Config, keyPath, passphrase string) error {
	switch sf.Authenticator {
	case gosnowflake.AuthTypeJwt:
		if sf.PrivateKey != nil {
			return nil
		}
		if keyPath == "" {
			return fmt.Errorf("snowflake: authenticator SNOWFLAKE_JWT needs a private key: set %s (and %s for an encrypted key)",
				EnvPrivateKeyPath, EnvPrivateKeyPassphrase)
		}
		key, err := readPrivateKey(keyPath, passphrase)
		if err != nil {
			return fmt.Errorf("snowflake: reading the private key in %s (%s): %w", keyPath, EnvPrivateKeyPath, err)
		}
		sf.PrivateKey = key
	case gosnowflake.AuthTypeSnowflake, gosnowflake.AuthTypeUsernamePasswordMFA, gosnowflake.AuthTypeOkta:
		if sf.Password == "" {
			return fmt.Errorf("snowflake: no password for user %s: put it in the dsn (user:password@account/...), set %s, or set %s for key-pair authentication",
				sf.User, EnvPassword, EnvPrivateKeyPath)
		}
	case gosnowflake.AuthTypeOAuth, gosnowflake.AuthTypePat:
		if sf.Token == "" && sf.Password == "" {
			return fmt.Errorf("snowflake: authenticator %s needs a token: add token= to the dsn or set %s", sf.Authenticator, EnvToken)
		}
	}
	return nil
}

// dsnError rewords a parse error so that it cannot quote a fragment of a
// password: url.EscapeError carries the offending escape.
func dsnError(err error) error {
	var esc url.EscapeError
	if errors.As(err, &esc) {
		return errors.New("snowflake: the dsn has an invalid %-escape: escape special characters of the user and password as %XX")
	}
	return fmt.Errorf("snowflake: parsing the dsn: %w", err)
}

// dsnParts is what driverConfig needs to know about a DSN before gosnowflake
// parses it.
type dsnParts struct {
	at          int // index of the '@' ending the user part
	hasUser     bool
	hasPassword bool
	schema      string
	params      map[string]bool // names of the query parameters present
}

// splitDSN splits dsn the way gosnowflake.ParseDSN reads it: the user part
// ends at the last '@' before the query, the path is /database[/schema].
func splitDSN(dsn string) dsnParts {
	p := dsnParts{params: map[string]bool{}}
	head, query, _ := strings.Cut(dsn, "?")
	for _, kv := range strings.Split(query, "&") {
		if k, _, ok := strings.Cut(kv, "="); ok {
			p.params[k] = true
		}
	}
	if at := strings.LastIndex(head, "@"); at >= 0 {
		p.at, p.hasUser = at, true
		p.hasPassword = strings.Contains(head[:at], ":")
		head = head[at+1:]
	}
	if parts := strings.Split(head, "/"); len(parts) >= 3 {
		p.schema, _ = url.QueryUnescape(parts[len(parts)-1])
	}
	return p
}

func addParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + url.QueryEscape(value)
}

func hasParam(params map[string]*string, name string) bool {
	for k := range params {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// defaultSchema returns the schema top-level models use on a target with
// this DSN when the target sets no schema: the DSN's schema, else PUBLIC.
// It needs no connection and no credentials, for refill render and offline
// plans.
func defaultSchema(dsn string) string {
	if s := splitDSN(dsn).schema; s != "" {
		return s
	}
	return "PUBLIC"
}
