package clickhouse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// The ledger lives in ReplacingMergeTree tables: every write inserts a
// row with a larger version (VersionColumn), and reads take the latest row
// per key with FINAL, which is exact before background merges too. (Not
// argMax: it skips NULLs, so a NULL written over a value would read back
// as the old value.) Rows are written only with INSERT ... SELECT of
// literals (ledgerInsertStatements), which every server version accepts.
// DateTime holds whole seconds, so times are truncated to the second on
// write.

// VersionColumn is the ledger tables' extra column: the write's time in
// unix microseconds, strictly increasing within a process.
const VersionColumn = "version"

// ledgerKeys are the ORDER BY (replacing) keys of the ledger tables.
var ledgerKeys = map[string][]string{
	sqlkit.PartitionsTable: {"model", "partition_key"},
	sqlkit.RunsTable:       {"run_id"},
	sqlkit.LeasesTable:     {"table_name", "run_id"},
	sqlkit.VersionsTable:   {"model", "fingerprint"},
}

// ledgerTables are the ledger's tables, in the order they are created.
var ledgerTables = []string{sqlkit.PartitionsTable, sqlkit.RunsTable, sqlkit.LeasesTable, sqlkit.VersionsTable}

func ledgerColumns(table string) []sqlkit.Column {
	return map[string][]sqlkit.Column{sqlkit.PartitionsTable: sqlkit.PartitionColumns,
		sqlkit.RunsTable: sqlkit.RunColumns, sqlkit.LeasesTable: sqlkit.LeaseColumns,
		sqlkit.VersionsTable: sqlkit.VersionColumns}[table]
}

func (a *Adapter) ledgerTable(name string) models.Relation {
	return models.Relation{Schema: a.cfg.LedgerSchema, Name: name}
}

// ledgerStatements renders the DDL of the ledger, on cluster when it is
// not "": ON CLUSTER, each table replicated on every node.
func ledgerStatements(d Dialect, database, cluster string) []string {
	on := ""
	if cluster != "" {
		on = " ON CLUSTER " + d.QuoteIdent(cluster)
	}
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + d.QuoteIdent(database) + on}
	for _, table := range ledgerTables {
		var defs []string
		for _, c := range ledgerColumns(table) {
			typ := d.ColumnType(c.Type)
			if !c.NotNull {
				typ = nullableType(typ)
			}
			defs = append(defs, d.QuoteIdent(c.Name)+" "+typ)
		}
		defs = append(defs, d.QuoteIdent(VersionColumn)+" UInt64")
		keys := make([]string, len(ledgerKeys[table]))
		for i, k := range ledgerKeys[table] {
			keys[i] = d.QuoteIdent(k)
		}
		rel := models.Relation{Schema: database, Name: table}
		engine := "ReplacingMergeTree(" + d.QuoteIdent(VersionColumn) + ")"
		if cluster != "" {
			engine = fmt.Sprintf("ReplicatedReplacingMergeTree(%s, '{replica}', %s)", d.QuoteString(zkPath(false, rel, "")), d.QuoteIdent(VersionColumn))
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s (\n  %s\n) ENGINE = %s ORDER BY (%s)",
			rel.Quote(d), on, strings.Join(defs, ",\n  "), engine, strings.Join(keys, ", ")))
	}
	return stmts
}

// insertSelectStatements render rows of literals as INSERT INTO table
// (columns) SELECT ... UNION ALL SELECT ..., split so that no statement
// nears max_query_size (256 KiB) or max_ast_elements. Every value must be
// a literal of its column's type, or NULL.
func insertSelectStatements(d Dialect, table models.Relation, columns []string, rows [][]string) []string {
	const maxBytes, maxValues = 128 << 10, 10000
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = d.QuoteIdent(c)
	}
	head := fmt.Sprintf("INSERT INTO %s (%s)\n", table.Quote(d), strings.Join(names, ", "))
	var stmts []string
	var b strings.Builder
	n := 0
	for _, row := range rows {
		sel := "SELECT " + strings.Join(row, ", ")
		if n > 0 && (b.Len()+len(sel) > maxBytes || (n+1)*len(row) > maxValues) {
			stmts = append(stmts, b.String())
			b.Reset()
			n = 0
		}
		if n == 0 {
			// Every value of a statement's first SELECT gets its column's
			// name as an alias: unnamed, equal literals (a time in two
			// columns, one of them Nullable; a row count of 1 that other
			// rows leave NULL, and one attempt) make one ambiguous column
			// on 23.12 and later (ClickHouse issue #58098).
			aliased := make([]string, len(row))
			for i, v := range row {
				aliased[i] = v + " AS " + names[i]
			}
			sel = "SELECT " + strings.Join(aliased, ", ")
			b.WriteString(head)
		} else {
			b.WriteString("\nUNION ALL ")
		}
		b.WriteString(sel)
		n++
	}
	if n > 0 {
		stmts = append(stmts, b.String())
	}
	return stmts
}

