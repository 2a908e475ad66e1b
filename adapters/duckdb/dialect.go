// Package duckdb is refill's adapter for DuckDB, the embedded default. It
// uses github.com/duckdb/duckdb-go/v2. Every swap is one DuckDB transaction:
// the window's delete, the insert from the stage and the ledger rows commit
// together or not at all.
package duckdb

import (
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// Dialect renders DuckDB SQL. It needs no connection.
type Dialect struct{}

var _ models.Dialect = Dialect{}

// Name returns "duckdb".
func (Dialect) Name() string { return "duckdb" }

// QuoteIdent double-quotes name. DuckDB identifiers are case-insensitive.
func (Dialect) QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteString single-quotes s; DuckDB strings have no backslash escapes.
func (Dialect) QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// Date renders DATE 'YYYY-MM-DD'.
func (Dialect) Date(t time.Time) string { return "DATE '" + t.Format("2006-01-02") + "'" }

// Timestamp renders TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff]' in UTC.
func (Dialect) Timestamp(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "'"
}

// Bool renders TRUE or FALSE.
func (Dialect) Bool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// DateTrunc renders date_trunc('unit', expr); DuckDB returns a TIMESTAMP.
// Its weeks start on Monday: a week from Sunday is the Monday week of the
// next day, a day earlier.
func (Dialect) DateTrunc(unit models.Grain, expr string) string {
	if unit == models.SundayWeek {
		return fmt.Sprintf("(date_trunc('week', %s + INTERVAL 1 DAY) - INTERVAL 1 DAY)", expr)
	}
	return fmt.Sprintf("date_trunc('%s', %s)", unit, expr)
}

// DateAdd renders expr + INTERVAL (n) unit.
func (Dialect) DateAdd(expr string, n int, unit models.Grain) string {
	if unit == models.SundayWeek {
		unit = models.Week
	}
	return fmt.Sprintf("(%s + INTERVAL (%d) %s)", expr, n, strings.ToUpper(unit.String()))
}

// CastDate renders CAST(expr AS DATE).
func (Dialect) CastDate(expr string) string { return "CAST(" + expr + " AS DATE)" }

// CastString renders CAST(expr AS VARCHAR).
func (Dialect) CastString(expr string) string { return "CAST(" + expr + " AS VARCHAR)" }

// DateDiff renders date_diff('unit', a, b), which counts unit boundaries;
// DuckDB counts whole seven-day spans for weeks, so weeks are counted
// between the Mondays (or Sundays) of a and b.
func (d Dialect) DateDiff(unit models.Grain, a, b string) string {
	if unit.IsWeek() {
		return fmt.Sprintf("date_diff('week', %s, %s)", d.DateTrunc(unit, a), d.DateTrunc(unit, b))
	}
	return fmt.Sprintf("date_diff('%s', %s, %s)", unit, a, b)
}

// TryCast renders TRY_CAST(expr AS type).
func (d Dialect) TryCast(expr string, t models.ColumnType) string {
	return "TRY_CAST(" + expr + " AS " + d.ColumnType(t) + ")"
}

// StringAgg renders string_agg(CAST(expr AS VARCHAR), sep [ORDER BY
// orderBy]), which skips NULLs, in a coalesce: an empty group gives the
// empty string, as on the other dialects, rather than NULL.
func (d Dialect) StringAgg(expr, sep, orderBy string) string {
	if orderBy != "" {
		sep += " ORDER BY " + orderBy
	}
	return fmt.Sprintf("coalesce(string_agg(%s, %s), '')", d.CastString(expr), sep)
}

// ColumnType maps a portable column type to DuckDB's.
func (Dialect) ColumnType(t models.ColumnType) string {
	switch t {
	case models.TypeBool:
		return "BOOLEAN"
	case models.TypeInt:
		return "BIGINT"
	case models.TypeInt32:
		return "INTEGER"
	case models.TypeFloat:
		return "DOUBLE"
	case models.TypeDate:
		return "DATE"
	case models.TypeTimestamp:
		return "TIMESTAMP"
	}
	if p, s, ok := t.Decimal(); ok {
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s)
	}
	return "VARCHAR"
}

// HashRows sums the rows' hashes (a HUGEINT: no overflow).
func (Dialect) HashRows(exprs []string) string {
	return fmt.Sprintf("coalesce(sum(hash(%s)), 0)", strings.Join(exprs, ", "))
}
