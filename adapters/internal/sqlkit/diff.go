package sqlkit

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// DiffDialect is what DiffSQL needs of a warehouse beyond its Dialect.
type DiffDialect struct {
	models.Dialect
	// Text casts an expression to the warehouse's string type.
	Text func(expr string) string
	// List builds a list (an array) of expressions.
	List func(items []string) string
	// Order, when set, makes a list orderable for min_by (the list
	// itself otherwise).
	Order func(list string) string
	// Numeric reports whether a column of the table is summed.
	Numeric func(adapters.TableColumn) bool
}

// DiffSQL renders the one statement behind adapters.Differ.Diff, for
// warehouses with FULL OUTER JOIN, IS [NOT] DISTINCT FROM, GROUP BY ALL
// and min_by(arg, ord, n) (DuckDB, Snowflake). It scans each side once and
// returns one row: only old, only new, changed and same rows; the old and
// new sum of each numeric column (as DOUBLE); and the examples of each kind
// as lists of text values (old ones, new ones, then changed ones: old
// values followed by new).
//
// With a key, the two sides are joined on it (NULL matching NULL) and a
// matched row is changed when any other column is distinct. Without one,
// each side's distinct rows are counted first and joined on every column,
// so a row twice in the old and once in the new is once only old.
func DiffSQL(d DiffDialect, req adapters.DiffRequest) string {
	cols := make([]string, len(req.Columns))
	for i, c := range req.Columns {
		cols[i] = fmt.Sprintf("%s AS refill_c%d", d.QuoteIdent(c.Name), i)
	}
	isKey := map[string]bool{}
	for _, k := range req.Key {
		isKey[strings.ToLower(k)] = true
	}
	var on, differs, pairCols []string
	for i, c := range req.Columns {
		pairCols = append(pairCols, fmt.Sprintf("o.refill_c%d AS o_c%d", i, i), fmt.Sprintf("n.refill_c%d AS n_c%d", i, i))
		if len(req.Key) == 0 || isKey[strings.ToLower(c.Name)] {
			on = append(on, fmt.Sprintf("o.refill_c%d IS NOT DISTINCT FROM n.refill_c%d", i, i))
		} else {
			differs = append(differs, fmt.Sprintf("o.refill_c%d IS DISTINCT FROM n.refill_c%d", i, i))
		}
	}
	if len(on) == 0 {
		on = []string{"TRUE"} // no columns: every row is the same row
	}
	if len(differs) == 0 {
		differs = []string{"FALSE"}
	}
	oldL, newL := d.List(listItems(d, "o", len(req.Columns))), d.List(listItems(d, "n", len(req.Columns)))
	bothL := d.List(append(listItems(d, "o", len(req.Columns)), listItems(d, "n", len(req.Columns))...))
	examples := func(list, cond string) string {
		// Both arguments are NULL but for the rows of the kind, so that
		// the values are cast to text for those rows alone.
		e, ord := fmt.Sprintf("CASE WHEN %s THEN %s END", cond, list), list
		if d.Order != nil {
			ord = d.Order(list)
		}
		return fmt.Sprintf("min_by(%s, CASE WHEN %s THEN %s END, %d)", e, cond, ord, max(req.Examples, 1))
	}
	where := req.Window.Predicate(d)
	var b strings.Builder
	if len(req.Key) > 0 {
		fmt.Fprintf(&b, "WITH refill_old AS (\n  SELECT TRUE AS refill_in, %s FROM %s WHERE %s\n), ", strings.Join(cols, ", "), req.Table.Quote(d), where)
		fmt.Fprintf(&b, "refill_new AS (\n  SELECT TRUE AS refill_in, %s FROM (\n%s\n) AS refill_query\n), ", strings.Join(cols, ", "), req.Query)
		fmt.Fprintf(&b, "refill_pairs AS (\n  SELECT o.refill_in AS o_in, n.refill_in AS n_in, %s,\n    (%s) AS refill_differs\n  FROM refill_old AS o FULL OUTER JOIN refill_new AS n ON %s\n)\n",
			strings.Join(pairCols, ", "), strings.Join(differs, " OR "), strings.Join(on, " AND "))
		onlyOld, onlyNew := "n_in IS NULL", "o_in IS NULL"
		changed, same := "o_in AND n_in AND refill_differs", "o_in AND n_in AND NOT refill_differs"
		count := func(cond string) string { return fmt.Sprintf("coalesce(sum(CASE WHEN %s THEN 1 ELSE 0 END), 0)", cond) }
		sel := []string{count(onlyOld), count(onlyNew), count(changed), count(same)}
		for i, c := range req.Columns {
			if d.Numeric(c) {
				sel = append(sel, fmt.Sprintf("CAST(sum(o_c%d) AS DOUBLE)", i), fmt.Sprintf("CAST(sum(n_c%d) AS DOUBLE)", i))
			}
		}
		if req.Examples > 0 {
			sel = append(sel, examples(oldL, onlyOld), examples(newL, onlyNew), examples(bothL, changed))
		}
		fmt.Fprintf(&b, "SELECT %s\nFROM refill_pairs", strings.Join(sel, ",\n  "))
		return b.String()
	}
	fmt.Fprintf(&b, "WITH refill_old AS (\n  SELECT %s, count(*) AS refill_n FROM %s WHERE %s GROUP BY ALL\n), ", strings.Join(cols, ", "), req.Table.Quote(d), where)
	fmt.Fprintf(&b, "refill_new AS (\n  SELECT %s, count(*) AS refill_n FROM (\n%s\n) AS refill_query GROUP BY ALL\n), ", strings.Join(cols, ", "), req.Query)
	fmt.Fprintf(&b, "refill_pairs AS (\n  SELECT coalesce(o.refill_n, 0) AS o_n, coalesce(n.refill_n, 0) AS n_n, %s\n  FROM refill_old AS o FULL OUTER JOIN refill_new AS n ON %s\n)\n",
		strings.Join(pairCols, ", "), strings.Join(on, " AND "))
	sel := []string{
		"coalesce(sum(CASE WHEN o_n > n_n THEN o_n - n_n ELSE 0 END), 0)",
		"coalesce(sum(CASE WHEN n_n > o_n THEN n_n - o_n ELSE 0 END), 0)",
		"0",
		"coalesce(sum(CASE WHEN o_n < n_n THEN o_n ELSE n_n END), 0)",
	}
	for i, c := range req.Columns {
		if d.Numeric(c) {
			sel = append(sel, fmt.Sprintf("CAST(sum(o_c%d * o_n) AS DOUBLE)", i), fmt.Sprintf("CAST(sum(n_c%d * n_n) AS DOUBLE)", i))
		}
	}
	if req.Examples > 0 {
		sel = append(sel, examples(oldL, "o_n > n_n"), examples(newL, "n_n > o_n"), "NULL")
	}
	fmt.Fprintf(&b, "SELECT %s\nFROM refill_pairs", strings.Join(sel, ",\n  "))
	return b.String()
}

