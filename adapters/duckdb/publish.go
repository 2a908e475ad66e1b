package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Publish swaps every stage into its target in one transaction: for each,
// create the target if missing, delete its window, insert the staged rows
// and replace the partitions' ledger records. Swaps are serialized.
func (a *Adapter) Publish(ctx context.Context, swaps []adapters.Swap) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	if run := swaps[0].Stage.Tag.RunID; a.targets == nil || run != a.targetsRun {
		a.targets, a.targetsRun = map[string]bool{}, run
	}
	err := a.exec(ctx, "publish", publishStatements(a.d, a.cfg.LedgerSchema, swaps, a.targets)...)
	for _, sw := range swaps {
		// A failed swap may have met a table dropped behind refill's back:
		// check again next time.
		a.targets[sw.Stage.Target.String()] = err == nil
	}
	return err
}

// publishStatements renders a Publish, without creating the targets in
// known, which earlier swaps of this adapter created or found.
func publishStatements(d Dialect, ledgerSchema string, swaps []adapters.Swap, known map[string]bool) []string {
	var stmts []string
	for _, sw := range swaps {
		st := sw.Stage
		target, stage := st.Target.Quote(d), st.Relation.Quote(d)
		if !known[st.Target.String()] {
			if st.Target.Schema != "" {
				stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+d.QuoteIdent(st.Target.Schema))
			}
			stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s AS SELECT * FROM %s LIMIT 0", target, stage))
		}
		stmts = append(stmts, alterStatements(d, st.Target, sw.Change)...)
		stmts = append(stmts,
			fmt.Sprintf("DELETE FROM %s WHERE %s", target, st.Window.Predicate(d)),
			fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", target, stage),
		)
		stmts = append(stmts, recordStatements(d, ledgerSchema, sw.Records)...)
	}
	return stmts
}

// recordStatements replaces the ledger records of records' partitions.
// More than a few records are written a column at a time (recordsSelect):
// DuckDB binds a VALUES list literal by literal, which took 40-50 ms for
// the 365 records of a year's batch. A few are inserted as VALUES, which
// costs less for one record.
func recordStatements(d Dialect, ledgerSchema string, records []adapters.Record) []string {
	if len(records) <= valuesRecords {
		return sqlkit.ReplaceRecordsSQL(d, ledgerSchema, records, ledgerChunk)
	}
	// The keys from one JSON array: a hash join, where an IN list of 365
	// literals is bound one by one.
	stmts := sqlkit.DeleteRecordsSQL(d, ledgerSchema, records, ledgerChunk, func(keys []string) string {
		return "SELECT unnest(" + fromJSON(d, "VARCHAR", keys) + ")"
	})
	table := models.Relation{Schema: ledgerSchema, Name: sqlkit.PartitionsTable}.Quote(d)
	for part := range slices.Chunk(records, ledgerChunk) {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s)\n%s",
			table, sqlkit.ColumnNames(d, sqlkit.PartitionColumns), recordsSelect(d, part)))
	}
	return stmts
}

// valuesRecords is the most records recordStatements inserts as VALUES:
// from 4 to 16 records the two forms took the same time.
const valuesRecords = 8

// recordsSelect renders a SELECT of records' rows, one expression per
// column of the partitions table: the column's literal where every record
// holds the same value (a batch's model, run, fingerprint and times), else
// the unnest of its values read from a JSON array. Parsing a statement
// costs by its length: the 365 records of a year as one JSON array of
// objects were 150 kB and took 6 ms to insert; by column, 21 kB and 2 ms.
// The partition key is always unnested, so the SELECT has a row a record.
func recordsSelect(d Dialect, records []adapters.Record) string {
	fields := make([][]any, len(records))
	for i, r := range records {
		fields[i] = sqlkit.RecordFields(r)
	}
	exprs := make([]string, len(sqlkit.PartitionColumns))
	for j, c := range sqlkit.PartitionColumns {
		column := make([]any, len(records))
		same := true
		for i := range records {
			column[i] = fields[i][j]
			same = same && sameField(column[i], column[0])
		}
		if same && c.Name != "partition_key" {
			lit, err := models.Literal(d, column[0])
			if err != nil {
				panic(err) // strings, integers, times and nil
			}
			exprs[j] = lit
			continue
		}
		for i, v := range column {
			if t, ok := v.(time.Time); ok {
				column[i] = t.UTC().Format("2006-01-02 15:04:05.999999")
			}
		}
		exprs[j] = "unnest(" + fromJSON(d, d.ColumnType(c.Type), column) + ")"
	}
	return "SELECT " + strings.Join(exprs, ",\n  ")
}

// sameField says whether two of sqlkit.RecordFields' values are the same.
func sameField(a, b any) bool {
	if t, ok := a.(time.Time); ok {
		u, ok := b.(time.Time)
		return ok && t.Equal(u)
	}
	return a == b
}

// fromJSON renders from_json of values, strings, integers and nil, as a
// list of typ.
func fromJSON[T any](d Dialect, typ string, values []T) string {
	text, err := json.Marshal(values)
	if err != nil {
		panic(err) // strings, integers and nil
	}
	shape, _ := json.Marshal([]string{typ})
	return fmt.Sprintf("from_json(%s, %s)", d.QuoteString(string(text)), d.QuoteString(string(shape)))
}

// ledgerChunk bounds the rows of one ledger INSERT and the keys of one
// DELETE's IN list.
const ledgerChunk = 1000

