package duckdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Config says which database to open and how.
type Config struct {
	// Path is the database file; empty means an in-memory database.
	Path string
	// ReadOnly opens the file without taking DuckDB's write lock, for plan
	// and status. A read-only open of a file that does not exist yet
	// behaves as an empty warehouse and creates nothing.
	ReadOnly bool
	// Schema is the default schema for top-level models (default main).
	Schema string
	// LedgerSchema and StageSchema default to refill and refill_stage.
	LedgerSchema string
	StageSchema  string
	// Holder describes this process in the lock note that lets a second
	// process name who holds the file, e.g. "refill run".
	Holder string
	// Log, when set, receives every statement before it runs.
	Log func(sql string)
	// Connector, when set, receives the driver's connector and returns the
	// one to use instead: tests put a recorder there (adapters/recorder).
	Connector func(driver.Connector) driver.Connector
}

// Adapter is a DuckDB database opened by refill.
type Adapter struct {
	db     *sql.DB
	cfg    Config
	d      Dialect
	holder *holderNote

	// swap serializes Publish: DuckDB aborts concurrent transactions that
	// delete the same rows, and a ledger table is shared by every swap.
	swap sync.Mutex
	// schemas remembers the schemas known to exist; creating one races
	// with concurrent DDL, so it happens under schemaMu.
	schemaMu sync.Mutex
	schemas  map[string]bool
	seq      atomic.Int64
	suffix   string
	// stages is the in-memory database staging tables live in (see
	// stageRelation); "" for a read-only adapter. catalog is the name of
	// the database file's own catalog, which views there refer to.
	stages, catalog string
	// targets remembers, under swap, the tables the publications of the
	// run targetsRun created or found: its later swaps into one skip
	// creating it.
	targets    map[string]bool
	targetsRun string
	// ledgerTables remembers the ledger's tables found (ledgerHas).
	ledgerTables sync.Map
}

// stageCatalog is the name of the in-memory database that holds stages.
const stageCatalog = "refill_stages"

var (
	_ adapters.Adapter      = (*Adapter)(nil)
	_ adapters.Rebuilder    = (*Adapter)(nil)
	_ adapters.Seeder       = (*Adapter)(nil)
	_ adapters.StageCleaner = (*Adapter)(nil)
	_ adapters.Classifier   = (*Adapter)(nil)
)

