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
	selects := []string{"count(*)"}
	if !w.Whole() {
		col := d.QuoteIdent(w.Column)
		outside := fmt.Sprintf("%s IS NULL OR NOT (%s)", col, w.Predicate(d))
		selects = append(selects,
			fmt.Sprintf("sum(CASE WHEN %s THEN 1 ELSE 0 END)", outside),
			fmt.Sprintf("min(CASE WHEN %s IS NULL THEN 'NULL' WHEN NOT (%s) THEN %s END)", col, w.Predicate(d), d.CastString(col)))
		if len(parts) > 1 {
			for _, p := range parts {
				pw := adapters.ModelWindow(m, []models.Partition{p})
				selects = append(selects, fmt.Sprintf("sum(CASE WHEN %s THEN 1 ELSE 0 END)", pw.Predicate(d)))
			}
		}
	}
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(selects, ", "), stage), tag)
	if err != nil {
		return nil, err
	}
	if len(res.Rows) != 1 {
		return nil, fmt.Errorf("verify query returned %d rows", len(res.Rows))
	}
	row := res.Rows[0]
	v.total = adapters.Int(row[0])
	if w.Whole() {
		v.rows = []int64{v.total}
		return v, nil
	}
	if outside := adapters.Int(row[1]); outside > 0 {
		example, _ := row[2].(string)
		return nil, &VerifyError{Model: m.Name, Outside: outside, Total: v.total, Example: example,
			Column: w.Column, Window: describeWindow(m, parts)}
	}
	if len(parts) == 1 {
		v.rows = []int64{v.total}
	} else {
		for i := range parts {
			v.rows = append(v.rows, adapters.Int(row[3+i]))
		}
	}
	return v, nil
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
