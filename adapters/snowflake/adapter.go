package snowflake

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters"
	_ "github.com/refill/refill/adapters/snowflake/internal/nominicore" // before gosnowflake's init
	"github.com/refill/refill/models"
)

// Config says which Snowflake account to use and how.
type Config struct {
	// DSN is gosnowflake's connection string,
	// user[:password]@account/database[/schema][?warehouse=WH&role=ROLE].
	// It must name a database: the ledger and staging schemas live in it.
	// Credentials it leaves out come from the environment (see
	// driverConfig). It is never logged nor put in an error.
	DSN string
	// Schema is the default schema for top-level models: default the DSN's
	// schema, else PUBLIC.
	Schema string
	// LedgerSchema and StageSchema default to refill and refill_stage,
	// which Snowflake stores as REFILL and REFILL_STAGE.
	LedgerSchema string
	StageSchema  string
	// Warehouse is the target's virtual warehouse; it overrides the DSN's
	// warehouse=. A model's snowflake.warehouse overrides it for that
	// model's statements.
	Warehouse string
	// Log, when set, receives every statement before it runs.
	Log func(sql string)
	// Connector, when set, receives the driver's connector and returns the
	// one to use instead: tests put a recorder there (adapters/recorder).
	Connector func(driver.Connector) driver.Connector
	// LookupEnv reads the credential environment variables; nil means
	// os.LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// Adapter is a Snowflake database opened by refill. Each unit of work (a
// stage, a query, a publish, a ledger write) runs on one connection taken
// from the pool, so its USE WAREHOUSE and its transaction apply to it alone.
type Adapter struct {
	db  *sql.DB
	cfg Config
	d   Dialect

	suffix string
	seq    atomic.Int64

	// defaultWarehouse is the warehouse sessions log in with (stored name,
	// empty if none). Once any statement has run on another warehouse,
	// switched is set and every unit selects its warehouse explicitly,
	// because a pooled connection may still be on the other one.
	defaultWarehouse string
	switched         atomic.Bool

	mu         sync.Mutex
	warehouses map[string]string // model name -> its snowflake.warehouse, learned in Stage
	schemas    map[string]bool   // schemas known to exist
	tables     map[string]bool   // target tables known to exist
}

var (
	_ adapters.Adapter      = (*Adapter)(nil)
	_ adapters.Rebuilder    = (*Adapter)(nil)
	_ adapters.Seeder       = (*Adapter)(nil)
	_ adapters.StageCleaner = (*Adapter)(nil)
	_ adapters.Classifier   = (*Adapter)(nil)
)

// Open connects to the account cfg.DSN names. It logs in once to check the
// credentials and learns the session's default warehouse; it creates
// nothing.
func Open(ctx context.Context, cfg Config) (*Adapter, error) {
	sf, err := driverConfig(cfg)
	if err != nil {
		return nil, err
	}
	// gosnowflake logs its failures to stderr in its own format
	// (time=... level=error msg=...), besides returning them: refill
	// reports the errors, so the driver's lines would only repeat them.
	gosnowflake.GetLogger().SetOutput(io.Discard)
	if cfg.Schema == "" {
		cfg.Schema = sf.Schema
	}
	if cfg.Schema == "" {
		cfg.Schema = "PUBLIC"
	}
	if cfg.LedgerSchema == "" {
		cfg.LedgerSchema = models.DefaultLedgerSchema
	}
	if cfg.StageSchema == "" {
		cfg.StageSchema = models.DefaultStageSchema
	}
	var connector driver.Connector = gosnowflake.NewConnector(gosnowflake.SnowflakeDriver{}, *sf)
	if cfg.Connector != nil {
		connector = cfg.Connector(connector)
	}
	db := sql.OpenDB(connector)
	// Sessions left idle for 4 hours can no longer renew their token
	// (390114); closing idle connections long before avoids reusing them.
	db.SetConnMaxIdleTime(30 * time.Minute)
	db.SetMaxIdleConns(capabilities().DefaultConcurrency + 2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("snowflake: connecting to account %s as %s: %w", sf.Account, sf.User, err)
	}
	b := make([]byte, 3)
	rand.Read(b)
	a := &Adapter{db: db, cfg: cfg, suffix: hex.EncodeToString(b), defaultWarehouse: Dialect{}.Fold(sf.Warehouse)}
	var current sql.NullString
	a.log(CurrentWarehouseSQL)
	if err := db.QueryRowContext(gosnowflake.WithQueryTag(ctx, queryTag(adapters.Tag{Step: "connect"})),
		CurrentWarehouseSQL).Scan(&current); err == nil {
		a.defaultWarehouse = current.String
	}
	return a, nil
}

// CurrentWarehouseSQL is how Open learns the warehouse sessions log in with.
const CurrentWarehouseSQL = "SELECT CURRENT_WAREHOUSE()"

// Dialect returns Snowflake's dialect.
func (a *Adapter) Dialect() models.Dialect { return a.d }

// Info describes Snowflake's guarantees.
func (a *Adapter) Info() adapters.Info { return capabilities() }

// capabilities describes what the adapter guarantees, without a connection.
func capabilities() adapters.Info {
	return adapters.Info{
		Name: "snowflake",
		Guarantee: "atomic: each publish is one Snowflake transaction (delete the windows, insert from the stages, ledger rows) " +
			"that a failure, a crash or a lost session rolls back; only a missing target table is created before it, " +
			"so a failed first publish can leave that table empty",
		MultiTable:         true,
		DefaultConcurrency: 8,
	}
}

// DB returns the underlying database, for tests.
func (a *Adapter) DB() *sql.DB { return a.db }

// Close closes every connection, which ends their sessions.
func (a *Adapter) Close() error { return a.db.Close() }

func (a *Adapter) log(sql string) {
	if a.cfg.Log != nil {
		a.cfg.Log(sql)
	}
}

// newName returns a fresh name for a table of kind that run runID makes
// for target (adapters.StageName).
func (a *Adapter) newName(target models.Relation, kind, runID string) string {
	return adapters.StageName(target, kind, runID, fmt.Sprintf("%s%d", a.suffix, a.seq.Add(1)))
}

// rememberWarehouse records m's warehouse, so that the queries the runner
// makes about m's stages (tagged with m's name) run on it too.
func (a *Adapter) rememberWarehouse(m *models.Model) {
	w := modelOptions(m).Warehouse
	if w == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.warehouses == nil {
		a.warehouses = map[string]string{}
	}
	a.warehouses[m.Name] = w
}

func (a *Adapter) warehouseOf(model string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.warehouses[model]
}

func (a *Adapter) known(set *map[string]bool, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return (*set)[key]
}

func (a *Adapter) remember(set *map[string]bool, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[key] = true
}
