package snowflake

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

func ledgerTable(d Dialect, schema, name string) string {
	return models.Relation{Schema: schema, Name: name}.Quote(d)
}

var ledgerTables = []string{sqlkit.PartitionsTable, sqlkit.RunsTable, sqlkit.LeasesTable, sqlkit.VersionsTable}

// ledgerStatements renders the DDL that creates the ledger: its schema and
// its tables.
func ledgerStatements(d Dialect, schema string) []string {
	return append([]string{createSchemaSQL(d, "", schema)}, sqlkit.LedgerTablesSQL(d, schema)...)
}

// ledgerTablesQuery renders the query counting the ledger's tables that
// exist.
func ledgerTablesQuery(d Dialect, schema string) string {
	names := make([]string, len(ledgerTables))
	for i, t := range ledgerTables {
		names[i] = d.QuoteString(d.Fold(t))
	}
	return fmt.Sprintf("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN (%s)",
		d.QuoteString(d.Fold(schema)), strings.Join(names, ", "))
}

// SetupLedger creates the ledger's schema and tables if any is missing.
// When all three tables exist it runs no DDL, and it creates the schema
// only if it is missing, so a role that may not create schemas can use a
// ledger schema made for it.
func (a *Adapter) SetupLedger(ctx context.Context) error {
	s, err := a.session(ctx, adapters.Tag{Step: "ledger"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	if n, err := s.count(ledgerTablesQuery(a.d, a.cfg.LedgerSchema)); err != nil || n == int64(len(ledgerTables)) {
		return err
	}
	stmts := ledgerStatements(a.d, a.cfg.LedgerSchema)
	if n, err := s.count(schemaExistsQuery(a.d, "", a.cfg.LedgerSchema)); err != nil {
		return err
	} else if n > 0 {
		stmts = stmts[1:]
	}
	for _, q := range stmts {
		if err := s.exec(q); err != nil {
			return err
		}
	}
	return nil
}

// ledgerSession opens a session for ledger work and reports whether the
// ledger table name exists; read-only callers return early when it does
// not, creating nothing.
func (a *Adapter) ledgerSession(ctx context.Context, table string) (*session, bool, error) {
	s, err := a.session(ctx, adapters.Tag{Step: "ledger"}, "")
	if err != nil {
		return nil, false, err
	}
	ok, err := s.tableExists(models.Relation{Schema: a.cfg.LedgerSchema, Name: table})
	if err != nil {
		s.close()
		return nil, false, err
	}
	return s, ok, nil
}

// partitionsQuery renders the read of the named models' records.
func partitionsQuery(d Dialect, schema string, names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = d.QuoteString(n)
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (%s) ORDER BY %s, %s, %s",
		sqlkit.ColumnNames(d, sqlkit.PartitionColumns), ledgerTable(d, schema, sqlkit.PartitionsTable),
		d.QuoteIdent("model"), strings.Join(quoted, ", "),
		d.QuoteIdent("model"), d.QuoteIdent("window_start"), d.QuoteIdent("partition_key"))
}

// Partitions returns the records of the named models. A ledger that does
// not exist yet holds none; Partitions then creates nothing.
func (a *Adapter) Partitions(ctx context.Context, names []string) ([]adapters.Record, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var recs []adapters.Record
	err := a.withPartitions(ctx, func(s *session) error {
		res, err := s.query(partitionsQuery(a.d, a.cfg.LedgerSchema, names))
		if err == nil {
			recs, err = sqlkit.RecordsFromResult(res)
		}
		return err
	})
	return recs, err
}

// RecordPartitions replaces the records of records' partitions in one
// transaction.
func (a *Adapter) RecordPartitions(ctx context.Context, records []adapters.Record) error {
	if len(records) == 0 {
		return nil
	}
	s, err := a.session(ctx, adapters.Tag{RunID: records[0].RunID, Step: "ledger"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.transaction(recordPartitionsStatements(a.d, a.cfg.LedgerSchema, records))
}

// recordPartitionsStatements renders the transaction of RecordPartitions.
func recordPartitionsStatements(d Dialect, schema string, records []adapters.Record) []string {
	return inTransaction(recordStatements(d, schema, records))
}

func inTransaction(stmts []string) []string {
	return append(append([]string{BeginSQL}, stmts...), CommitSQL)
}

// saveRunStatements renders the transaction that inserts or replaces run.
func saveRunStatements(d Dialect, schema string, run *adapters.Run) []string {
	t := ledgerTable(d, schema, sqlkit.RunsTable)
	return inTransaction([]string{
		fmt.Sprintf("DELETE FROM %s WHERE %s = %s", t, d.QuoteIdent("run_id"), d.QuoteString(run.ID)),
		fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t, sqlkit.ColumnNames(d, sqlkit.RunColumns),
			strings.Join(sqlkit.RunValues(d, run), ", ")),
	})
}

// SaveRun inserts or replaces run's record.
func (a *Adapter) SaveRun(ctx context.Context, run *adapters.Run) error {
	s, err := a.session(ctx, adapters.Tag{RunID: run.ID, Step: "ledger"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.transaction(saveRunStatements(a.d, a.cfg.LedgerSchema, run))
}

// loadRunQuery renders the read of one run.
func loadRunQuery(d Dialect, schema, id string) string {
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s", sqlkit.ColumnNames(d, sqlkit.RunColumns),
		ledgerTable(d, schema, sqlkit.RunsTable), d.QuoteIdent("run_id"), d.QuoteString(id))
}

// LoadRun returns the run with id, or an error wrapping
// adapters.ErrRunNotFound.
func (a *Adapter) LoadRun(ctx context.Context, id string) (*adapters.Run, error) {
	s, ok, err := a.ledgerSession(ctx, sqlkit.RunsTable)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if !ok {
		return nil, fmt.Errorf("%w: %s (the ledger is empty)", adapters.ErrRunNotFound, id)
	}
	res, err := s.query(loadRunQuery(a.d, a.cfg.LedgerSchema, id))
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s", adapters.ErrRunNotFound, id)
	}
	return sqlkit.RunFromRow(res.Rows[0])
}

// leaseStatements renders the statements of AcquireLease, which run in
// this order inside one transaction: lock deletes l's table's leases that
// are l.RunID's own or expired at l.AcquiredAt, insert writes l, and check
// selects the other runs' leases on the table that are still valid. The
// DELETE takes the LEASES table's lock, which Snowflake holds until the
// transaction ends (UPDATE, DELETE and MERGE on a table do not run in
// parallel), so check, a new statement, sees every lease committed before
// the lock was granted: two runs cannot both see none.
func leaseStatements(d Dialect, schema string, l adapters.Lease) (lock, insert, check string) {
	t := ledgerTable(d, schema, sqlkit.LeasesTable)
	table, run, at := d.QuoteString(l.Table), d.QuoteString(l.RunID), d.Timestamp(l.AcquiredAt)
	lock = fmt.Sprintf("DELETE FROM %s WHERE %s = %s AND (%s = %s OR %s <= %s)", t,
		d.QuoteIdent("table_name"), table, d.QuoteIdent("run_id"), run, d.QuoteIdent("expires_at"), at)
	insert = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t, sqlkit.ColumnNames(d, sqlkit.LeaseColumns),
		strings.Join(sqlkit.LeaseValues(d, l), ", "))
	check = fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s AND %s <> %s AND %s > %s ORDER BY %s", sqlkit.ColumnNames(d, sqlkit.LeaseColumns), t,
		d.QuoteIdent("table_name"), table, d.QuoteIdent("run_id"), run, d.QuoteIdent("expires_at"), at, d.QuoteIdent("acquired_at"))
	return lock, insert, check
}

