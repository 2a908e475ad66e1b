package duckdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

var _ adapters.RowCounter = (*Adapter)(nil)

// CountRows counts the rows of the tables that exist.
// DuckDB answers a bare count(*) from its row groups' sizes.
func (a *Adapter) CountRows(ctx context.Context, tables []models.Relation) (map[string]int64, error) {
	out := map[string]int64{}
	if len(tables) == 0 {
		return out, nil
	}
	res, err := a.Query(ctx, "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_catalog = current_database()", adapters.Tag{})
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, row := range res.Rows {
		exists[strings.ToLower(fmt.Sprint(row[0])+"."+fmt.Sprint(row[1]))] = true
	}
	var counts []string
	for _, t := range tables {
		r := a.resolve(t)
		if !exists[strings.ToLower(r.Schema+"."+r.Name)] {
			continue
		}
		counts = append(counts, fmt.Sprintf("SELECT %s, count(*) FROM %s", a.d.QuoteString(t.String()), r.Quote(a.d)))
	}
	// A statement counts at most 500 tables, and the statements run at
	// once: DuckDB binds and plans one on one thread, and binding a table
	// costs more than counting its rows (0.1 ms each).
	var queries []string
	size := min(500, max(100, (len(counts)+1)/2))
	for batch := range slices.Chunk(counts, size) {
		query := strings.Join(batch, "\nUNION ALL ")
		a.log(query)
		queries = append(queries, query)
	}
	results := make([]*adapters.Result, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, query := range queries {
		wg.Go(func() {
			rows, err := a.db.QueryContext(ctx, query)
			if err != nil {
				errs[i] = adapters.ExecFailed("drift", query, located(query, err))
				return
			}
			results[i], err = sqlkit.ScanRows(rows)
			errs[i] = adapters.ExecFailed("drift", query, err)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, res := range results {
		for _, row := range res.Rows {
			out[fmt.Sprint(row[0])] = adapters.Int(row[1])
		}
	}
	return out, nil
}

// resolve fills in r's default schema.
func (a *Adapter) resolve(r models.Relation) models.Relation {
	if r.Schema == "" {
		r.Schema = a.cfg.Schema
	}
	return r
}
