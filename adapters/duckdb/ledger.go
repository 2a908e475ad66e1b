package duckdb

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

func (a *Adapter) ledgerTable(name string) string {
	return models.Relation{Schema: a.cfg.LedgerSchema, Name: name}.Quote(a.d)
}

// ledgerStatements renders the DDL that creates the ledger.
func ledgerStatements(d Dialect, schema string) []string {
	return append([]string{"CREATE SCHEMA IF NOT EXISTS " + d.QuoteIdent(schema)}, sqlkit.LedgerTablesSQL(d, schema)...)
}

// SetupLedger creates the ledger schema and tables if missing. A run's
// plan has most often found them (ledgerHas), which saves a transaction of
// five statements.
func (a *Adapter) SetupLedger(ctx context.Context) error {
	known := true
	for _, t := range ledgerTables {
		_, ok := a.ledgerTables.Load(t)
		known = known && ok
	}
	if known {
		return nil
	}
	if err := a.exec(ctx, "ledger", ledgerStatements(a.d, a.cfg.LedgerSchema)...); err != nil {
		return err
	}
	for _, t := range ledgerTables {
		a.ledgerTables.Store(t, true)
	}
	return nil
}

// ledgerTables are the ledger's tables.
var ledgerTables = []string{sqlkit.PartitionsTable, sqlkit.RunsTable, sqlkit.LeasesTable, sqlkit.VersionsTable}

func (a *Adapter) ledgerExists(ctx context.Context) (bool, error) {
	return a.ledgerHas(ctx, sqlkit.PartitionsTable)
}

// ledgerHas reports whether the ledger has the table name. refill never
// drops a ledger table, so the tables found are remembered: a plan asks
// before each read of the ledger, and duckdb_tables() lists every table
// of the warehouse.
func (a *Adapter) ledgerHas(ctx context.Context, name string) (bool, error) {
	if _, ok := a.ledgerTables.Load(name); ok {
		return true, nil
	}
	rows, err := a.db.QueryContext(ctx, "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND "+databaseIs(a.d, models.Relation{}), a.cfg.LedgerSchema)
	if err != nil {
		return false, err
	}
	res, err := sqlkit.ScanRows(rows)
	if err != nil {
		return false, err
	}
	found := sqlkit.Strings(res)
	for _, t := range found {
		a.ledgerTables.Store(t, true)
	}
	return slices.Contains(found, name), nil
}

// Partitions returns the records of the named models.
func (a *Adapter) Partitions(ctx context.Context, names []string) ([]adapters.Record, error) {
	if ok, err := a.ledgerExists(ctx); err != nil || !ok || len(names) == 0 {
		return nil, err
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = a.d.QuoteString(n)
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE model IN (%s)",
		sqlkit.ColumnNames(a.d, sqlkit.PartitionColumns), a.ledgerTable(sqlkit.PartitionsTable), strings.Join(quoted, ", "))
	a.log(q)
	rows, err := a.db.QueryContext(ctx, q)
	if err != nil {
		return nil, adapters.ExecFailed("ledger", q, err)
	}
	return sqlkit.ScanRecords(rows)
}

// RecordPartitions replaces the records of records' partitions.
func (a *Adapter) RecordPartitions(ctx context.Context, records []adapters.Record) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.exec(ctx, "ledger", recordStatements(a.d, a.cfg.LedgerSchema, records)...)
}

// SaveRun inserts or replaces run's record.
func (a *Adapter) SaveRun(ctx context.Context, run *adapters.Run) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	t := a.ledgerTable(sqlkit.RunsTable)
	return a.exec(ctx, "ledger",
		fmt.Sprintf("DELETE FROM %s WHERE run_id = %s", t, a.d.QuoteString(run.ID)),
		fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t, sqlkit.ColumnNames(a.d, sqlkit.RunColumns),
			strings.Join(sqlkit.RunValues(a.d, run), ", ")))
}

// LoadRun returns the run with id.
func (a *Adapter) LoadRun(ctx context.Context, id string) (*adapters.Run, error) {
	if ok, err := a.ledgerExists(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s (the ledger is empty)", adapters.ErrRunNotFound, id)
	}
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE run_id = %s",
		sqlkit.ColumnNames(a.d, sqlkit.RunColumns), a.ledgerTable(sqlkit.RunsTable), a.d.QuoteString(id)), adapters.Tag{})
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s", adapters.ErrRunNotFound, id)
	}
	return sqlkit.RunFromRow(res.Rows[0])
}

// AcquireLease takes l.Table for l.RunID. While refill holds the database
// file, no other process can write it, so a lease held by another process
// is left over from one that died, and is taken over.
func (a *Adapter) AcquireLease(ctx context.Context, l adapters.Lease) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	t := a.ledgerTable(sqlkit.LeasesTable)
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE table_name = %s",
		sqlkit.ColumnNames(a.d, sqlkit.LeaseColumns), t, a.d.QuoteString(l.Table)), adapters.Tag{})
	if err != nil {
		return err
	}
	for _, row := range res.Rows {
		held, err := sqlkit.LeaseFromRow(row)
		if err != nil {
			return err
		}
		ours := held.RunID == l.RunID
		sameProcess := held.PID == os.Getpid() && held.Host == l.Host
		if !ours && sameProcess && held.ExpiresAt.After(l.AcquiredAt) {
			return &adapters.LeaseHeldError{Held: held}
		}
	}
	return a.exec(ctx, "ledger",
		fmt.Sprintf("DELETE FROM %s WHERE table_name = %s", t, a.d.QuoteString(l.Table)),
		fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t, sqlkit.ColumnNames(a.d, sqlkit.LeaseColumns),
			strings.Join(sqlkit.LeaseValues(a.d, l), ", ")))
}