func listItems(d DiffDialect, prefix string, n int) []string {
	items := make([]string, n)
	for i := range n {
		items[i] = d.Text(fmt.Sprintf("%s_c%d", prefix, i))
	}
	return items
}

// ScanDiff reads the row of a DiffSQL statement.
func ScanDiff(d DiffDialect, req adapters.DiffRequest, res *adapters.Result) (*adapters.DiffResult, error) {
	if len(res.Rows) != 1 {
		return nil, fmt.Errorf("diff: %d rows, want 1", len(res.Rows))
	}
	row := res.Rows[0]
	out := &adapters.DiffResult{
		OnlyOld: adapters.Int(row[0]), OnlyNew: adapters.Int(row[1]), Changed: adapters.Int(row[2]), Same: adapters.Int(row[3]),
	}
	i := 4
	for _, c := range req.Columns {
		if d.Numeric(c) {
			out.Sums = append(out.Sums, adapters.ColumnSums{Column: c.Name, Old: float(row[i]), New: float(row[i+1])})
			i += 2
		}
	}
	if req.Examples <= 0 {
		return out, nil
	}
	n := len(req.Columns)
	for k, kind := range []string{adapters.DiffOnlyOld, adapters.DiffOnlyNew, adapters.DiffChanged} {
		for _, l := range lists(row[i+k]) {
			ex := adapters.DiffExample{Kind: kind}
			switch {
			case kind == adapters.DiffOnlyOld:
				ex.Old = l
			case kind == adapters.DiffOnlyNew:
				ex.New = l
			case len(l) == 2*n:
				ex.Old, ex.New = l[:n], l[n:]
			default:
				return nil, fmt.Errorf("diff: a changed example of %d values, want %d", len(l), 2*n)
			}
			out.Examples = append(out.Examples, ex)
		}
	}
	return out, nil
}

// lists reads a list of lists of text, as drivers return them: []any of
// []any (DuckDB), or typed slices such as [][]*string (ClickHouse).
func lists(v any) [][]*string {
	outer := reflect.ValueOf(v)
	if outer.Kind() != reflect.Slice {
		return nil
	}
	var out [][]*string
	for i := range outer.Len() {
		inner := reflect.Indirect(outer.Index(i))
		if inner.Kind() == reflect.Interface {
			inner = inner.Elem()
		}
		if inner.Kind() != reflect.Slice {
			continue
		}
		l := make([]*string, inner.Len())
		for j := range inner.Len() {
			x := inner.Index(j)
			for x.Kind() == reflect.Interface || x.Kind() == reflect.Pointer {
				if x.IsNil() {
					break
				}
				x = x.Elem()
			}
			if (x.Kind() == reflect.Interface || x.Kind() == reflect.Pointer) && x.IsNil() {
				continue
			}
			s := fmt.Sprint(x.Interface())
			l[j] = &s
		}
		out = append(out, l)
	}
	return out
}

func float(v any) *float64 {
	switch x := v.(type) {
	case float64:
		return &x
	case float32:
		f := float64(x)
		return &f
	case nil:
		return nil
	}
	f := float64(adapters.Int(v))
	return &f
}
