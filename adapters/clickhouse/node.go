package clickhouse

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// node is one ClickHouse server as refill talks to it: a pool of
// connections, what the server is and what it said of its tables, and the
// primitives every layout builds on (statements, table and parts info,
// the one-server swap). An Adapter drives the node of its DSN and, on a
// cluster, one node per server of the cluster (cluster.go); a node knows
// nothing of the layout its driver plays.
type node struct {
	db     *sql.DB
	cfg    Config
	d      Dialect
	server Server
	// addr is the server's host:port, which messages name.
	addr string

	// locks serializes swaps per target table: two concurrent swaps into
	// one physical partition (say, two days of one month) would each
	// replace the partition with their own copy and lose the other's rows.
	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
	// databases remembers the databases known to exist.
	dbMu      sync.Mutex
	databases map[string]bool
	// tables and described keep what the server said about tables and
	// queries (see table and describe).
	tablesMu  sync.Mutex
	tables    map[string]*tableInfo // nil: the table does not exist
	described map[string][]column
	// current maps a replicated table to the run in which this server's
	// replica of it last applied what the other replicas wrote, unless a
	// swap of that run on another replica may have written since (see
	// catchUp).
	current map[string]string

	seq    atomic.Int64
	suffix string // unique per node: stage names and query ids

	// dsnSettings are the settings the DSN gives every query.
	dsnSettings clickhouse.Settings
	// settings, when set, adds the settings every statement of the node's
	// driver needs (a cluster's coordinator: see replicatedCluster).
	settings func(s clickhouse.Settings, write bool)
}

// newNode returns a node on db at addr, before it knows the server.
func newNode(db *sql.DB, cfg Config, addr string) *node {
	b := make([]byte, 3)
	rand.Read(b)
	return &node{db: db, cfg: cfg, addr: addr, suffix: hex.EncodeToString(b), tables: map[string]*tableInfo{}, described: map[string][]column{}, current: map[string]string{}}
}

// ensureDatabase creates database on the server once per node.
func (n *node) ensureDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	return n.ensureDatabaseWith(ctx, database, func() error {
		return n.exec(ctx, tag, "CREATE DATABASE IF NOT EXISTS "+n.d.QuoteIdent(database))
	})
}

// ensureDatabaseWith runs create once per node for database, unless it
// is known to exist.
func (n *node) ensureDatabaseWith(ctx context.Context, database string, create func() error) error {
	n.dbMu.Lock()
	defer n.dbMu.Unlock()
	if n.databases[database] {
		return nil
	}
	if err := create(); err != nil {
		return err
	}
	if n.databases == nil {
		n.databases = map[string]bool{}
	}
	n.databases[database] = true
	return nil
}

// lock returns the swap mutex of target.
func (n *node) lock(target models.Relation) *sync.Mutex {
	n.locksMu.Lock()
	defer n.locksMu.Unlock()
	if n.locks == nil {
		n.locks = map[string]*sync.Mutex{}
	}
	k := target.String()
	if n.locks[k] == nil {
		n.locks[k] = &sync.Mutex{}
	}
	return n.locks[k]
}

// tableName returns a fresh name for a table of kind (adapters.KindStage
// or KindSwap) that run runID makes for target, so CleanStages finds it
// after a crash (adapters.StageName).
func (n *node) tableName(target models.Relation, kind, runID string) models.Relation {
	return models.Relation{Schema: n.cfg.StageSchema,
		Name: adapters.StageName(target, kind, runID, fmt.Sprintf("%s%d", n.suffix, n.seq.Add(1)))}
}

func (n *node) log(sql string) {
	if n.cfg.Log != nil {
		n.cfg.Log(sql)
	}
}

// queryID names one statement for system.query_log and system.processes:
// refill-<run>-<model>-<partition>-<step>-<adapter><seq>, with every
// character outside [A-Za-z0-9._:-] replaced by _. The adapter's random
// suffix and sequence keep it unique, as the server requires of running
// queries.
func (n *node) queryID(tag adapters.Tag) string {
	parts := []string{"refill"}
	for _, p := range []string{tag.RunID, tag.Model, tag.Partition, tag.Step} {
		if p != "" {
			if len(p) > 64 {
				p = p[:64]
			}
			parts = append(parts, p)
		}
	}
	parts = append(parts, fmt.Sprintf("%s%d", n.suffix, n.seq.Add(1)))
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			return r
		}
		return '_'
	}, strings.Join(parts, "-"))
}

