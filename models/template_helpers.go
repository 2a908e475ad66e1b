package models

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr/ast"
)

// TargetInfo is what a template sees as target: the target a statement is
// rendered for, so that a model can branch on the warehouse, as in
// {{ target.adapter == "clickhouse" ? raw("...") : raw("...") }}.
type TargetInfo struct {
	Name    string `expr:"name"`    // the target's name in refill.yml; empty when no target applies
	Adapter string `expr:"adapter"` // the dialect's name: duckdb, clickhouse or snowflake
}

// portableFunctions returns the dialect-aware helpers for what analysts
// write daily (date differences, safe casts, string aggregation) and the
// target, bound to scope s. With a nil s they only serve type-checking.
func portableFunctions(s *Scope, loc *time.Location) map[string]any {
	var target TargetInfo
	if s != nil {
		target = TargetInfo{Name: s.Target, Adapter: s.Dialect.Name()}
	}
	return map[string]any{
		"target": target,
		"date_diff": func(unit string, a, b any) (any, error) {
			g, err := ParseUnit(unit)
			if err != nil {
				return nil, err
			}
			ta, aTime := a.(Time)
			tb, bTime := b.(Time)
			if aTime && bTime {
				return dateDiff(g, ta.T.In(loc), tb.T.In(loc)), nil
			}
			sa, err := dateOperand("date_diff", s.Dialect, a)
			if err != nil {
				return nil, err
			}
			sb, err := dateOperand("date_diff", s.Dialect, b)
			if err != nil {
				return nil, err
			}
			return SQL(s.Dialect.DateDiff(g, sa, sb)), nil
		},
		"try_cast": func(x any, typ string) (any, error) {
			t, err := castType(typ)
			if err != nil {
				return nil, err
			}
			e, err := sqlOperand("try_cast", x)
			if err != nil {
				return nil, err
			}
			return SQL(s.Dialect.TryCast(e, t)), nil
		},
		"string_agg": func(x, sep any, orderBy ...any) (any, error) {
			e, err := sqlOperand("string_agg", x)
			if err != nil {
				return nil, err
			}
			var sepSQL string
			switch sep := sep.(type) {
			case string:
				sepSQL = s.Dialect.QuoteString(sep)
			case SQL:
				sepSQL = string(sep)
			default:
				return nil, fmt.Errorf("string_agg needs a separator in quotes, e.g. \", \", not %T", sep)
			}
			var order string
			switch len(orderBy) {
			case 0:
			case 1:
				if order, err = sqlOperand("string_agg's order", orderBy[0]); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("string_agg takes one order expression, not %d", len(orderBy))
			}
			return SQL(s.Dialect.StringAgg(e, sepSQL, order)), nil
		},
	}
}

// sqlOperand returns x's text when x is SQL (from ident, raw, ref or
// another helper). A string is refused rather than quoted: a helper given
// "amount" almost always meant the column.
func sqlOperand(fn string, x any) (string, error) {
	switch x := x.(type) {
	case SQL:
		return string(x), nil
	case string:
		return "", fmt.Errorf("%s needs SQL, not the string %q: write a column as ident(%q), an expression as raw(\"...\")", fn, x, x)
	}
	return "", fmt.Errorf("%s needs SQL (ident, raw or another helper), not %T", fn, x)
}

// dateOperand renders x, a date (start, end) or SQL, for a date helper.
func dateOperand(fn string, d Dialect, x any) (string, error) {
	switch x := x.(type) {
	case Time:
		return Literal(d, x)
	case SQL, string:
		return sqlOperand(fn, x)
	}
	return "", fmt.Errorf("%s needs a date (start, end) or SQL (ident, raw), not %T", fn, x)
}

// dateDiff counts the boundaries of unit g crossed from a to b, as the
// dialects' DateDiff does: calendar days, Monday (or Sunday) weeks,
// months and years in a's and b's location, and UTC-aligned hours.
func dateDiff(g Grain, a, b time.Time) int {
	day := func(t time.Time) int64 { // days since 1970-01-01 of t's calendar date
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	switch g {
	case Hour:
		return int(b.Truncate(time.Hour).Sub(a.Truncate(time.Hour)) / time.Hour)
	case Day:
		return int(day(b) - day(a))
	case Week:
		monday := func(t time.Time) int64 { return day(t) - int64((t.Weekday()+6)%7) }
		return int((monday(b) - monday(a)) / 7)
	case SundayWeek:
		sunday := func(t time.Time) int64 { return day(t) - int64(t.Weekday()) }
		return int((sunday(b) - sunday(a)) / 7)
	case Month:
		return (b.Year()-a.Year())*12 + int(b.Month()) - int(a.Month())
	}
	return b.Year() - a.Year()
}

// castType parses try_cast's type: a portable column type.
func castType(s string) (ColumnType, error) {
	t, err := ParseColumnType(s)
	if err != nil && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "decimal(") {
		return "", fmt.Errorf("unknown type %q (want boolean, integer, bigint, double, decimal(p,s), varchar, date or timestamp)%s",
			s, suggest(strings.ToLower(s), portableTypes))
	}
	return t, err
}

// checkHelperArgs returns the argument, and the error, of a unit or type
// given in quotes to a helper that refill does not know, so that the
// mistake points at its file:line:col when the project loads rather than
// when a partition runs.
func checkHelperArgs(call *ast.CallNode) (ast.Node, error) {
	id, ok := call.Callee.(*ast.IdentifierNode)
	if !ok {
		return nil, nil
	}
	arg := map[string]int{"date_add": 2, "date_trunc": 0, "date_diff": 0, "try_cast": 1}
	i, ok := arg[id.Value]
	if !ok || i >= len(call.Arguments) {
		return nil, nil
	}
	lit, ok := call.Arguments[i].(*ast.StringNode)
	if !ok {
		return nil, nil
	}
	var err error
	switch {
	case id.Value == "try_cast":
		_, err = castType(lit.Value)
	case id.Value == "date_trunc" && lit.Value == fiscalUnit:
	default:
		_, err = ParseUnit(lit.Value)
	}
	if err != nil {
		return lit, fmt.Errorf("%s: %w", id.Value, err)
	}
	return nil, nil
}
