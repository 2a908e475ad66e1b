package snowflake

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Limits on one seed INSERT: Snowflake accepts at most 16,384 rows in one
// VALUES clause, and a statement's text is kept well under its size limit.
const (
	seedMaxRows  = 16384
	seedMaxBytes = 512 << 10
)

// LoadSeed replaces table with the seed's rows. The rows are loaded into a
// transient table in the stage schema first; then one CREATE OR REPLACE
// TABLE ... COPY GRANTS AS SELECT replaces the table, which Snowflake does
// atomically: readers see the old rows or the new, and keep their grants.
// A failure before that statement leaves the table as it was.
func (a *Adapter) LoadSeed(ctx context.Context, seed *models.Seed, table models.Relation) error {
	if table.Schema == "" {
		table.Schema = a.cfg.Schema
	}
	s, err := a.session(ctx, adapters.Tag{Model: table.String(), Step: "seed"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	if err := a.ensureSchema(s, table.Database, table.Schema); err != nil {
		return err
	}
	if err := a.ensureSchema(s, "", a.cfg.StageSchema); err != nil {
		return err
	}
	load := models.Relation{Schema: a.cfg.StageSchema, Name: a.newName(table, adapters.KindSeed, "seed")}
	for _, q := range seedStatements(a.d, seed, table, load) {
		if err := s.exec(q); err != nil {
			s.ctx = context.WithoutCancel(s.ctx)
			s.exec(dropSQL(a.d, "TABLE", load))
			return err
		}
	}
	return nil
}

// seedStatements renders the load of seed into table through the load
// table: create it, insert the rows in chunks, replace table from it, drop
// it.
func seedStatements(d Dialect, seed *models.Seed, table, load models.Relation) []string {
	defs := make([]string, len(seed.Columns))
	names := make([]string, len(seed.Columns))
	for i, c := range seed.Columns {
		names[i] = d.QuoteIdent(c.Name)
		defs[i] = names[i] + " " + d.ColumnType(c.Type)
	}
	list := strings.Join(names, ", ")
	stmts := []string{fmt.Sprintf("CREATE OR REPLACE TRANSIENT TABLE %s (%s)", load.Quote(d), strings.Join(defs, ", "))}
	insert := fmt.Sprintf("INSERT INTO %s (%s) VALUES\n  ", load.Quote(d), list)
	var chunk [][]string
	size := 0
	flush := func() {
		if len(chunk) > 0 {
			stmts = append(stmts, insert+sqlkit.ValuesList(chunk))
			chunk, size = nil, 0
		}
	}
	for _, row := range seed.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = sqlkit.SeedLiteral(d, seed.Columns[i].Type, v)
			size += len(vals[i]) + 2
		}
		chunk = append(chunk, vals)
		if len(chunk) == seedMaxRows || size >= seedMaxBytes {
			flush()
		}
	}
	flush()
	return append(stmts,
		fmt.Sprintf("CREATE OR REPLACE TABLE %s COPY GRANTS AS SELECT %s FROM %s", table.Quote(d), list, load.Quote(d)),
		dropSQL(d, "TABLE", load))
}