// statementContext tags one statement: its query_id always, and
// log_comment (a JSON object) on servers that know the setting. Values
// are read in UTC, so a Date is midnight UTC whatever the server's zone.
// Writes may create any number of partitions in one INSERT (the stage of
// a batch, a swap table): max_partitions_per_insert_block is lifted.
func (n *node) statementContext(ctx context.Context, tag adapters.Tag, write bool) context.Context {
	opts := []clickhouse.QueryOption{clickhouse.WithQueryID(n.queryID(tag)), clickhouse.WithUserLocation(time.UTC)}
	settings := clickhouse.Settings{}
	if write && n.server.partitionLimit {
		settings["max_partitions_per_insert_block"] = 0
	}
	if n.server.LogComment {
		settings["log_comment"] = tag.JSON(0)
	}
	if n.settings != nil {
		n.settings(settings, write)
	}
	if extra, ok := ctx.Value(settingsKey{}).(clickhouse.Settings); ok {
		for k, v := range extra {
			settings[k] = v
		}
	}
	if len(settings) > 0 {
		opts = append(opts, clickhouse.WithSettings(settings))
	}
	return clickhouse.Context(ctx, opts...)
}

// withConn runs fn on a connection of its own and discards the connection
// if the server raised an exception. With 18.16, a query the server
// rejects while parsing can leave the client's end-of-data packet unread,
// and the connection then answers the next statement with "Unexpected
// packet Data received from client"; a fresh connection is cheap.
func (n *node) withConn(ctx context.Context, fn func(*sql.Conn) error) error {
	conn, err := n.db.Conn(ctx)
	if err != nil {
		return err
	}
	err = fn(conn)
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
	return err
}

// exec runs one statement.
func (n *node) exec(ctx context.Context, tag adapters.Tag, stmt string) error {
	n.log(stmt)
	err := n.withConn(ctx, func(c *sql.Conn) error {
		_, err := c.ExecContext(n.statementContext(ctx, tag, true), stmt)
		return located(stmt, err)
	})
	return adapters.ExecFailed(tag.Step, stmt, err)
}

// execAll runs statements in order, stopping at the first error.
func (n *node) execAll(ctx context.Context, tag adapters.Tag, stmts []string) error {
	for _, s := range stmts {
		if err := n.exec(ctx, tag, s); err != nil {
			return err
		}
	}
	return nil
}

// query runs a query and reads its rows, normalized (see normalizeRows).
func (n *node) query(ctx context.Context, tag adapters.Tag, q string) (*adapters.Result, error) {
	n.log(q)
	var res *adapters.Result
	err := n.withConn(ctx, func(c *sql.Conn) error {
		rows, err := c.QueryContext(n.statementContext(ctx, tag, false), q)
		if err != nil {
			return located(q, err)
		}
		res, err = sqlkit.ScanRowsFunc(rows, normalize)
		return err
	})
	return res, adapters.ExecFailed(tag.Step, q, err)
}

// table returns what the server knows about r, or nil if it does not
// exist. It asks about r alone (EXISTS, SHOW CREATE TABLE, DESCRIBE):
// on 18.16 a query of system.tables fails with "Table ... doesn't exist"
// when any table of the server is dropped while it runs.
//
// The answer is kept for the adapter's life (one refill command, during
// which a lease keeps other runs off the tables it writes); everything
// that changes a table through the adapter forgets it.
func (n *node) table(ctx context.Context, tag adapters.Tag, r models.Relation) (*tableInfo, error) {
	k := r.String()
	n.tablesMu.Lock()
	t, ok := n.tables[k]
	n.tablesMu.Unlock()
	if ok {
		return t, nil
	}
	t, err := n.readTable(ctx, tag, r)
	if err != nil {
		return nil, err
	}
	n.tablesMu.Lock()
	n.tables[k] = t
	n.tablesMu.Unlock()
	return t, nil
}

// forget drops what table and catchUp learned about r.
func (n *node) forget(r models.Relation) {
	k := n.resolve(r).String()
	n.tablesMu.Lock()
	delete(n.tables, k)
	delete(n.current, k)
	n.tablesMu.Unlock()
}

func (n *node) readTable(ctx context.Context, tag adapters.Tag, r models.Relation) (*tableInfo, error) {
	if ok, err := n.exists(ctx, tag, r); err != nil || !ok {
		return nil, err
	}
	q := r.Quote(n.d)
	res, err := n.query(ctx, tag, "SHOW CREATE TABLE "+q)
	if err != nil || len(res.Rows) == 0 {
		return nil, err
	}
	create := fmt.Sprint(res.Rows[0][0])
	t := &tableInfo{Engine: engineOf(create), EngineClause: engineClause(create), PartitionKey: partitionKey(create)}
	if res, err = n.query(ctx, tag, "DESCRIBE TABLE "+q); err != nil {
		return nil, err
	}
	for _, row := range res.Rows {
		t.Columns = append(t.Columns, column{Name: fmt.Sprint(row[0]), Type: fmt.Sprint(row[1]), DefaultKind: fmt.Sprint(row[2]),
			Default: fmt.Sprint(row[3])})
	}
	return t, nil
}

// stageTable is readTable of a staging table, which must exist.
func (n *node) stageTable(ctx context.Context, tag adapters.Tag, r models.Relation) (*tableInfo, error) {
	t, err := n.readTable(ctx, tag, r)
	if err == nil && t == nil {
		err = stageGone(r)
	}
	return t, err
}

