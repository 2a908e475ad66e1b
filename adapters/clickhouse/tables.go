package clickhouse

import (
	"cmp"
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
		if !ok && a.sharded() {
			// A Distributed table has no parts of its own here; its rows
			// are on the shards.
			n, err := a.shardedRows(ctx, tag, t)
			if err != nil {
				return nil, err
			}
			out[t.String()] = n
			continue
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

// shardedRows counts the rows of a table of the sharded layout from the
// parts of its local table on one replica of each shard (after it has
// caught up), or returns -1 when that cannot be known: an engine whose
// merges change row counts, or a shard none of whose replicas answers.
func (a *Adapter) shardedRows(ctx context.Context, tag adapters.Tag, t models.Relation) (int64, error) {
	info, err := a.table(ctx, tag, a.resolve(t))
	if err != nil || info == nil {
		return -1, err
	}
	dist, ok := distributedOf(info.EngineClause)
	if !ok {
		return 0, nil // an empty table of another engine
	}
	local := models.Relation{Schema: cmp.Or(dist.database, a.schema(t)), Name: dist.table}
	total := int64(0)
	for _, replicas := range a.cluster.shards {
		counted := false
		for _, n := range replicas {
			var res *adapters.Result
			err := n.syncReplica(ctx, tag, local)
			if err == nil {
				res, err = n.query(ctx, tag, fmt.Sprintf("SELECT sum(rows), any(engine) FROM system.parts WHERE active AND database = %s AND table = %s",
					a.d.QuoteString(local.Schema), a.d.QuoteString(local.Name)))
			}
			if err != nil {
				continue // down, or without the table yet: another replica may do
			}
			for _, e := range mergingEngines {
				if strings.Contains(fmt.Sprint(res.Rows[0][1]), e) {
					return -1, nil
				}
			}
			total += adapters.Int(res.Rows[0][0])
			counted = true
			break
		}
		if !counted {
			return -1, nil
		}
	}
	return total, nil
}
