package clickhouse

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Config says which server to use and how.
type Config struct {
	// DSN is a native-protocol URL such as
	// clickhouse://user:password@127.0.0.1:9000/default?dial_timeout=5s
	// (parsed by clickhouse.ParseDSN). Its database is the session's
	// default database. The DSN never appears in errors or logs.
	DSN string
	// Schema is the database of top-level models; it defaults to the
	// DSN's database, or "default".
	Schema string
	// LedgerSchema and StageSchema are databases; they default to refill
	// and refill_stage.
	LedgerSchema string
	StageSchema  string
	// ReadOnly says the adapter serves a command that never writes (plan,
	// status): it keeps no ledger summaries (summaries.go).
	ReadOnly bool
	// Log, when set, receives every statement before it runs.
	Log func(sql string)
	// Connector, when set, receives the driver's connector and returns the
	// one to use instead: tests put a recorder there (adapters/recorder).
	Connector func(driver.Connector) driver.Connector
	// FlushAfter bounds how long a publication's ledger records wait to be
	// written with others' (default one second); the end of a run writes
	// them in any case.
	FlushAfter time.Duration
	// Cluster, when set, names the cluster (in the server's remote_servers)
	// on which refill creates replicated tables and its ledger, ON CLUSTER;
	// the DSN's server must be one of its nodes (see cluster.go).
	Cluster string
	// Layout is how a cluster's tables are laid out: LayoutReplicated (the
	// default: every node holds every row) or LayoutSharded (a Distributed
	// table over a replicated table per shard).
	Layout string
	// ShardingKey is the sharding key of the Distributed tables refill
	// creates under the sharded layout, unless a model's clickhouse: block
	// sets sharding_key (default DefaultShardingKey).
	ShardingKey string
}

// Adapter is refill's adapter for ClickHouse: the node of its DSN, and the
// role it plays to the tables it writes (roles.go), chosen once in Open:
// one server, or the coordinator of a cluster's nodes.
type Adapter struct {
	*node
	role role
	// deferred holds the ledger records of publications until Flush.
	deferred deferred
	version  atomic.Uint64 // the last ledger version written
	// ledgerSeen holds the ledger's tables this adapter saw exist or
	// created: they are not looked for again (a ledger dropped while a
	// command runs fails its next read rather than reading as empty).
	ledgerMu   sync.Mutex
	ledgerSeen map[string]bool
}

var (
	_ adapters.Adapter      = (*Adapter)(nil)
	_ adapters.Rebuilder    = (*Adapter)(nil)
	_ adapters.Seeder       = (*Adapter)(nil)
	_ adapters.StageCleaner = (*Adapter)(nil)
	_ adapters.Classifier   = (*Adapter)(nil)
)

// Server is what Open learned about the server.
type Server struct {
	Version string // as SELECT version() reports it, e.g. 18.16.1
	// LogComment is true when the server knows the log_comment setting
	// (added in 21.x; 18.16 lacks it) and the session may change settings;
	// statements then carry their tag as JSON in it.
	LogComment bool
	// ReadOnly is true for a user with readonly = 1, who may neither write
	// nor change settings.
	ReadOnly bool
	// partitionLimit is true when the server limits the partitions one
	// INSERT may write (max_partitions_per_insert_block; 18.16 has no
	// such limit).
	partitionLimit bool
	// nullableStringKeyCrash is true for servers that crash (a
	// segmentation fault, measured on 18.16) when a row is inserted into a
	// table whose partition key is computed from a Nullable(String) or
	// Nullable(FixedString) column (Nullable numbers and dates are fine).
	nullableStringKeyCrash bool
	// DateTimeCompare is true when comparing a DateTime with a Date
	// converts the Date, as current servers do. 18.16 compares the raw
	// numbers, so Stage refuses there windows whose literal type differs
	// from the partition column's.
	DateTimeCompare bool
	// stringSettings is true when the protocol sends settings as text
	// (servers since 19.11), so a query may set one whose value is a
	// string; to older servers clickhouse-go sends numbers only.
	stringSettings bool
	// zone is the server's time zone (of DateTime columns without one),
	// or nil if this machine does not know it.
	zone *time.Location
}

