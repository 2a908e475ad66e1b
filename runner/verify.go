package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// verification is what the verify query learned about a stage.
type verification struct {
	columns []string
	total   int64
	rows    []int64 // per partition of the unit, in order
}

// verify checks that every staged row lies inside the unit's window and
// counts the rows of each partition, in one scan of the stage.
func verify(ctx context.Context, a adapters.Adapter, st *adapters.Stage, parts []models.Partition) (*verification, error) {
	d := a.Dialect()
	m := st.Model
	stage := st.Relation.Quote(d)
	tag := st.Tag
	tag.Step = "verify"
	probe, err := a.Query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT 0", stage), tag)
	if err != nil {
		return nil, err
	}
	v := &verification{columns: probe.Columns}
	w := st.Window
	if !w.Whole() && !hasColumn(probe.Columns, w.Column) {
		return nil, &VerifyError{Model: m.Name, Column: w.Column, Missing: true}
	}
	if w.Whole() {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT count(*) FROM %s", stage), tag)
		if err != nil {
			return nil, err
		}
		v.total = adapters.Int(res.Rows[0][0])
		v.rows = []int64{v.total}
		return v, nil
	}
	// One scan counts the rows of each partition of the unit; bucket -1
	// holds rows outside the window or with a NULL partition key.
	bucket := bucketExpr(d, m, w, parts)
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s AS refill_bucket, count(*) AS n FROM %s GROUP BY %s", bucket, stage, bucket), tag)
	if err != nil {
		return nil, err
	}
	v.rows = make([]int64, len(parts))
	var outside int64
	for _, row := range res.Rows {
		i, n := adapters.Int(row[0]), adapters.Int(row[1])
		v.total += n
		if i < 0 || int(i) >= len(parts) {
			outside += n
			continue
		}
		v.rows[i] += n
	}
	if outside > 0 {
		col := d.QuoteIdent(w.Column)
		ex, err := a.Query(ctx, fmt.Sprintf("SELECT min(CASE WHEN %s IS NULL THEN 'NULL' ELSE %s END) FROM %s WHERE %s IS NULL OR NOT (%s)",
			col, d.CastString(col), stage, col, w.Predicate(d)), tag)
		if err != nil {
			return nil, err
		}
		example, _ := ex.Rows[0][0].(string)
		return nil, &VerifyError{Model: m.Name, Outside: outside, Total: v.total, Example: example,
			Column: w.Column, Window: describeWindow(m, parts)}
	}
	return v, nil
}

// bucketExpr renders an expression giving each row the index of the unit's
// partition it belongs to, or -1. For time windows it is a balanced tree of
// CASE comparisons against the partition boundaries, so each row costs
// about log2(partitions) comparisons whatever the batch size.
func bucketExpr(d models.Dialect, m *models.Model, w adapters.Window, parts []models.Partition) string {
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

func hasColumn(cols []string, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

// describeWindow names a unit's window for messages.
func describeWindow(m *models.Model, parts []models.Partition) string {
	first, last := parts[0], parts[len(parts)-1]
	switch m.Kind() {
	case models.TimePartitioned:
		return fmt.Sprintf("[%s, %s)", first.Start.UTC().Format("2006-01-02 15:04:05"), last.End.UTC().Format("2006-01-02 15:04:05"))
	case models.ListPartitioned:
		keys := make([]string, len(parts))
		for i, p := range parts {
			keys[i] = p.Key
		}
		return "{" + strings.Join(keys, ", ") + "}"
	}
	return "the table"
}