// RenewLeases extends runID's leases.
func (a *Adapter) RenewLeases(ctx context.Context, runID string, now, expires time.Time) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.run(ctx, "lease", fmt.Sprintf("UPDATE %s SET heartbeat_at = %s, expires_at = %s WHERE run_id = %s",
		a.ledgerTable(sqlkit.LeasesTable), a.d.Timestamp(now), a.d.Timestamp(expires), a.d.QuoteString(runID)))
}

// ReleaseLeases drops runID's leases.
func (a *Adapter) ReleaseLeases(ctx context.Context, runID string) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.run(ctx, "lease", fmt.Sprintf("DELETE FROM %s WHERE run_id = %s",
		a.ledgerTable(sqlkit.LeasesTable), a.d.QuoteString(runID)))
}

// Runs returns the latest runs, newest first.
func (a *Adapter) Runs(ctx context.Context, limit int) ([]*adapters.Run, error) {
	if ok, err := a.ledgerHas(ctx, sqlkit.RunsTable); err != nil || !ok {
		return nil, err
	}
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY started_at DESC, run_id DESC LIMIT %d",
		sqlkit.ColumnNames(a.d, sqlkit.RunColumns), a.ledgerTable(sqlkit.RunsTable), limit), adapters.Tag{})
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

// Leases returns every lease row.
func (a *Adapter) Leases(ctx context.Context) ([]adapters.Lease, error) {
	if ok, err := a.ledgerHas(ctx, sqlkit.LeasesTable); err != nil || !ok {
		return nil, err
	}
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY table_name",
		sqlkit.ColumnNames(a.d, sqlkit.LeaseColumns), a.ledgerTable(sqlkit.LeasesTable)), adapters.Tag{})
	if err != nil {
		return nil, err
	}
	out := make([]adapters.Lease, 0, len(res.Rows))
	for _, row := range res.Rows {
		l, err := sqlkit.LeaseFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// SaveVersions inserts versions, replacing those of the same model and
// fingerprint, in one transaction.
func (a *Adapter) SaveVersions(ctx context.Context, versions []adapters.Version) error {
	if len(versions) == 0 {
		return nil
	}
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.exec(ctx, "ledger", versionStatements(a.d, a.cfg.LedgerSchema, versions)...)
}

// versionStatements render SaveVersions.
func versionStatements(d Dialect, ledgerSchema string, versions []adapters.Version) []string {
	t := models.Relation{Schema: ledgerSchema, Name: sqlkit.VersionsTable}.Quote(d)
	keys := make([]string, len(versions))
	rows := make([][]string, len(versions))
	for i, v := range versions {
		keys[i] = "(" + d.QuoteString(v.Model) + ", " + d.QuoteString(v.Fingerprint) + ")"
		rows[i] = sqlkit.VersionValues(d, v)
	}
	return []string{
		fmt.Sprintf("DELETE FROM %s WHERE (model, fingerprint) IN (%s)", t, strings.Join(keys, ", ")),
		fmt.Sprintf("INSERT INTO %s (%s) VALUES\n  %s", t, sqlkit.ColumnNames(d, sqlkit.VersionColumns), sqlkit.ValuesList(rows)),
	}
}

// Versions returns the versions of the named models.
func (a *Adapter) Versions(ctx context.Context, names []string) ([]adapters.Version, error) {
	if ok, err := a.ledgerHas(ctx, sqlkit.VersionsTable); err != nil || !ok || len(names) == 0 {
		return nil, err
	}
	list, _ := models.Literal(a.d, names)
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE model IN %s ORDER BY model, created_at",
		sqlkit.ColumnNames(a.d, sqlkit.VersionColumns), a.ledgerTable(sqlkit.VersionsTable), list), adapters.Tag{})
	if err != nil {
		return nil, err
	}
	return sqlkit.VersionsFromResult(res)
}

// QueryPartitions returns the records q asks for.
func (a *Adapter) QueryPartitions(ctx context.Context, q adapters.RecordQuery) ([]adapters.Record, error) {
	if ok, err := a.ledgerExists(ctx); err != nil || !ok {
		return nil, err
	}
	query := sqlkit.RecordQuerySQL(a.d, a.ledgerTable(sqlkit.PartitionsTable), q)
	a.log(query)
	rows, err := a.db.QueryContext(ctx, query)
	if err != nil {
		return nil, adapters.ExecFailed("ledger", query, err)
	}
	return sqlkit.ScanRecords(rows)
}

var _ adapters.Pruner = (*Adapter)(nil)

// LedgerModels returns the models of which the ledger holds a record not
// removed.
func (a *Adapter) LedgerModels(ctx context.Context) ([]string, error) {
	if ok, err := a.ledgerExists(ctx); err != nil || !ok {
		return nil, err
	}
	res, err := a.Query(ctx, sqlkit.LedgerModelsSQL(a.d, a.ledgerTable(sqlkit.PartitionsTable), ""), adapters.Tag{Step: "ledger"})
	if err != nil {
		return nil, err
	}
	return sqlkit.Strings(res), nil
}

// DropTable drops table, if it exists.
func (a *Adapter) DropTable(ctx context.Context, table models.Relation) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.run(ctx, "prune", "DROP TABLE IF EXISTS "+a.resolve(table).Quote(a.d))
}