// Open connects to the server in cfg.DSN and checks it answers. Errors
// name the server's address but never the DSN or the password.
func Open(ctx context.Context, cfg Config) (*Adapter, error) {
	opts, err := ParseDSN(cfg.DSN)
	if err != nil {
		return nil, err
	}
	if cfg.Schema == "" {
		cfg.Schema = opts.Auth.Database
	}
	if cfg.Schema == "" {
		cfg.Schema = "default"
	}
	if cfg.LedgerSchema == "" {
		cfg.LedgerSchema = models.DefaultLedgerSchema
	}
	if cfg.StageSchema == "" {
		cfg.StageSchema = models.DefaultStageSchema
	}
	a := newAdapter(newNode(openDB(opts, cfg.Connector), cfg, opts.Addr[0]))
	a.dsnSettings = opts.Settings
	res, err := a.query(ctx, adapters.Tag{Step: "open"}, "SELECT version(), "+
		"(SELECT count() FROM system.settings WHERE name = 'log_comment'), "+
		"toDateTime('2024-01-02 05:00:00', 'UTC') < toDate('2024-01-03'), "+
		"(SELECT value FROM system.settings WHERE name = 'readonly'), "+
		"(SELECT count() FROM system.settings WHERE name = 'max_partitions_per_insert_block'), timezone()")
	if err != nil {
		a.db.Close()
		return nil, fmt.Errorf("connecting to ClickHouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	row := res.Rows[0]
	a.server = Server{Version: fmt.Sprint(row[0]), DateTimeCompare: adapters.Int(row[2]) == 1, ReadOnly: fmt.Sprint(row[3]) == "1",
		partitionLimit: adapters.Int(row[4]) > 0}
	if major, err := strconv.Atoi(strings.Split(a.server.Version, ".")[0]); err == nil && major < 19 {
		a.server.nullableStringKeyCrash = true
	}
	a.server.stringSettings = versionAtLeast(a.server.Version, 19, 11)
	a.server.LogComment = adapters.Int(row[1]) > 0 && !a.server.ReadOnly
	if zone, err := time.LoadLocation(fmt.Sprint(row[5])); err == nil {
		a.server.zone = zone
	}
	if cfg.Cluster != "" {
		if err := a.openCluster(ctx, opts); err != nil {
			a.Close()
			return nil, fmt.Errorf("ClickHouse at %s, cluster %s: %w", strings.Join(opts.Addr, ","), cfg.Cluster, err)
		}
	}
	return a, nil
}

// newAdapter returns an adapter driving n as one server.
func newAdapter(n *node) *Adapter {
	a := &Adapter{node: n}
	a.deferred.stages, a.deferred.gen = map[string]*held{}, 1
	a.role = single{a}
	return a
}

// ParseDSN parses a native-protocol DSN. Its errors never contain the DSN.
func ParseDSN(dsn string) (*clickhouse.Options, error) {
	if dsn == "" {
		return nil, errors.New("no ClickHouse DSN: set dsn, e.g. clickhouse://127.0.0.1:9000/default")
	}
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("invalid ClickHouse DSN: %v", err)
	}
	if opts.Protocol != clickhouse.Native {
		return nil, errors.New("invalid ClickHouse DSN: refill uses the native protocol (clickhouse://host:9000/database), not HTTP")
	}
	return opts, nil
}

// Dialect returns ClickHouse's dialect.
func (a *Adapter) Dialect() models.Dialect { return a.d }

// Info describes ClickHouse's guarantees, on the cluster if there is one.
func (a *Adapter) Info() adapters.Info {
	info := capabilities()
	info.Guarantee = a.role.guarantee()
	return info
}

// capabilities describes what the adapter guarantees, without a connection.
func capabilities() adapters.Info {
	return adapters.Info{
		Name: "clickhouse",
		Guarantee: "each physical partition is replaced atomically (ALTER TABLE ... REPLACE PARTITION), but a window spanning " +
			"several partitions is not; ledger records are written in batches after the swaps, and each stage is kept until its " +
			"records are, so after a crash the next run finds the stages and redoes their partitions and everything that read their old rows",
		MultiTable:         false,
		DefaultConcurrency: 4,
	}
}

// Server describes the server, as learned by Open.
func (a *Adapter) Server() Server { return a.server }

// DB returns the underlying pool, for tests.
func (a *Adapter) DB() *sql.DB { return a.db }

// Close closes the pool.
// Close writes the records of the publications not recorded yet (the
// runner flushes before it ends; this is for other callers) and closes
// the connections.
func (a *Adapter) Close() error {
	return errors.Join(a.Flush(context.Background()), a.db.Close(), a.role.close())
}

// ensureDatabase creates database, as the adapter's role does, once.
func (a *Adapter) ensureDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	return a.ensureDatabaseWith(ctx, database, func() error { return a.role.createDatabase(ctx, tag, database) })
}

// openDB opens the pool of connections opts describes, through connector
// when it is set (see Config.Connector).
func openDB(opts *clickhouse.Options, connector func(driver.Connector) driver.Connector) *sql.DB {
	if connector == nil {
		return clickhouse.OpenDB(opts)
	}
	db := sql.OpenDB(connector(clickhouse.Connector(opts)))
	// As clickhouse.OpenDB sets them, from the options' defaults.
	idle := opts.MaxIdleConns
	if idle <= 0 {
		idle = 5
	}
	db.SetMaxIdleConns(idle)
	if opts.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opts.MaxOpenConns)
	} else {
		db.SetMaxOpenConns(idle + 5)
	}
	if opts.ConnMaxLifetime > 0 {
		db.SetConnMaxLifetime(opts.ConnMaxLifetime)
	} else {
		db.SetConnMaxLifetime(time.Hour)
	}
	return db
}

// staleness is how stale a replica a query on a cluster may read through
// a Distributed table: one at most a second behind, unless the DSN says
// otherwise; with none, the query fails (ALL_REPLICAS_ARE_STALE, which is
// transient). A replica that was down and has not caught up with the
// swaps it missed is more than a second behind.
var staleness = clickhouse.Settings{
	"max_replica_delay_for_distributed_queries":          1,
	"fallback_to_stale_replicas_for_distributed_queries": 0,
}

type settingsKey struct{}

// withSettings returns ctx with settings for the statements run with it.
func withSettings(ctx context.Context, settings clickhouse.Settings) context.Context {
	return context.WithValue(ctx, settingsKey{}, settings)
}

// normalize is adapters.Normalize plus what it cannot know from the values
// alone: clickhouse-go hands Decimals to database/sql as strings, which
// become int64 or float64 here like other drivers' decimals.
func normalize(col *sql.ColumnType, v any) any {
	v = adapters.Normalize(v)
	if s, ok := v.(string); ok && strings.HasPrefix(baseType(col.DatabaseTypeName()), "Decimal") {
		return adapters.Normalize(stringer(s))
	}
	return v
}

type stringer string

func (s stringer) String() string { return string(s) }

// baseType strips Nullable(...) and LowCardinality(...) from a type name.
func baseType(t string) string {
	for _, w := range []string{"Nullable(", "LowCardinality("} {
		if strings.HasPrefix(t, w) && strings.HasSuffix(t, ")") {
			t = baseType(t[len(w) : len(t)-1])
		}
	}
	return t
}
