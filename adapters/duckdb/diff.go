package duckdb

import (
	"context"
	"database/sql"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
)

var _ adapters.Differ = (*Adapter)(nil)

// Diff compares a query's rows with a table's window in one statement
// (sqlkit.DiffSQL).
func (a *Adapter) Diff(ctx context.Context, req adapters.DiffRequest) (*adapters.DiffResult, error) {
	d := diffDialect(a.d)
	query := sqlkit.DiffSQL(d, req)
	a.log(query)
	rows, err := a.db.QueryContext(ctx, query)
	if err != nil {
		return nil, adapters.ExecFailed(req.Tag.Step, query, located(query, err))
	}
	// The examples are lists, which Normalize would print.
	res, err := sqlkit.ScanRowsFunc(rows, func(_ *sql.ColumnType, v any) any {
		if l, ok := v.([]any); ok {
			return l
		}
		return adapters.Normalize(v)
	})
	if err != nil {
		return nil, adapters.ExecFailed(req.Tag.Step, query, err)
	}
	return sqlkit.ScanDiff(d, req, res)
}

func diffDialect(d Dialect) sqlkit.DiffDialect {
	return sqlkit.DiffDialect{
		Dialect: d,
		Text:    func(e string) string { return "CAST(" + e + " AS VARCHAR)" },
		List:    func(items []string) string { return "[" + strings.Join(items, ", ") + "]" },
		Numeric: func(c adapters.TableColumn) bool { return parseType(c.Type).Numeric() },
	}
}