// seconds truncates t to whole seconds, which DateTime holds.
func seconds(t time.Time) time.Time { return t.Truncate(time.Second) }

// ledgerInsertStatements render rows of constants (strings, numbers and
// NULL, as constants renders them) as INSERT INTO table (columns) SELECT
// c0, c1, ... FROM system.one ARRAY JOIN [...] AS c0, [...] AS c1, ...:
// an array of each column's values, which the server parses as one
// constant, where a UNION ALL of one SELECT per row is analyzed row by row
// (the 365 records of a year's batch took 140-190 ms on 18.16 and 230-360
// ms on 26 that way, against 8-13 and 17-31 ms as arrays). A column whose
// rows all hold the same value (a batch's model, state, run and
// fingerprint) is that value, not an array. Times stay arrays when there
// are several rows: whether two units' times fall in the same second is
// chance, and the statement's form should not be. The INSERT converts
// each value to its column's type: text to DateTime('UTC') in UTC. Split
// so that no statement nears max_query_size (256 KiB).
func ledgerInsertStatements(d Dialect, table models.Relation, columns []sqlkit.Column, rows [][]string) []string {
	const maxBytes = 128 << 10
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = d.QuoteIdent(c.Name)
	}
	head := fmt.Sprintf("INSERT INTO %s (%s)\n", table.Quote(d), strings.Join(names, ", "))
	var stmts []string
	render := func(part [][]string) {
		var selected, arrays []string
		values := make([]string, len(part))
		for i, c := range columns {
			same := len(part) == 1 || c.Type != models.TypeTimestamp
			for j, row := range part {
				values[j] = row[i]
				same = same && row[i] == part[0][i]
			}
			alias := fmt.Sprintf("c%d", i)
			// The last column stays an array when no other is one: ARRAY
			// JOIN makes the rows.
			if same && (len(arrays) > 0 || i < len(columns)-1) {
				selected = append(selected, part[0][i]+" AS "+alias)
				continue
			}
			selected = append(selected, alias)
			arrays = append(arrays, fmt.Sprintf("  [%s] AS %s", strings.Join(values, ", "), alias))
		}
		stmts = append(stmts, fmt.Sprintf("%sSELECT %s FROM system.one ARRAY JOIN\n%s", head, strings.Join(selected, ", "), strings.Join(arrays, ",\n")))
	}
	start, size := 0, len(head)
	for i, row := range rows {
		n := len(columns) * 2 // separators
		for _, v := range row {
			n += len(v)
		}
		if i > start && size+n > maxBytes {
			render(rows[start:i])
			start, size = i, len(head)
		}
		size += n
	}
	if start < len(rows) {
		render(rows[start:])
	}
	return stmts
}

// constants renders ledger values as constants only: times as text, which
// array literals may hold (function calls they may not).
type constants struct{ Dialect }

// Timestamp renders t, whole seconds in UTC, as text.
func (c constants) Timestamp(t time.Time) string {
	return c.QuoteString(t.UTC().Format(time.DateTime))
}

// recordStatements render the INSERTs of records, with versions from
// version.
func recordStatements(d Dialect, database string, records []adapters.Record, version func() uint64) []string {
	rows := make([][]string, len(records))
	for i, r := range records {
		r.WindowStart, r.WindowEnd, r.StartedAt = seconds(r.WindowStart), seconds(r.WindowEnd), seconds(r.StartedAt)
		r.FinishedAt, r.PublishedAt = seconds(r.FinishedAt), seconds(r.PublishedAt)
		rows[i] = append(sqlkit.RecordValues(constants{d}, r), fmt.Sprint(version()))
	}
	return ledgerInsertStatements(d, models.Relation{Schema: database, Name: sqlkit.PartitionsTable},
		withVersion(sqlkit.PartitionColumns), rows)
}

