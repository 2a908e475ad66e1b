package snowflake

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// SwapPlan is what Publish learns about one swap before rendering it.
type SwapPlan struct {
	Columns      []Column // the stage's columns, in order
	CreateSchema bool     // the target's schema is missing
	CreateTable  bool     // the target table is missing
}

// Publish swaps every stage into its target in one transaction, on one
// connection and on the warehouse of the first swap's model that names one.
//
// Before the transaction, it reads each stage's columns (a stage that is
// gone fails the publish here, before anything changed) and creates the
// missing schemas and target tables: Snowflake commits an open transaction
// whenever DDL runs, so DDL cannot be part of it. Then, between BEGIN
// TRANSACTION and COMMIT: for each swap, DELETE the window from the target
// and INSERT the staged rows by column name; then replace the ledger
// records of every swap's partitions. On any error it rolls back and
// returns the error; only tables created before BEGIN remain, empty.
func (a *Adapter) Publish(ctx context.Context, swaps []adapters.Swap) error {
	if len(swaps) == 0 {
		return nil
	}
	warehouse := ""
	for _, sw := range swaps {
		if w := modelWarehouse(sw.Stage.Model); w != "" {
			warehouse = w
			break
		}
	}
	s, err := a.session(ctx, publishTag(swaps), warehouse)
	if err != nil {
		return err
	}
	defer s.close()
	plans := make([]SwapPlan, len(swaps))
	for i, sw := range swaps {
		st := sw.Stage
		if plans[i].Columns, err = s.columns(st.Relation); err != nil {
			return fmt.Errorf("reading the columns of stage %s: %w", st.Relation, err)
		}
		if a.known(&a.tables, st.Target.String()) {
			continue
		}
		exists, err := s.tableExists(st.Target)
		if err != nil {
			return err
		}
		if !exists {
			plans[i].CreateTable = true
			n, err := s.count(schemaExistsQuery(a.d, st.Target.Database, st.Target.Schema))
			if err != nil {
				return err
			}
			plans[i].CreateSchema = n == 0
		}
	}
	setup, tx := publishStatements(a.d, a.cfg.LedgerSchema, swaps, plans)
	for _, q := range setup {
		if err := s.exec(q); err != nil {
			return err
		}
	}
	for _, sw := range swaps {
		a.remember(&a.tables, sw.Stage.Target.String())
	}
	return s.transaction(tx)
}

// publishTag tags a publish with the run, models and partitions of its
// swaps.
func publishTag(swaps []adapters.Swap) adapters.Tag {
	t := adapters.Tag{RunID: swaps[0].Stage.Tag.RunID, Step: "publish"}
	var models, parts []string
	seen := map[string]bool{}
	for _, sw := range swaps {
		if m := sw.Stage.Tag.Model; m != "" && !seen[m] {
			seen[m] = true
			models = append(models, m)
		}
		if p := sw.Stage.Tag.Partition; p != "" {
			parts = append(parts, p)
		}
	}
	t.Model, t.Partition = strings.Join(models, ","), strings.Join(parts, ",")
	return t
}

// publishStatements renders a publish: setup creates the missing schemas
// and target tables, and runs first; tx is the transaction, from BEGIN
// TRANSACTION to COMMIT: each swap's DELETE of its window and INSERT from
// its stage, then the ledger records of every swap.
func publishStatements(d Dialect, ledgerSchema string, swaps []adapters.Swap, plans []SwapPlan) (setup, tx []string) {
	created := map[string]bool{}
	var records []adapters.Record
	tx = []string{BeginSQL}
	for i, sw := range swaps {
		st, plan := sw.Stage, plans[i]
		schemaKey := st.Target.Database + "." + st.Target.Schema
		if plan.CreateSchema && st.Target.Schema != "" && !created[schemaKey] {
			created[schemaKey] = true
			setup = append(setup, createSchemaSQL(d, st.Target.Database, st.Target.Schema))
		}
		if plan.CreateTable && !created[st.Target.String()] {
			created[st.Target.String()] = true
			setup = append(setup, createTableSQL(d, st.Target, plan.Columns, modelOptions(st.Model).ClusterBy))
		}
		setup = append(setup, alterStatements(d, st.Target, sw.Change)...)
		names := make([]string, len(plan.Columns))
		for j, c := range plan.Columns {
			names[j] = d.QuoteExact(c.Name)
		}
		list := strings.Join(names, ", ")
		target := st.Target.Quote(d)
		tx = append(tx,
			fmt.Sprintf("DELETE FROM %s WHERE %s", target, st.Window.Predicate(d)),
			fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", target, list, list, st.Relation.Quote(d)))
		records = append(records, sw.Records...)
	}
	tx = append(tx, recordStatements(d, ledgerSchema, records)...)
	return setup, append(tx, CommitSQL)
}

// createTableSQL renders the CREATE TABLE of a missing target, with the
// stage's columns (types widened, see targetType) and the model's
// snowflake.cluster_by expression, if any.
func createTableSQL(d Dialect, target models.Relation, cols []Column, clusterBy string) string {
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = d.QuoteExact(c.Name) + " " + c.Type
	}
	sql := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)", target.Quote(d), strings.Join(defs, ",\n  "))
	if c := strings.TrimSpace(clusterBy); c != "" {
		if !strings.HasPrefix(c, "(") || !strings.HasSuffix(c, ")") {
			c = "(" + c + ")"
		}
		sql += " CLUSTER BY " + c
	}
	return sql
}

// ledgerChunk bounds the rows of one ledger INSERT and the keys of one
// DELETE's IN list, well under Snowflake's 16,384 rows per VALUES clause.
const ledgerChunk = 1000

// recordStatements replaces the ledger records of records' partitions: the
// DELETEs of every model's partitions, then the INSERTs, at most
// ledgerChunk partitions each. They run inside a transaction.
func recordStatements(d Dialect, ledgerSchema string, records []adapters.Record) []string {
	return sqlkit.ReplaceRecordsSQL(d, ledgerSchema, records, ledgerChunk)
}