// exists reports whether table r exists (false if its database does not).
func (n *node) exists(ctx context.Context, tag adapters.Tag, r models.Relation) (bool, error) {
	res, err := n.query(ctx, tag, "EXISTS TABLE "+r.Quote(n.d))
	return err == nil && len(res.Rows) == 1 && adapters.Int(res.Rows[0][0]) == 1, err
}

// tablesWithPrefix lists the tables of database whose names start with
// prefix, from system.columns, which (unlike system.tables on 18.16)
// skips tables dropped while it runs.
func (n *node) tablesWithPrefix(ctx context.Context, tag adapters.Tag, database, prefix string) ([]string, error) {
	res, err := n.query(ctx, tag, fmt.Sprintf("SELECT DISTINCT table FROM system.columns WHERE database = %s AND startsWith(table, %s) ORDER BY table",
		n.d.QuoteString(database), n.d.QuoteString(prefix)))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, row := range res.Rows {
		if name := fmt.Sprint(row[0]); strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names, nil
}

// describe returns the columns query returns, without running it. The
// runner describes a unit's query and then stages it: the last few
// answers are kept.
func (n *node) describe(ctx context.Context, tag adapters.Tag, query string) ([]column, error) {
	n.tablesMu.Lock()
	cols, ok := n.described[query]
	n.tablesMu.Unlock()
	if ok {
		return cols, nil
	}
	res, err := n.query(ctx, tag, "DESCRIBE TABLE "+subquery(query))
	if err != nil {
		return nil, err
	}
	cols = make([]column, len(res.Rows))
	for i, row := range res.Rows {
		cols[i] = column{Name: fmt.Sprint(row[0]), Type: fmt.Sprint(row[1])}
	}
	n.tablesMu.Lock()
	if len(n.described) >= describedKept {
		clear(n.described)
	}
	n.described[query] = cols
	n.tablesMu.Unlock()
	return cols, nil
}

// schema returns r's database, defaulting to Config.Schema.
func (n *node) schema(r models.Relation) string {
	if r.Schema == "" {
		return n.cfg.Schema
	}
	return r.Schema
}

// drop drops table r if it exists, even when ctx is cancelled; errors are
// ignored (CleanStages retries after a crash).
func (n *node) drop(ctx context.Context, tag adapters.Tag, r models.Relation) {
	n.exec(context.WithoutCancel(ctx), tag, "DROP TABLE IF EXISTS "+r.Quote(n.d))
	n.forget(r)
}

// cleanStagesHere drops the stages and swap tables of runs dead reports on
// a's server.
func (n *node) cleanStagesHere(ctx context.Context, dead func(runToken string) bool) error {
	tag := adapters.Tag{Step: "clean"}
	names, err := n.tablesWithPrefix(ctx, tag, n.cfg.StageSchema, "")
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if token, ok := adapters.StageRun(name); !ok || !dead(token) {
			continue
		}
		rel := models.Relation{Schema: n.cfg.StageSchema, Name: name}
		if err := n.exec(ctx, tag, "DROP TABLE IF EXISTS "+rel.Quote(n.d)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// databaseExists reports whether database exists on the server.
func (n *node) databaseExists(ctx context.Context, tag adapters.Tag, database string) (bool, error) {
	res, err := n.query(ctx, tag, "SELECT count() FROM system.databases WHERE name = "+n.d.QuoteString(database))
	return err == nil && adapters.Int(res.Rows[0][0]) > 0, err
}

// syncReplica waits until this server's replica of table has applied
// everything ZooKeeper's log holds for it.
func (n *node) syncReplica(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	return n.exec(ctx, tag, "SYSTEM SYNC REPLICA "+table.Quote(n.d))
}

// catchUp makes this server's replica of table apply what the other
// replicas wrote before its partitions are read for a swap, once per run:
// while the run holds its lease on the table, only its own swaps change
// it, and a swap on another replica marks this one behind (see behind).
// Without a run, it syncs every time.
func (n *node) catchUp(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	k := n.resolve(table).String()
	n.tablesMu.Lock()
	done := tag.RunID != "" && n.current[k] == tag.RunID
	n.tablesMu.Unlock()
	if done {
		return nil
	}
	if err := n.syncReplica(ctx, tag, table); err != nil {
		return err
	}
	if tag.RunID != "" {
		n.tablesMu.Lock()
		n.current[k] = tag.RunID
		n.tablesMu.Unlock()
	}
	return nil
}

// behind notes that another replica may have written into table since
// this one last caught up.
func (n *node) behind(table models.Relation) {
	n.tablesMu.Lock()
	delete(n.current, n.resolve(table).String())
	n.tablesMu.Unlock()
}

// resolve fills in r's default database.
func (n *node) resolve(r models.Relation) models.Relation {
	r.Schema = n.schema(r)
	return r
}
