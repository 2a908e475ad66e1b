package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.RowCounter = (*Adapter)(nil)

// mergingEngines are the MergeTree variants whose merges remove or combine
// rows, so that their row counts are not the rows refill inserted.
var mergingEngines = []string{"Replacing", "Collapsing", "Summing", "Aggregating", "Graphite"}

// CountRows counts the rows of the tables that exist from system.parts
// (no scan), and reports -1 for engines whose merges change row counts.
// Existence comes from system.columns, which on 18.16 (unlike
// system.tables) tolerates tables dropped while it runs.
func (a *Adapter) CountRows(ctx context.Context, tables []models.Relation) (map[string]int64, error) {
	out := map[string]int64{}
	if len(tables) == 0 {
		return out, nil
	}
	tag := adapters.Tag{Step: "drift"}
	dbs := map[string]bool{}
	var dbList []string
	for _, t := range tables {
		if db := a.schema(t); !dbs[db] {
			dbs[db] = true
			dbList = append(dbList, db)
		}
	}
	list, _ := models.Literal(a.d, dbList)
	res, err := a.query(ctx, tag, "SELECT DISTINCT database, table FROM system.columns WHERE database IN "+list)
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, row := range res.Rows {
		exists[fmt.Sprint(row[0])+"."+fmt.Sprint(row[1])] = true
	}
	res, err = a.query(ctx, tag, "SELECT database, table, any(engine), sum(rows) FROM system.parts WHERE active AND database IN "+list+" GROUP BY database, table")
	if err != nil {
		return nil, err
	}
	type count struct {
		engine string
		rows   int64
	}
	counts := map[string]count{}
	for _, row := range res.Rows {
		counts[fmt.Sprint(row[0])+"."+fmt.Sprint(row[1])] = count{fmt.Sprint(row[2]), adapters.Int(row[3])}
	}
	for _, t := range tables {
		key := a.schema(t) + "." + t.Name
		if !exists[key] {
			continue
		}
		c, ok := counts[key]
		if !ok {
			if n, elsewhere, err := a.role.rowsElsewhere(ctx, tag, t); err != nil {
				return nil, err
			} else if elsewhere {
				out[t.String()] = n
				continue
			}
		}
		out[t.String()] = c.rows
		for _, e := range mergingEngines {
			if strings.Contains(c.engine, e) {
				out[t.String()] = -1
			}
		}
	}
	return out, nil
}
