package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// seedBatch is how many rows one INSERT carries.
const seedBatch = 1000

// LoadSeed replaces table with the seed's rows in one transaction.
func (a *Adapter) LoadSeed(ctx context.Context, seed *models.Seed, table models.Relation) error {
	if table.Schema == "" {
		table.Schema = a.cfg.Schema
	}
	return a.exec(ctx, "seed", seedStatements(a.d, seed, table)...)
}

// seedStatements renders the statements that load seed into table.
func seedStatements(d Dialect, seed *models.Seed, table models.Relation) []string {
	defs := make([]string, len(seed.Columns))
	for i, c := range seed.Columns {
		defs[i] = d.QuoteIdent(c.Name) + " " + d.ColumnType(c.Type)
	}
	stmts := []string{
		"CREATE SCHEMA IF NOT EXISTS " + d.QuoteIdent(table.Schema),
		fmt.Sprintf("CREATE OR REPLACE TABLE %s (%s)", table.Quote(d), strings.Join(defs, ", ")),
	}
	for start := 0; start < len(seed.Rows); start += seedBatch {
		end := min(start+seedBatch, len(seed.Rows))
		rows := make([][]string, 0, end-start)
		for _, row := range seed.Rows[start:end] {
			rows = append(rows, seedValues(d, seed.Columns, row))
		}
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES\n  %s", table.Quote(d), sqlkit.ValuesList(rows)))
	}
	return stmts
}

func seedValues(d Dialect, cols []models.Column, row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = sqlkit.SeedLiteral(d, cols[i].Type, v)
	}
	return out
}