// runStatement renders the INSERT of run's record.
func runStatement(d Dialect, database string, run *adapters.Run, version uint64) string {
	r := *run
	r.StartedAt, r.FinishedAt = seconds(r.StartedAt), seconds(r.FinishedAt)
	return ledgerInsertStatements(d, models.Relation{Schema: database, Name: sqlkit.RunsTable},
		withVersion(sqlkit.RunColumns), [][]string{append(sqlkit.RunValues(constants{d}, &r), fmt.Sprint(version))})[0]
}

// leaseStatements render the INSERTs of leases' rows.
func leaseStatements(d Dialect, database string, leases []adapters.Lease, version func() uint64) []string {
	rows := make([][]string, len(leases))
	for i, l := range leases {
		l.AcquiredAt, l.HeartbeatAt, l.ExpiresAt = seconds(l.AcquiredAt), seconds(l.HeartbeatAt), seconds(l.ExpiresAt)
		rows[i] = append(sqlkit.LeaseValues(constants{d}, l), fmt.Sprint(version()))
	}
	return ledgerInsertStatements(d, models.Relation{Schema: database, Name: sqlkit.LeasesTable},
		withVersion(sqlkit.LeaseColumns), rows)
}

func withVersion(cols []sqlkit.Column) []sqlkit.Column {
	return append(slices.Clip(cols), sqlkit.Column{Name: VersionColumn, Type: models.TypeInt, NotNull: true})
}

// nextVersion returns a ledger version: the time in unix microseconds,
// or one more than the last version if the clock has not moved on.
func (a *Adapter) nextVersion() uint64 {
	for {
		last := a.version.Load()
		v := uint64(time.Now().UnixMicro())
		if v <= last {
			v = last + 1
		}
		if a.version.CompareAndSwap(last, v) {
			return v
		}
	}
}

// SetupLedger creates the ledger database and tables if missing; on a
// cluster they are replicated on every node.
func (a *Adapter) SetupLedger(ctx context.Context) error {
	if err := a.role.setupLedger(ctx, adapters.Tag{Step: "ledger"}); err != nil {
		return err
	}
	a.ledgerKnow(ledgerTables...)
	return nil
}

// ledgerKnown reports whether every one of tables is known to exist.
func (a *Adapter) ledgerKnown(tables ...string) bool {
	a.ledgerMu.Lock()
	defer a.ledgerMu.Unlock()
	for _, t := range tables {
		if !a.ledgerSeen[t] {
			return false
		}
	}
	return true
}

// ledgerKnow records that tables exist.
func (a *Adapter) ledgerKnow(tables ...string) {
	a.ledgerMu.Lock()
	defer a.ledgerMu.Unlock()
	if a.ledgerSeen == nil {
		a.ledgerSeen = map[string]bool{}
	}
	for _, t := range tables {
		a.ledgerSeen[t] = true
	}
}

// readLedger runs query, which reads ledger table table, once the role
// has readied it (on a cluster, the coordinator's replica catches up).
func (a *Adapter) readLedger(ctx context.Context, tag adapters.Tag, table, query string) (*adapters.Result, error) {
	if err := a.role.readingLedger(ctx, tag, a.ledgerTable(table)); err != nil {
		return nil, err
	}
	return a.query(ctx, tag, query)
}

// ledgerExists reports whether the ledger's table exists, without
// creating anything.
func (a *Adapter) ledgerExists(ctx context.Context, table string) (bool, error) {
	if a.ledgerKnown(table) {
		return true, nil
	}
	ok, err := a.exists(ctx, adapters.Tag{Step: "ledger"}, a.ledgerTable(table))
	if ok {
		a.ledgerKnow(table)
	}
	return ok, err
}

// latest renders the query for the latest row of each key of table among
// the rows matching where, which may test key columns only (FINAL merges
// the rows of a key after where has filtered them).
func (a *Adapter) latest(table, where string) string {
	return fmt.Sprintf("SELECT %s FROM %s FINAL WHERE %s", sqlkit.ColumnNames(a.d, ledgerColumns(table)),
		a.ledgerTable(table).Quote(a.d), where)
}

