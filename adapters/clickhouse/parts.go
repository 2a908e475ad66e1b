package clickhouse

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// PartStates reads, from system.parts, the state of each physical
// partition of table: its rows, its greatest block number and its greatest
// data version. An insert adds a part of a new block number, a mutation
// rewrites parts with a new data version (on 18.16 every part of the
// table), a dropped part takes its rows; a merge keeps all three. Block
// numbers start again in a new table, so each state also names the table
// itself: its UUID (21.1 on) and the time its metadata last changed, which
// CREATE, RENAME, EXCHANGE and ALTER set. A source reloaded by building a
// new table and swapping it in then shows every partition moved. The
// range of column in each partition is the parts' min_time..max_time (a
// DateTime column) or min_date..max_date (a Date column), which
// ClickHouse keeps for the columns of the partition key: so only a table
// whose partition key reads column and no other date or time column has
// them.
func (a *Adapter) PartStates(ctx context.Context, table models.Relation, column string) ([]adapters.PartState, error) {
	return a.partStates(ctx, table, column)
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

func (n *node) partStates(ctx context.Context, table models.Relation, column string) ([]adapters.PartState, error) {
	tag := adapters.Tag{Step: "parts"}
	table = n.resolve(table)
	db, name := n.d.QuoteString(table.Schema), n.d.QuoteString(table.Name)
	identity := "toString(metadata_modification_time)"
	if versionAtLeast(n.server.Version, 21, 1) {
		identity = "concat(toString(uuid), '@', toString(metadata_modification_time))"
	}
	res, err := n.query(ctx, tag, fmt.Sprintf("SELECT partition_key, %s FROM system.tables WHERE database = %s AND name = %s", identity, db, name))
	if err != nil || len(res.Rows) == 0 {
		return nil, err
	}
	t, err := n.table(ctx, tag, table)
	if err != nil || t == nil {
		return nil, err
	}
	key, id := fmt.Sprint(res.Rows[0][0]), fmt.Sprint(res.Rows[0][1])
	words := map[string]bool{}
	for _, w := range identRE.FindAllString(key, -1) {
		words[strings.ToLower(w)] = true
	}
	colType := ""
	for _, c := range t.Columns {
		typ := strings.TrimSuffix(strings.TrimPrefix(c.Type, "Nullable("), ")")
		if !strings.HasPrefix(typ, "Date") || !words[strings.ToLower(c.Name)] {
			continue
		}
		if !strings.EqualFold(c.Name, column) {
			return nil, nil // another time column in the key: the ranges would be of it too
		}
		colType = typ
	}
	if colType == "" {
		return nil, nil
	}
	lo, hi := "min(min_time), 'UTC'", "max(max_time), 'UTC'"
	if adapters.IsDateType(colType) {
		lo, hi = "min(min_date)", "max(max_date)"
	}
	res, err = n.query(ctx, tag, fmt.Sprintf(`SELECT partition_id, toString(sum(rows)), toString(max(max_block_number)), toString(max(data_version)),
	toString(%s), toString(%s) FROM system.parts WHERE active AND database = %s AND table = %s GROUP BY partition_id`, lo, hi, db, name))
	if err != nil {
		return nil, err
	}
	out := []adapters.PartState{}
	for _, row := range res.Rows {
		p := adapters.PartState{ID: fmt.Sprint(row[0]), State: fmt.Sprintf("%v/%v/%v/%s", row[1], row[2], row[3], id)}
		for i, t := range []*time.Time{&p.Min, &p.Max} {
			s := fmt.Sprint(row[4+i])
			layout := time.DateTime
			if len(s) == len(time.DateOnly) {
				layout = time.DateOnly
			}
			v, err := time.Parse(layout, s)
			if err != nil || v.Year() < 1971 {
				return nil, nil // no range kept (0000-00-00): nothing is proven
			}
			*t = v
		}
		out = append(out, p)
	}
	return out, nil
}
