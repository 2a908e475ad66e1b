package snowflake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
)

var _ adapters.Differ = (*Adapter)(nil)

// Diff compares a query's rows with a table's window in one statement
// (sqlkit.DiffSQL, in Snowflake's words: ARRAY_CONSTRUCT, MIN_BY with a
// count, NULLs as JSON nulls so that they keep their place in an array).
// Snowflake returns the examples' arrays as JSON text.
func (a *Adapter) Diff(ctx context.Context, req adapters.DiffRequest) (*adapters.DiffResult, error) {
	d := diffDialect(a.d)
	res, err := a.Query(ctx, sqlkit.DiffSQL(d, req), req.Tag)
	if err != nil {
		return nil, err
	}
	if req.Examples > 0 && len(res.Rows) == 1 {
		row := res.Rows[0]
		for i := len(row) - 3; i >= 0 && i < len(row); i++ {
			if row[i] == nil {
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(fmt.Sprint(row[i])), &v); err != nil {
				return nil, fmt.Errorf("diff: reading the examples: %w", err)
			}
			row[i] = v
		}
	}
	return sqlkit.ScanDiff(d, req, res)
}

func diffDialect(d Dialect) sqlkit.DiffDialect {
	return sqlkit.DiffDialect{
		Dialect: d,
		Text:    func(e string) string { return "COALESCE(TO_VARIANT(CAST(" + e + " AS VARCHAR)), PARSE_JSON('null'))" },
		List:    func(items []string) string { return "ARRAY_CONSTRUCT(" + strings.Join(items, ", ") + ")" },
		Order:   func(list string) string { return "ARRAY_TO_STRING(" + list + ", '|')" },
		Numeric: func(c adapters.TableColumn) bool { return parseType(c.Type).Numeric() },
	}
}