// AcquireLease takes l.Table for l.RunID, replacing the run's own lease
// and taking over an expired one. When another run holds a lease that has
// not expired at l.AcquiredAt, it rolls back and returns a
// *adapters.LeaseHeldError naming that run.
func (a *Adapter) AcquireLease(ctx context.Context, l adapters.Lease) error {
	s, err := a.session(ctx, adapters.Tag{RunID: l.RunID, Model: l.Table, Step: "lease"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	lock, insert, check := leaseStatements(a.d, a.cfg.LedgerSchema, l)
	if err := s.exec(BeginSQL); err != nil {
		return err
	}
	for _, q := range []string{lock, insert} {
		if err := s.exec(q); err != nil {
			s.rollback()
			return err
		}
	}
	res, err := s.query(check)
	if err != nil {
		s.rollback()
		return err
	}
	if len(res.Rows) > 0 {
		s.rollback()
		held, err := sqlkit.LeaseFromRow(res.Rows[0])
		if err != nil {
			return err
		}
		return &adapters.LeaseHeldError{Held: held}
	}
	if err := s.exec(CommitSQL); err != nil {
		s.rollback()
		return err
	}
	return nil
}

// renewLeasesSQL renders the statement that extends runID's leases.
func renewLeasesSQL(d Dialect, schema, runID string, now, expires time.Time) string {
	return fmt.Sprintf("UPDATE %s SET %s = %s, %s = %s WHERE %s = %s", ledgerTable(d, schema, sqlkit.LeasesTable),
		d.QuoteIdent("heartbeat_at"), d.Timestamp(now), d.QuoteIdent("expires_at"), d.Timestamp(expires),
		d.QuoteIdent("run_id"), d.QuoteString(runID))
}

// RenewLeases extends runID's leases.
func (a *Adapter) RenewLeases(ctx context.Context, runID string, now, expires time.Time) error {
	return a.ledgerExec(ctx, runID, renewLeasesSQL(a.d, a.cfg.LedgerSchema, runID, now, expires))
}

// releaseLeasesSQL renders the statement that drops runID's leases.
func releaseLeasesSQL(d Dialect, schema, runID string) string {
	return fmt.Sprintf("DELETE FROM %s WHERE %s = %s", ledgerTable(d, schema, sqlkit.LeasesTable),
		d.QuoteIdent("run_id"), d.QuoteString(runID))
}

// ReleaseLeases drops runID's leases.
func (a *Adapter) ReleaseLeases(ctx context.Context, runID string) error {
	return a.ledgerExec(ctx, runID, releaseLeasesSQL(a.d, a.cfg.LedgerSchema, runID))
}

// ledgerExec runs one autocommitted ledger statement.
func (a *Adapter) ledgerExec(ctx context.Context, runID, query string) error {
	s, err := a.session(ctx, adapters.Tag{RunID: runID, Step: "lease"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.exec(query)
}

// runsQuery renders the read of the latest runs.
func runsQuery(d Dialect, schema string, limit int) string {
	return fmt.Sprintf("SELECT %s FROM %s ORDER BY %s DESC, %s DESC LIMIT %d", sqlkit.ColumnNames(d, sqlkit.RunColumns),
		ledgerTable(d, schema, sqlkit.RunsTable), d.QuoteIdent("started_at"), d.QuoteIdent("run_id"), limit)
}

// Runs returns the latest runs, newest first.
func (a *Adapter) Runs(ctx context.Context, limit int) ([]*adapters.Run, error) {
	s, ok, err := a.ledgerSession(ctx, sqlkit.RunsTable)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if !ok {
		return nil, nil
	}
	res, err := s.query(runsQuery(a.d, a.cfg.LedgerSchema, limit))
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

// leasesQuery renders the read of every lease.
func leasesQuery(d Dialect, schema string) string {
	return fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", sqlkit.ColumnNames(d, sqlkit.LeaseColumns),
		ledgerTable(d, schema, sqlkit.LeasesTable), d.QuoteIdent("table_name"))
}

// Leases returns every lease row.
func (a *Adapter) Leases(ctx context.Context) ([]adapters.Lease, error) {
	s, ok, err := a.ledgerSession(ctx, sqlkit.LeasesTable)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if !ok {
		return nil, nil
	}
	res, err := s.query(leasesQuery(a.d, a.cfg.LedgerSchema))
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

// versionStatements render the transaction of SaveVersions.
func versionStatements(d Dialect, schema string, versions []adapters.Version) []string {
	t := ledgerTable(d, schema, sqlkit.VersionsTable)
	var stmts []string
	for _, v := range versions {
		stmts = append(stmts,
			fmt.Sprintf("DELETE FROM %s WHERE %s = %s AND %s = %s", t, d.QuoteIdent("model"), d.QuoteString(v.Model),
				d.QuoteIdent("fingerprint"), d.QuoteString(v.Fingerprint)),
			fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t, sqlkit.ColumnNames(d, sqlkit.VersionColumns),
				strings.Join(sqlkit.VersionValues(d, v), ", ")))
	}
	return inTransaction(stmts)
}

// SaveVersions inserts versions, replacing those of the same model and
// fingerprint, in one transaction.
func (a *Adapter) SaveVersions(ctx context.Context, versions []adapters.Version) error {
	if len(versions) == 0 {
		return nil
	}
	s, err := a.session(ctx, adapters.Tag{Step: "ledger"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.transaction(versionStatements(a.d, a.cfg.LedgerSchema, versions))
}

// versionsQuery renders the read of the named models' versions.
func versionsQuery(d Dialect, schema string, names []string) string {
	list, _ := models.Literal(d, names)
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s IN %s ORDER BY %s, %s", sqlkit.ColumnNames(d, sqlkit.VersionColumns),
		ledgerTable(d, schema, sqlkit.VersionsTable), d.QuoteIdent("model"), list, d.QuoteIdent("model"), d.QuoteIdent("created_at"))
}

// Versions returns the versions of the named models.
func (a *Adapter) Versions(ctx context.Context, names []string) ([]adapters.Version, error) {
	if len(names) == 0 {
		return nil, nil
	}
	s, ok, err := a.ledgerSession(ctx, sqlkit.VersionsTable)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if !ok {
		return nil, nil
	}
	res, err := s.query(versionsQuery(a.d, a.cfg.LedgerSchema, names))
	if err != nil {
		return nil, err
	}
	return sqlkit.VersionsFromResult(res)
}

var _ adapters.Pruner = (*Adapter)(nil)

// LedgerModels returns the models of which the ledger holds a record not
// removed.
func (a *Adapter) LedgerModels(ctx context.Context) ([]string, error) {
	s, ok, err := a.ledgerSession(ctx, sqlkit.PartitionsTable)
	if err != nil || !ok {
		return nil, err
	}
	defer s.close()
	res, err := s.query(sqlkit.LedgerModelsSQL(a.d, ledgerTable(a.d, a.cfg.LedgerSchema, sqlkit.PartitionsTable), ""))
	if err != nil {
		return nil, err
	}
	return sqlkit.Strings(res), nil
}

// DropTable drops table, if it exists.
func (a *Adapter) DropTable(ctx context.Context, table models.Relation) error {
	s, err := a.session(ctx, adapters.Tag{Step: "prune"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	if table.Schema == "" {
		table.Schema = a.cfg.Schema
	}
	return s.exec(dropSQL(a.d, "TABLE", table))
}
