package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Counting rows per partition. A table or stage is scanned once, grouped
// by a coarse bucket of its partition column: the column itself for dates
// and list values, the hour for timestamps. The few buckets are mapped to
// partitions here, in Go. (A comparison per partition boundary in SQL
// costs the warehouse far more: ClickHouse evaluates every branch of a
// CASE for every row.) A bucket whose rows straddle two partitions, which
// only happens for zones whose offset is not a whole number of hours, is
// counted again exactly with a CASE over the boundaries.

// Counts is how the rows of a relation fall into a model's partitions.
type Counts struct {
	Total int64
	Rows  map[string]int64 // by partition key
	// Outside counts rows in no partition of want (when given) or with a
	// NULL partition column; Example is one such value, as text.
	Outside int64
	Example string
}

// CountPartitions counts the rows of rel per partition of m. colType is
// the partition column's type as the driver names it. With want, rows in
// other partitions count as outside; where, when not empty, filters the
// rows counted.
func CountPartitions(ctx context.Context, a adapters.Adapter, tag adapters.Tag, m *models.Model, rel models.Relation, colType string, want []models.Partition, where string) (*Counts, error) {
	d := a.Dialect()
	stage := rel.Quote(d)
	if m.Kind() == models.WholeTable {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT count(*) FROM %s%s", stage, whereClause(where)), tag)
		if err != nil {
			return nil, err
		}
		n := adapters.Int(res.Rows[0][0])
		return &Counts{Total: n, Rows: map[string]int64{models.WholeTableKey: n}}, nil
	}
	col := d.QuoteIdent(m.Config.PartitionBy)
	bucket := col
	if m.Kind() == models.TimePartitioned && !adapters.IsDateType(colType) {
		bucket = d.DateTrunc(models.Hour, col)
	}
	q := fmt.Sprintf("SELECT %s AS refill_bucket, count(*) AS refill_n, min(%s) AS refill_lo, max(%s) AS refill_hi FROM %s%s GROUP BY %s",
		bucket, col, col, stage, whereClause(where), bucket)
	res, err := a.Query(ctx, q, tag)
	if err != nil {
		return nil, err
	}
	c := &Counts{Rows: map[string]int64{}}
	inWant := map[string]bool{}
	for _, p := range want {
		inWant[p.Key] = true
	}
	straddles := false
	for _, row := range res.Rows {
		n := adapters.Int(row[1])
		c.Total += n
		if row[0] == nil {
			c.Outside += n
			c.Example = "NULL"
			continue
		}
		lo, err := PartitionOf(m, row[2])
		if err != nil {
			return nil, err
		}
		hi, err := PartitionOf(m, row[3])
		if err != nil {
			return nil, err
		}
		if lo != hi {
			straddles = true
			continue
		}
		if want != nil && !inWant[lo] {
			c.Outside += n
			if c.Example == "" {
				c.Example = ValueText(row[2])
			}
			continue
		}
		c.Rows[lo] += n
	}
	if straddles {
		return countExactly(ctx, a, tag, m, rel, want, where)
	}
	return c, nil
}

// countExactly counts rows per partition of want with a balanced CASE
// over the partition boundaries, for zones whose partitions do not start
// on the hour. Without want it counts the partitions between the column's
// first and last value.
func countExactly(ctx context.Context, a adapters.Adapter, tag adapters.Tag, m *models.Model, rel models.Relation, want []models.Partition, where string) (*Counts, error) {
	d := a.Dialect()
	col := d.QuoteIdent(m.Config.PartitionBy)
	if want == nil {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT min(%s), max(%s) FROM %s%s", col, col, rel.Quote(d), whereClause(where)), tag)
		if err != nil {
			return nil, err
		}
		lo, err1 := timeOf(m, res.Rows[0][0])
		hi, err2 := timeOf(m, res.Rows[0][1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("partition column %s: %v", m.Config.PartitionBy, err1)
		}
		want = m.Partitions(m.PartitionAt(lo).Start, hi)
	}
	w := adapters.ModelWindow(m, want)
	bucket := bucketExpr(d, w, want)
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s AS refill_bucket, count(*) AS refill_n, min(%s) FROM %s%s GROUP BY %s",
		bucket, col, rel.Quote(d), whereClause(where), bucket), tag)
	if err != nil {
		return nil, err
	}
	c := &Counts{Rows: map[string]int64{}}
	for _, row := range res.Rows {
		i, n := adapters.Int(row[0]), adapters.Int(row[1])
		c.Total += n
		if i < 0 || int(i) >= len(want) {
			c.Outside += n
			c.Example = ValueText(row[2])
			continue
		}
		c.Rows[want[i].Key] += n
	}
	return c, nil
}