// Rebuild replaces target with the stages' rows, and the model's ledger
// records with records, in one transaction: readers see the old table or
// the new, never a mix.
func (a *Adapter) Rebuild(ctx context.Context, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	delete(a.targets, target.String())
	return a.exec(ctx, "rebuild", rebuildStatements(a.d, a.cfg.LedgerSchema, a.resolve(target), stages, records, columns)...)
}

// rebuildStatements render the transaction of Rebuild.
func rebuildStatements(d Dialect, ledgerSchema string, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) []string {
	t := target.Quote(d)
	stmts := []string{"CREATE SCHEMA IF NOT EXISTS " + d.QuoteIdent(target.Schema), "DROP TABLE IF EXISTS " + t}
	if columns != nil {
		stmts = append(stmts, createTableSQL(d, target, columns, false))
	} else {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s LIMIT 0", t, stages[0].Relation.Quote(d)))
	}
	for _, st := range stages {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", t, st.Relation.Quote(d)))
	}
	if len(records) > 0 {
		ledger := models.Relation{Schema: ledgerSchema, Name: sqlkit.PartitionsTable}.Quote(d)
		stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE model = %s", ledger, d.QuoteString(records[0].Model)))
		stmts = append(stmts, recordStatements(d, ledgerSchema, records)...)
	}
	return stmts
}

var _ adapters.DirectPublisher = (*Adapter)(nil)

// outsideMarker is the message of the error() that stops an insert at
// the first row outside the window.
const outsideMarker = "refill: a row lies outside the window"

// PublishQuery publishes req without a stage: in one transaction it
// creates the target if req.Create says how, deletes the window, inserts
// the query's rows (an error() stops it at the first row outside the
// window), counts the inserted rows per hour or value of the partition
// column, and writes the records made from the counts. The rows are
// written once, and the unit commits once.
func (a *Adapter) PublishQuery(ctx context.Context, req adapters.StageRequest, partitions int, records func([]adapters.RowGroup) ([]adapters.Record, error)) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	d := a.d
	target, w := req.Target.Quote(d), req.Window
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string) error {
		a.log(q)
		_, err := tx.ExecContext(ctx, q)
		return adapters.ExecFailed(req.Tag.Step, q, err)
	}
	if req.Create != nil {
		for _, q := range createTableStatements(d, a.resolve(req.Target), req.Create) {
			if err := exec(q); err != nil {
				return err
			}
		}
	}
	if err := exec(fmt.Sprintf("DELETE FROM %s WHERE %s", target, w.Predicate(d))); err != nil {
		return err
	}
	insert := fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM (\n%s\n) AS refill_query", target, req.Query)
	if !w.Whole() {
		insert += fmt.Sprintf("\nWHERE CASE WHEN coalesce(%s, FALSE) THEN TRUE ELSE error(%s) END", w.Predicate(d), d.QuoteString(outsideMarker))
	}
	a.log(insert)
	res, err := tx.ExecContext(ctx, insert)
	if err != nil {
		if strings.Contains(err.Error(), outsideMarker) {
			return fmt.Errorf("%w: %v", adapters.ErrOutsideWindow, err)
		}
		return adapters.ExecFailed(req.Tag.Step, insert, located(insert, err))
	}
	var groups []adapters.RowGroup
	if partitions == 1 {
		// Every row inserted is in the one partition.
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		groups = []adapters.RowGroup{{Rows: n}}
	} else if groups, err = a.countWindow(ctx, tx, req); err != nil {
		return err
	}
	recs, err := records(groups)
	if err != nil {
		return err
	}
	for _, q := range recordStatements(d, a.cfg.LedgerSchema, recs) {
		if err := exec(q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// countWindow groups the rows of req's window in its target per hour or
// value of the partition column: per value when the query's column is a
// date (req.Columns), whose values are days.
func (a *Adapter) countWindow(ctx context.Context, tx *sql.Tx, req adapters.StageRequest) ([]adapters.RowGroup, error) {
	d, w, target := a.d, req.Window, req.Target.Quote(a.d)
	col := d.QuoteIdent(w.Column)
	count := fmt.Sprintf("SELECT count(*), NULL, NULL FROM %s", target)
	switch {
	case w.Values != nil:
		count = fmt.Sprintf("SELECT count(*), %s, %s FROM %s WHERE %s GROUP BY %s", col, col, target, w.Predicate(d), col)
	case !w.Whole() && dateColumn(req.Columns, w.Column):
		// Each date is a group of its own, which DuckDB counts several
		// times faster than hours of it (an aggregate over the column's
		// values rather than over an expression).
		count = fmt.Sprintf("SELECT count(*), %s, %s FROM %s WHERE %s GROUP BY %s", col, col, target, w.Predicate(d), col)
	case !w.Whole():
		count = fmt.Sprintf("SELECT count(*), min(%s), max(%s) FROM %s WHERE %s GROUP BY date_trunc('hour', %s)", col, col, target, w.Predicate(d), col)
	}
	a.log(count)
	rows, err := tx.QueryContext(ctx, count)
	if err != nil {
		return nil, adapters.ExecFailed(req.Tag.Step, count, err)
	}
	res, err := sqlkit.ScanRows(rows)
	if err != nil {
		return nil, err
	}
	groups := make([]adapters.RowGroup, len(res.Rows))
	for i, row := range res.Rows {
		groups[i] = adapters.RowGroup{Rows: adapters.Int(row[0]), Lo: row[1], Hi: row[2]}
	}
	return groups, nil
}

// dateColumn says whether the column name of cols is a date.
func dateColumn(cols []adapters.TableColumn, name string) bool {
	i := slices.IndexFunc(cols, func(c adapters.TableColumn) bool { return strings.EqualFold(c.Name, name) })
	return i >= 0 && adapters.IsDateType(cols[i].Type)
}