// Open opens (and for writing, creates) the database in cfg.Path. When
// another process holds the file it returns an *adapters.LockedError naming
// that process.
func Open(ctx context.Context, cfg Config) (*Adapter, error) {
	if cfg.Schema == "" {
		cfg.Schema = "main"
	}
	if cfg.LedgerSchema == "" {
		cfg.LedgerSchema = models.DefaultLedgerSchema
	}
	if cfg.StageSchema == "" {
		cfg.StageSchema = models.DefaultStageSchema
	}
	dsn := cfg.Path
	if cfg.ReadOnly && cfg.Path != "" {
		if _, err := os.Stat(cfg.Path); errors.Is(err, os.ErrNotExist) {
			dsn = "" // nothing to read yet: an empty in-memory database
		} else {
			dsn = cfg.Path + "?access_mode=READ_ONLY"
		}
	}
	// Every connection reads and writes times in UTC, whatever the
	// machine's zone: TIMESTAMPTZ values and date arithmetic on them
	// compare with refill's UTC windows.
	connector, err := duckdb.NewConnector(dsn, func(c driver.ExecerContext) error {
		_, err := c.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		return nil, openError(cfg.Path, err)
	}
	var conn driver.Connector = connector
	if cfg.Connector != nil {
		conn = cfg.Connector(conn)
	}
	db := sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, openError(cfg.Path, err)
	}
	b := make([]byte, 3)
	rand.Read(b)
	a := &Adapter{db: db, cfg: cfg, suffix: hex.EncodeToString(b)}
	if !cfg.ReadOnly {
		if err := a.attachStages(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	if !cfg.ReadOnly && cfg.Path != "" {
		a.holder = writeHolderNote(cfg.Path, cfg.Holder)
	}
	return a, nil
}

// attachStages attaches an in-memory database for staging tables. A stage
// is computed, verified and audited there and copied into its target in
// the publishing transaction: its rows never reach the database file's
// write-ahead log, creating and dropping it commits nothing to disk, and a
// crashed run leaves no stage behind.
func (a *Adapter) attachStages(ctx context.Context) error {
	stmts := []string{
		"ATTACH ':memory:' AS " + a.d.QuoteIdent(stageCatalog),
		"CREATE SCHEMA " + models.Relation{Database: stageCatalog, Name: a.cfg.StageSchema}.Quote(a.d),
	}
	for _, q := range stmts {
		if err := a.run(ctx, "open", q); err != nil {
			return fmt.Errorf("attaching the staging database: %w", err)
		}
	}
	if err := a.db.QueryRowContext(ctx, "SELECT current_database()").Scan(&a.catalog); err != nil {
		return err
	}
	a.stages = stageCatalog
	return nil
}

// stageRelation names a new staging table, swap table or overlay view of
// kind for target: in the in-memory staging database when attached.
func (a *Adapter) stageRelation(target models.Relation, kind, runID string) models.Relation {
	return models.Relation{Database: a.stages, Schema: a.cfg.StageSchema, Name: a.newName(target, kind, runID)}
}

// qualified names r with the database file's catalog, for views in the
// staging database.
func (a *Adapter) qualified(r models.Relation) models.Relation {
	if r.Database == "" && a.stages != "" {
		r.Database = a.catalog
	}
	return r
}

// openError turns DuckDB's lock conflict into an *adapters.LockedError.
func openError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "Could not set lock on file") || strings.Contains(msg, "Conflicting lock") {
		return &adapters.LockedError{What: path, Holder: describeHolder(path, msg), Err: err}
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// Dialect returns DuckDB's dialect.
func (a *Adapter) Dialect() models.Dialect { return a.d }

// Info describes DuckDB's guarantees.
func (a *Adapter) Info() adapters.Info { return Capabilities() }

// Capabilities describes what the adapter guarantees, without a connection.
func Capabilities() adapters.Info {
	return adapters.Info{
		Name:               "duckdb",
		Guarantee:          "atomic: each swap is one transaction (delete window, insert from stage, ledger rows); a crash leaves every partition entirely old or entirely new",
		MultiTable:         true,
		DefaultConcurrency: 2,
	}
}

// DB returns the underlying database, for tests and benchmarks.
func (a *Adapter) DB() *sql.DB { return a.db }

// Close closes the database and removes the lock note.
func (a *Adapter) Close() error {
	a.holder.remove()
	return a.db.Close()
}

// Transient reports whether err is a transaction conflict or a lost
// connection, which a retry may get past.
func (a *Adapter) Transient(err error) bool {
	if transient, known := adapters.KnownTransience(err); known {
		return transient
	}
	var de *duckdb.Error
	if errors.As(err, &de) {
		switch de.Type {
		case duckdb.ErrorTypeTransaction, duckdb.ErrorTypeConnection, duckdb.ErrorTypeNetwork, duckdb.ErrorTypeHTTP:
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "Conflict on tuple deletion") || strings.Contains(msg, "write-write conflict") ||
		strings.Contains(msg, "TransactionContext Error")
}

// exec runs statements in order in one transaction and commits only if
// every one succeeded. duckdb-go may report a nil Commit after a failed
// statement without committing anything, so errors are tracked here.
func (a *Adapter) exec(ctx context.Context, step string, stmts ...string) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return adapters.ExecFailed(step, "BEGIN", err)
	}
	for _, s := range stmts {
		a.log(s)
		if _, err := tx.ExecContext(ctx, s); err != nil {
			tx.Rollback()
			return adapters.ExecFailed(step, s, located(s, err))
		}
	}
	return adapters.ExecFailed(step, "COMMIT", tx.Commit())
}

// newName names a table of kind that run runID makes for target in the
// stage schema (adapters.StageName).
func (a *Adapter) newName(target models.Relation, kind, runID string) string {
	return adapters.StageName(target, kind, runID, fmt.Sprintf("%s%d", a.suffix, a.seq.Add(1)))
}

// ensureSchema creates schema once per adapter.
func (a *Adapter) ensureSchema(ctx context.Context, schema string) error {
	a.schemaMu.Lock()
	defer a.schemaMu.Unlock()
	if a.schemas[schema] {
		return nil
	}
	if err := a.run(ctx, "create", "CREATE SCHEMA IF NOT EXISTS "+a.d.QuoteIdent(schema)); err != nil {
		return err
	}
	if a.schemas == nil {
		a.schemas = map[string]bool{}
	}
	a.schemas[schema] = true
	return nil
}

func (a *Adapter) tableExists(ctx context.Context, r models.Relation) (bool, error) {
	var n int
	err := a.db.QueryRowContext(ctx,
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND "+catalogIs(a.d, r),
		r.Schema, r.Name).Scan(&n)
	return n > 0, err
}

// catalogIs is the condition on information_schema's table_catalog that
// keeps r's own catalog: the database file's unless r names another. A
// target read through --defer is attached beside it, often with the same
// schemas.
func catalogIs(d Dialect, r models.Relation) string {
	return catalogColumnIs(d, "table_catalog", r)
}

// databaseIs is catalogIs for the duckdb_tables() family of functions,
// whose catalog column is database_name.
func databaseIs(d Dialect, r models.Relation) string {
	return catalogColumnIs(d, "database_name", r)
}

func catalogColumnIs(d Dialect, column string, r models.Relation) string {
	if r.Database != "" {
		return column + " = " + d.QuoteString(r.Database)
	}
	return column + " = current_database()"
}

func (a *Adapter) log(sql string) {
	if a.cfg.Log != nil {
		a.cfg.Log(sql)
	}
}

// run executes one statement of step outside a transaction.
func (a *Adapter) run(ctx context.Context, step, sql string) error {
	a.log(sql)
	_, err := a.db.ExecContext(ctx, sql)
	return adapters.ExecFailed(step, sql, located(sql, err))
}

// engineVersion returns the version of the DuckDB library this binary
// links, such as v1.5.0, from an in-memory database.
func engineVersion(ctx context.Context) (string, error) {
	a, err := Open(ctx, Config{ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer a.Close()
	var v string
	err = a.db.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	return v, err
}