// Partitions returns the current record of every partition of the named
// models, ordered by model, window and key. A ledger that does not exist
// yet holds none, and nothing is created.
func (a *Adapter) Partitions(ctx context.Context, names []string) ([]adapters.Record, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.PartitionsTable); err != nil || !ok || len(names) == 0 {
		return nil, err
	}
	list, _ := models.Literal(a.d, names)
	res, err := a.readLedger(ctx, adapters.Tag{Step: "ledger"}, sqlkit.PartitionsTable, a.latest(sqlkit.PartitionsTable, "`model` IN "+list)+" ORDER BY `model`, `window_start`, `partition_key`")
	if err != nil {
		return nil, err
	}
	return sqlkit.RecordsFromResult(res)
}

// RecordPartitions writes records, replacing earlier records of the same
// partitions. Times are stored to the second.
func (a *Adapter) RecordPartitions(ctx context.Context, records []adapters.Record) error {
	return a.writeRecords(ctx, adapters.Tag{Step: "ledger"}, records)
}

func (a *Adapter) writeRecords(ctx context.Context, tag adapters.Tag, records []adapters.Record) error {
	if len(records) == 0 {
		return nil
	}
	return a.execAll(ctx, tag, recordStatements(a.d, a.cfg.LedgerSchema, records, a.nextVersion))
}

// SaveRun inserts or replaces run's record. Times are stored to the
// second.
func (a *Adapter) SaveRun(ctx context.Context, run *adapters.Run) error {
	return a.exec(ctx, adapters.Tag{RunID: run.ID, Step: "ledger"}, runStatement(a.d, a.cfg.LedgerSchema, run, a.nextVersion()))
}

// LoadRun returns the run with id, or an error wrapping
// adapters.ErrRunNotFound.
func (a *Adapter) LoadRun(ctx context.Context, id string) (*adapters.Run, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.RunsTable); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s (the ledger is empty)", adapters.ErrRunNotFound, id)
	}
	res, err := a.readLedger(ctx, adapters.Tag{RunID: id, Step: "ledger"}, sqlkit.RunsTable, a.latest(sqlkit.RunsTable, "`run_id` = "+a.d.QuoteString(id)))
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s", adapters.ErrRunNotFound, id)
	}
	return sqlkit.RunFromRow(res.Rows[0])
}

// leases returns the latest rows of the leases matching where (key
// columns only) that are live at now.
func (a *Adapter) leases(ctx context.Context, tag adapters.Tag, where string, now time.Time) ([]adapters.Lease, error) {
	res, err := a.readLedger(ctx, tag, sqlkit.LeasesTable, a.latest(sqlkit.LeasesTable, where))
	if err != nil {
		return nil, err
	}
	var out []adapters.Lease
	for _, row := range res.Rows {
		l, err := sqlkit.LeaseFromRow(row)
		if err != nil {
			return nil, err
		}
		if l.ExpiresAt.After(seconds(now)) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].AcquiredAt.Equal(out[j].AcquiredAt) {
			return out[i].AcquiredAt.Before(out[j].AcquiredAt)
		}
		if out[i].RunID != out[j].RunID {
			return out[i].RunID < out[j].RunID
		}
		return out[i].Table < out[j].Table
	})
	return out, nil
}

func (a *Adapter) writeLeases(ctx context.Context, tag adapters.Tag, leases []adapters.Lease) error {
	if len(leases) == 0 {
		return nil
	}
	return a.execAll(ctx, tag, leaseStatements(a.d, a.cfg.LedgerSchema, leases, a.nextVersion))
}

// released is the expiry of a released lease's tombstone row.
var released = time.Unix(0, 0).UTC()

// Claims of a lease, made without a transaction (see AcquireLease).
const (
	// claimWindow: of two claims whose acquired_at are less apart, neither
	// wins. Only claims made at once meet within it (a claim made after
	// another is visible is not made), so it is wide: a slow server
	// should not make a claim too slow to count (claimSlack).
	claimWindow = 30 * time.Second
	// claimSlack: a claim whose write ends later than this after
	// AcquireLease began is withdrawn and made again. 1 s (acquired_at is
	// a whole second) + claimSlack + the caller's delay must stay within
	// claimWindow.
	claimSlack = 20 * time.Second
	// claimRetries is how many times claims that collided are made again
	// (after 0.5 to 1.5 claimPause) before AcquireLease gives up.
	claimRetries = 3
	claimPause   = 200 * time.Millisecond
)

