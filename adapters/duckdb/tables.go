package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.RowCounter = (*Adapter)(nil)

// CountRows counts the rows of the tables that exist, in one query.
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
	for start := 0; start < len(counts); start += 500 {
		batch := counts[start:min(start+500, len(counts))]
		res, err := a.Query(ctx, strings.Join(batch, "\nUNION ALL "), adapters.Tag{Step: "drift"})
		if err != nil {
			return nil, err
		}
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
