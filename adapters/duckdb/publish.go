package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Publish swaps every stage into its target in one transaction: for each,
// create the target if missing, delete its window, insert the staged rows
// and replace the partitions' ledger records. Swaps are serialized.
func (a *Adapter) Publish(ctx context.Context, swaps []adapters.Swap) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.exec(ctx, PublishStatements(a.d, a.cfg.LedgerSchema, swaps)...)
}

// PublishStatements renders the statements of one Publish transaction.
func PublishStatements(d Dialect, ledgerSchema string, swaps []adapters.Swap) []string {
	var stmts []string
	for _, sw := range swaps {
		st := sw.Stage
		target, stage := st.Target.Quote(d), st.Relation.Quote(d)
		if st.Target.Schema != "" {
			stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+d.QuoteIdent(st.Target.Schema))
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s AS SELECT * FROM %s LIMIT 0", target, stage))
		stmts = append(stmts, AlterStatements(d, st.Target, sw.Change)...)
		stmts = append(stmts,
			fmt.Sprintf("DELETE FROM %s WHERE %s", target, st.Window.Predicate(d)),
			fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", target, stage),
		)
		stmts = append(stmts, recordStatements(d, ledgerSchema, sw.Records)...)
	}
	return stmts
}

// recordStatements replaces the ledger records of records' partitions.
func recordStatements(d Dialect, ledgerSchema string, records []adapters.Record) []string {
	if len(records) == 0 {
		return nil
	}
	table := models.Relation{Schema: ledgerSchema, Name: adapters.PartitionsTable}.Quote(d)
	rows := make([][]string, len(records))
	for i, r := range records {
		rows[i] = adapters.RecordValues(d, r)
	}
	var stmts []string
	for _, mk := range adapters.KeysByModel(d, records) {
		stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE model = %s AND partition_key IN (%s)",
			table, d.QuoteString(mk.Model), strings.Join(mk.Keys, ", ")))
	}
	return append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES\n  %s", table,
		adapters.ColumnNames(d, adapters.PartitionColumns), adapters.ValuesList(rows)))
}

// Rebuild replaces target with the stages' rows, and the model's ledger
// records with records, in one transaction: readers see the old table or
// the new, never a mix.
func (a *Adapter) Rebuild(ctx context.Context, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	return a.exec(ctx, RebuildStatements(a.d, a.cfg.LedgerSchema, a.resolve(target), stages, records, columns)...)
}

// RebuildStatements render the transaction of Rebuild.
func RebuildStatements(d Dialect, ledgerSchema string, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) []string {
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
		ledger := models.Relation{Schema: ledgerSchema, Name: adapters.PartitionsTable}.Quote(d)
		stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE model = %s", ledger, d.QuoteString(records[0].Model)))
		stmts = append(stmts, recordStatements(d, ledgerSchema, records)...)
	}
	return stmts
}
