package clickhouse

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
)

var _ adapters.Differ = (*Adapter)(nil)

// Diff compares a query's rows with a table's window in one statement
// (diffSQL).
func (a *Adapter) Diff(ctx context.Context, req adapters.DiffRequest) (*adapters.DiffResult, error) {
	d := sqlkit.DiffDialect{Dialect: a.d, Numeric: numericColumn}
	q := diffSQL(a.d, req)
	a.log(q)
	var res *adapters.Result
	err := a.withConn(ctx, func(c *sql.Conn) error {
		rows, err := c.QueryContext(a.statementContext(ctx, req.Tag, false), q)
		if err != nil {
			return located(q, err)
		}
		// The examples are arrays, which normalize would print.
		res, err = sqlkit.ScanRowsFunc(rows, func(col *sql.ColumnType, v any) any {
			if strings.HasPrefix(col.DatabaseTypeName(), "Array(") {
				return v
			}
			return normalize(col, v)
		})
		return err
	})
	if err != nil {
		return nil, adapters.ExecFailed(req.Tag.Step, q, err)
	}
	return sqlkit.ScanDiff(d, req, res)
}

func numericColumn(c adapters.TableColumn) bool { return parseType(c.Type).Numeric() }

// diffSQL renders the statement behind Diff in the SQL ClickHouse 18.16
// and 26 share: nested subqueries rather than WITH, an ALL FULL OUTER
// JOIN ... USING on copies of the key columns (refill_kN, with refill_kNn
// saying whether a Nullable one is NULL: no server matches NULL keys),
// the unmatched side's indicator (o_in, n_in, or the counts o_n, n_n)
// left at its default 0, the -If combinators, and groupArrayIf(n) for
// examples. The compared values are read from copies on each side (o_cN,
// n_cN), never from the USING columns, which old servers fill with
// defaults for rows of the right side alone. The result has the shape of
// sqlkit.DiffSQL's, which ScanDiff reads.
func diffSQL(d Dialect, req adapters.DiffRequest) string {
	isKey := map[string]bool{}
	for _, k := range req.Key {
		isKey[strings.ToLower(k)] = true
	}
	joined := func(i int) bool { return len(req.Key) == 0 || isKey[strings.ToLower(req.Columns[i].Name)] }
	// keys renders the join keys of the columns, from expr(i): a
	// Nullable column is joined on whether it is NULL and its value
	// otherwise, since ClickHouse matches no NULL key.
	var using []string
	for i, c := range req.Columns {
		if !joined(i) {
			continue
		}
		if parseType(c.Type).Nullable {
			using = append(using, fmt.Sprintf("refill_k%dn", i))
		}
		using = append(using, fmt.Sprintf("refill_k%d", i))
	}
	keys := func(expr func(i int) string) string {
		var out []string
		for i, c := range req.Columns {
			if !joined(i) {
				continue
			}
			if parseType(c.Type).Nullable {
				out = append(out, fmt.Sprintf("isNull(%s) AS refill_k%dn, assumeNotNull(%s) AS refill_k%d", expr(i), i, expr(i), i))
			} else {
				out = append(out, fmt.Sprintf("%s AS refill_k%d", expr(i), i))
			}
		}
		return strings.Join(out, ", ")
	}
	column := func(i int) string { return d.QuoteIdent(req.Columns[i].Name) }
	raw := func(i int) string { return fmt.Sprintf("refill_r%d", i) }
	values := func(prefix string, expr func(i int) string) string {
		out := make([]string, len(req.Columns))
		for i := range req.Columns {
			out[i] = fmt.Sprintf("%s AS %s_c%d", expr(i), prefix, i)
		}
		return strings.Join(out, ", ")
	}
	var differs, pair, oldL, newL []string
	for i := range req.Columns {
		pair = append(pair, fmt.Sprintf("o_c%d", i), fmt.Sprintf("n_c%d", i))
		oldL = append(oldL, fmt.Sprintf("toString(o_c%d)", i))
		newL = append(newL, fmt.Sprintf("toString(n_c%d)", i))
		if !joined(i) {
			differs = append(differs, fmt.Sprintf("ifNull(o_c%d != n_c%d, isNull(o_c%d) != isNull(n_c%d))", i, i, i, i))
		}
	}
	if len(differs) == 0 {
		differs = []string{"0"}
	}
	list := func(items []string) string { return "[" + strings.Join(items, ", ") + "]" }
	both := list(append(append([]string{}, oldL...), newL...))
	examples := func(l, cond string) string {
		return fmt.Sprintf("groupArrayIf(%d)(%s, %s)", max(req.Examples, 1), l, cond)
	}
	table, where := req.Table.Quote(d), req.Window.Predicate(d)
	var b strings.Builder
	if len(req.Key) > 0 {
		onlyOld, onlyNew := "o_in = 1 AND n_in = 0", "o_in = 0 AND n_in = 1"
		changed, same := "o_in = 1 AND n_in = 1 AND refill_differs", "o_in = 1 AND n_in = 1 AND NOT refill_differs"
		sel := []string{fmt.Sprintf("countIf(%s)", onlyOld), fmt.Sprintf("countIf(%s)", onlyNew), fmt.Sprintf("countIf(%s)", changed), fmt.Sprintf("countIf(%s)", same)}
		for i, c := range req.Columns {
			if numericColumn(c) {
				sel = append(sel, fmt.Sprintf("toFloat64(sumIf(o_c%d, o_in = 1))", i), fmt.Sprintf("toFloat64(sumIf(n_c%d, n_in = 1))", i))
			}
		}
		if req.Examples > 0 {
			sel = append(sel, examples(list(oldL), onlyOld), examples(list(newL), onlyNew), examples(both, changed))
		}
		fmt.Fprintf(&b, "SELECT %s\nFROM (\n  SELECT o_in, n_in, %s, (%s) AS refill_differs\n", strings.Join(sel, ",\n  "), strings.Join(pair, ", "), strings.Join(differs, " OR "))
		fmt.Fprintf(&b, "  FROM (SELECT 1 AS o_in, %s, %s FROM %s WHERE %s) AS refill_old\n", keys(column), values("o", column), table, where)
		fmt.Fprintf(&b, "  ALL FULL OUTER JOIN (SELECT 1 AS n_in, %s, %s FROM (\n%s\n) AS refill_query) AS refill_new\n  USING (%s)\n)",
			keys(column), values("n", column), req.Query, strings.Join(using, ", "))
		return b.String()
	}
	// Whole rows: each side's distinct rows (refill_rN) with their
	// counts, joined on every column.
	sel := []string{"sumIf(o_n - n_n, o_n > n_n)", "sumIf(n_n - o_n, n_n > o_n)", "0", "sum(least(o_n, n_n))"}
	for i, c := range req.Columns {
		if numericColumn(c) {
			sel = append(sel, fmt.Sprintf("toFloat64(sumIf(o_c%d * o_n, o_n > 0))", i), fmt.Sprintf("toFloat64(sumIf(n_c%d * n_n, n_n > 0))", i))
		}
	}
	if req.Examples > 0 {
		sel = append(sel, examples(list(oldL), "o_n > n_n"), examples(list(newL), "n_n > o_n"), examples(both, "0"))
	}
	rawCols, rawNames := make([]string, len(req.Columns)), make([]string, len(req.Columns))
	for i := range req.Columns {
		rawCols[i], rawNames[i] = column(i)+" AS "+raw(i), raw(i)
	}
	group := strings.Join(rawNames, ", ")
	fmt.Fprintf(&b, "SELECT %s\nFROM (\n  SELECT o_n, n_n, %s\n", strings.Join(sel, ",\n  "), strings.Join(pair, ", "))
	fmt.Fprintf(&b, "  FROM (SELECT %s, %s, o_n FROM (SELECT %s, count() AS o_n FROM %s WHERE %s GROUP BY %s)) AS refill_old\n",
		keys(raw), values("o", raw), strings.Join(rawCols, ", "), table, where, group)
	fmt.Fprintf(&b, "  ALL FULL OUTER JOIN (SELECT %s, %s, n_n FROM (SELECT %s, count() AS n_n FROM (\n%s\n) AS refill_query GROUP BY %s)) AS refill_new\n  USING (%s)\n)",
		keys(raw), values("n", raw), strings.Join(rawCols, ", "), req.Query, group, strings.Join(using, ", "))
	return b.String()
}