// AcquireLease takes l.Table for l.RunID without a transaction. A table
// another run claims is refused at once. Else it inserts a claim, then
// reads the table's claims live at l.AcquiredAt, and wins when every other
// was made claimWindow or more after its own. A loser replaces its claim
// with a tombstone, so a run that finds a claim of its own holds the table
// and may acquire it again (its acquired_at is kept).
//
// Why one winner: acquired_at is a whole second and is taken before the
// claim is written, so claims cannot be ordered by it. But a claim B
// written after a winner A read the claims has acquired_at at most
// 1 s + claimSlack (plus the caller's delay) before its write, which came
// after A's acquired_at: so A is within claimWindow of B, and B loses.
// Claims within claimWindow of each other all lose; each makes its claim
// again after a pause of its own (claimRetries times), when the first to
// claim again is seen by the others, and then gets a
// *adapters.LeaseHeldError. Expired claims are ignored. Clocks are
// assumed to be in sync.
func (a *Adapter) AcquireLease(ctx context.Context, l adapters.Lease) error {
	tag := adapters.Tag{RunID: l.RunID, Step: "lease"}
	where := "`table_name` = " + a.d.QuoteString(l.Table)
	for collisions := 0; ; {
		begun := time.Now()
		live, err := a.leases(ctx, tag, where, l.AcquiredAt)
		if err != nil {
			return err
		}
		if own := slices.IndexFunc(live, func(c adapters.Lease) bool { return c.RunID == l.RunID }); own >= 0 {
			l.AcquiredAt = live[own].AcquiredAt
			return a.writeLeases(ctx, tag, []adapters.Lease{l})
		}
		if len(live) > 0 {
			return &adapters.LeaseHeldError{Held: live[0]}
		}
		if err := a.writeLeases(ctx, tag, []adapters.Lease{l}); err != nil {
			return err
		}
		took := time.Since(begun)
		tomb := l
		tomb.ExpiresAt = released
		rival := -1
		if took <= claimSlack {
			if live, err = a.leases(ctx, tag, where, l.AcquiredAt); err != nil {
				return err
			}
			own := seconds(l.AcquiredAt)
			rival = slices.IndexFunc(live, func(c adapters.Lease) bool {
				return c.RunID != l.RunID && c.AcquiredAt.Before(own.Add(claimWindow))
			})
			if rival < 0 {
				return nil
			}
		}
		// Too slow to count, or collided: withdrawn.
		if err := a.writeLeases(context.WithoutCancel(ctx), tag, []adapters.Lease{tomb}); err != nil {
			return err
		}
		if collisions++; collisions > claimRetries {
			if rival < 0 {
				return fmt.Errorf("claiming the lease on %s: each of %d claims took longer than %s to write", l.Table, collisions, claimSlack)
			}
			return &adapters.LeaseHeldError{Held: live[rival]}
		}
		// Claims that collided all lost: each tries again after its own
		// pause, and the first to claim then is seen by the others.
		pause := claimPause/2 + rand.N(claimPause)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		took = time.Since(begun)
		l.AcquiredAt, l.HeartbeatAt, l.ExpiresAt = l.AcquiredAt.Add(took), l.HeartbeatAt.Add(took), l.ExpiresAt.Add(took)
	}
}

// RenewLeases moves the expiry of every live lease of runID to expires,
// by writing newer rows.
func (a *Adapter) RenewLeases(ctx context.Context, runID string, now, expires time.Time) error {
	tag := adapters.Tag{RunID: runID, Step: "lease"}
	live, err := a.leases(ctx, tag, "`run_id` = "+a.d.QuoteString(runID), now)
	if err != nil {
		return err
	}
	for i := range live {
		live[i].HeartbeatAt, live[i].ExpiresAt = now, expires
	}
	return a.writeLeases(ctx, tag, live)
}