func whereClause(where string) string {
	if where == "" {
		return ""
	}
	return " WHERE " + where
}

// PartitionOf returns the key of m's partition holding partition column
// value v (a date, a timestamp or a list value).
func PartitionOf(m *models.Model, v any) (string, error) {
	if m.Kind() == models.ListPartitioned {
		return fmt.Sprint(v), nil
	}
	t, err := timeOf(m, v)
	if err != nil {
		return "", err
	}
	return m.PartitionAt(t).Key, nil
}

// timeOf reads a time partition column's value as an instant. A date (a
// time at midnight UTC from the driver) is that calendar day in the
// model's zone.
func timeOf(m *models.Model, v any) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		return time.Time{}, fmt.Errorf("the partition column %s holds %T values (%v), not dates or timestamps", m.Config.PartitionBy, v, v)
	}
	if !m.Config.TimestampWindow {
		y, mo, d := t.UTC().Date()
		if t.UTC().Hour() == 0 && t.UTC().Minute() == 0 && t.UTC().Second() == 0 && t.UTC().Nanosecond() == 0 {
			return time.Date(y, mo, d, 0, 0, 0, 0, m.Config.Location), nil
		}
	}
	return t, nil
}

// ValueText prints a partition column value for messages.
func ValueText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if v.Hour() == 0 && v.Minute() == 0 && v.Second() == 0 && v.Nanosecond() == 0 {
			return v.Format("2006-01-02")
		}
		return v.UTC().Format("2006-01-02 15:04:05")
	}
	return fmt.Sprint(v)
}

// bucketExpr renders an expression giving each row the index of the
// partition of parts it belongs to, or -1: a list of values, or a balanced
// tree of CASE comparisons against the partition boundaries.
func bucketExpr(d models.Dialect, w adapters.Window, parts []models.Partition) string {
	col := d.QuoteIdent(w.Column)
	if w.Values != nil {
		var b strings.Builder
		b.WriteString("CASE")
		for i, p := range parts {
			lit, _ := models.Literal(d, p.Value)
			fmt.Fprintf(&b, " WHEN %s = %s THEN %d", col, lit, i)
		}
		b.WriteString(" ELSE -1 END")
		return b.String()
	}
	bound := func(i int) string {
		if i == len(parts) {
			return w.Literal(d, parts[i-1].End)
		}
		return w.Literal(d, parts[i].Start)
	}
	var tree func(lo, hi int) string
	tree = func(lo, hi int) string {
		if hi-lo == 1 {
			return fmt.Sprint(lo)
		}
		mid := (lo + hi) / 2
		return fmt.Sprintf("CASE WHEN %s < %s THEN %s ELSE %s END", col, bound(mid), tree(lo, mid), tree(mid, hi))
	}
	return fmt.Sprintf("CASE WHEN %s IS NULL OR %s < %s OR %s >= %s THEN -1 ELSE %s END",
		col, col, bound(0), col, bound(len(parts)), tree(0, len(parts)))
}

// Summarize counts the stage's rows per partition from the adapter's
// metadata (adapters.StageSummarizer). It returns nil, for a scan, unless
// every group of rows lies inside one partition of parts.
func Summarize(ctx context.Context, a adapters.Adapter, st *adapters.Stage, parts []models.Partition) (*Counts, error) {
	s, ok := a.(adapters.StageSummarizer)
	if !ok || st.Window.Whole() {
		return nil, nil
	}
	groups, ok, err := s.SummarizeStage(ctx, st)
	if err != nil || !ok {
		return nil, err
	}
	if c, ok := GroupCounts(st.Model, parts, groups); ok {
		return c, nil
	}
	return nil, nil // straddling or outside: the scan says exactly how
}

// GroupCounts counts the rows of each of parts from groups of rows
// (adapters.RowGroup); ok is false when a group straddles partitions or
// lies outside them.
func GroupCounts(m *models.Model, parts []models.Partition, groups []adapters.RowGroup) (*Counts, bool) {
	inParts := map[string]bool{}
	for _, p := range parts {
		inParts[p.Key] = true
	}
	c := &Counts{Rows: map[string]int64{}}
	for _, g := range groups {
		lo, err1 := PartitionOf(m, g.Lo)
		hi, err2 := PartitionOf(m, g.Hi)
		if err1 != nil || err2 != nil || lo != hi || !inParts[lo] {
			return nil, false
		}
		c.Rows[lo] += g.Rows
		c.Total += g.Rows
	}
	return c, true
}