// ReleaseLeases drops every lease runID holds, by writing tombstones
// (expires_at 1970-01-01 00:00:00).
func (a *Adapter) ReleaseLeases(ctx context.Context, runID string) error {
	// Before the leases go, while no other run can take the tables.
	a.role.runEnded(ctx, runID)
	tag := adapters.Tag{RunID: runID, Step: "lease"}
	now := time.Now().UTC()
	// Every lease not yet released, expired or not.
	live, err := a.leases(ctx, tag, "`run_id` = "+a.d.QuoteString(runID), released)
	if err != nil {
		return err
	}
	for i := range live {
		live[i].HeartbeatAt, live[i].ExpiresAt = now, released
	}
	return a.writeLeases(ctx, tag, live)
}

// Runs returns the latest runs, newest first.
func (a *Adapter) Runs(ctx context.Context, limit int) ([]*adapters.Run, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.RunsTable); err != nil || !ok {
		return nil, err
	}
	res, err := a.readLedger(ctx, adapters.Tag{Step: "ledger"}, sqlkit.RunsTable, a.latest(sqlkit.RunsTable, "1 = 1")+fmt.Sprintf(" ORDER BY `started_at` DESC, `run_id` DESC LIMIT %d", limit))
	if err != nil {
		return nil, err
	}
	out := make([]*adapters.Run, 0, len(res.Rows))
	for _, row := range res.Rows {
		r, err := sqlkit.RunFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Leases returns every lease not released, expired or not.
func (a *Adapter) Leases(ctx context.Context) ([]adapters.Lease, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.LeasesTable); err != nil || !ok {
		return nil, err
	}
	return a.leases(ctx, adapters.Tag{Step: "ledger"}, "1 = 1", released)
}

// versionStatements render the INSERTs of versions.
func versionStatements(d Dialect, database string, versions []adapters.Version, version func() uint64) []string {
	rows := make([][]string, len(versions))
	for i, v := range versions {
		v.CreatedAt, v.AcceptedAt = seconds(v.CreatedAt), seconds(v.AcceptedAt)
		rows[i] = append(sqlkit.VersionValues(constants{d}, v), fmt.Sprint(version()))
	}
	return ledgerInsertStatements(d, models.Relation{Schema: database, Name: sqlkit.VersionsTable},
		withVersion(sqlkit.VersionColumns), rows)
}

// SaveVersions inserts versions, replacing those of the same model and
// fingerprint.
func (a *Adapter) SaveVersions(ctx context.Context, versions []adapters.Version) error {
	if len(versions) == 0 {
		return nil
	}
	return a.execAll(ctx, adapters.Tag{Step: "ledger"}, versionStatements(a.d, a.cfg.LedgerSchema, versions, a.nextVersion))
}

// Versions returns the versions of the named models.
func (a *Adapter) Versions(ctx context.Context, names []string) ([]adapters.Version, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.VersionsTable); err != nil || !ok || len(names) == 0 {
		return nil, err
	}
	list, _ := models.Literal(a.d, names)
	res, err := a.readLedger(ctx, adapters.Tag{Step: "ledger"}, sqlkit.VersionsTable, a.latest(sqlkit.VersionsTable, "`model` IN "+list)+" ORDER BY `model`, `created_at`")
	if err != nil {
		return nil, err
	}
	return sqlkit.VersionsFromResult(res)
}

var _ adapters.Pruner = (*Adapter)(nil)

// LedgerModels returns the models of which the ledger holds a record not
// removed (the latest record of each partition, FINAL).
func (a *Adapter) LedgerModels(ctx context.Context) ([]string, error) {
	if ok, err := a.ledgerExists(ctx, sqlkit.PartitionsTable); err != nil || !ok {
		return nil, err
	}
	res, err := a.readLedger(ctx, adapters.Tag{Step: "ledger"}, sqlkit.PartitionsTable,
		sqlkit.LedgerModelsSQL(a.d, a.ledgerTable(sqlkit.PartitionsTable).Quote(a.d), " FINAL"))
	if err != nil {
		return nil, err
	}
	return sqlkit.Strings(res), nil
}

// DropTable drops a model's table: on a cluster ON CLUSTER, with the
// shards' local tables under a sharded layout's Distributed table.
func (a *Adapter) DropTable(ctx context.Context, table models.Relation) error {
	tag := adapters.Tag{Step: "prune"}
	table = a.resolve(table)
	defer a.forget(table)
	return a.role.dropTable(ctx, tag, table)
}
