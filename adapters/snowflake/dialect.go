// Package snowflake is refill's adapter for Snowflake. It uses
// github.com/snowflakedb/gosnowflake and no other driver.
//
// Every Publish is one explicit Snowflake transaction: the DELETE of each
// swap's window, the INSERT from its stage and the ledger rows commit
// together or not at all. Snowflake commits an open transaction whenever a
// DDL statement runs, so the only DDL of a publish (creating a missing
// schema or target table) runs before BEGIN TRANSACTION; a failed first
// publish can therefore leave an empty target table behind, never a partial
// one.
//
// Names. Snowflake stores unquoted identifiers in upper case. The dialect
// renders every name refill writes (schemas, tables, columns, the ledger's
// columns) as a quoted identifier, upper-casing names that could have been
// written unquoted ([A-Za-z_][A-Za-z0-9_$]*): marts.daily_revenue becomes
// "MARTS"."DAILY_REVENUE", the table an analyst gets by writing
// marts.daily_revenue unquoted, and partition_by: order_date matches the
// unquoted alias order_date in the model's SQL. Any other name (with spaces,
// dashes, non-ASCII letters, or starting with a digit) is kept exactly as
// written. The ledger therefore lives in REFILL.PARTITIONS, REFILL.RUNS and
// REFILL.LEASES with upper-case columns, which analysts query unquoted:
// SELECT model, partition_key FROM refill.partitions.
package snowflake

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// Dialect renders Snowflake SQL. It needs no connection.
type Dialect struct{}

var _ models.Dialect = Dialect{}

// plainIdent matches the names Snowflake accepts unquoted.
var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// Name returns "snowflake".
func (Dialect) Name() string { return "snowflake" }

// Fold returns name as Snowflake stores it once QuoteIdent has rendered it:
// upper case for a name that could be written unquoted, unchanged otherwise.
// Catalog lookups (INFORMATION_SCHEMA) compare against Fold's result.
func (Dialect) Fold(name string) string {
	if plainIdent.MatchString(name) {
		return strings.ToUpper(name)
	}
	return name
}

// QuoteIdent double-quotes Fold(name), doubling any double quote in it, so
// order_date renders as "ORDER_DATE" and "Order Date" stays as written.
func (d Dialect) QuoteIdent(name string) string { return d.QuoteExact(d.Fold(name)) }

// QuoteExact double-quotes a name exactly as Snowflake stores it, without
// folding: for names read back from the catalog or a result's columns.
func (Dialect) QuoteExact(stored string) string {
	return `"` + strings.ReplaceAll(stored, `"`, `""`) + `"`
}

// QuoteString single-quotes s. Snowflake reads backslash escape sequences
// inside single-quoted strings, so backslashes are doubled as well as quotes.
func (Dialect) QuoteString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// Date renders 'YYYY-MM-DD'::DATE, the calendar date of t in t's location.
func (Dialect) Date(t time.Time) string { return "'" + t.Format("2006-01-02") + "'::DATE" }

// Timestamp renders 'YYYY-MM-DD HH:MM:SS[.fffffffff]'::TIMESTAMP_NTZ in UTC.
// The adapter sets the session's TIMEZONE to UTC, so comparing it with a
// TIMESTAMP_LTZ or TIMESTAMP_TZ column compares the same instant.
func (Dialect) Timestamp(t time.Time) string {
	return "'" + t.UTC().Format("2006-01-02 15:04:05.999999999") + "'::TIMESTAMP_NTZ"
}

// Bool renders TRUE or FALSE.
func (Dialect) Bool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// DateTrunc renders DATE_TRUNC('UNIT', expr), which keeps expr's type: a
// DATE stays a DATE. Weeks start on Monday: the adapter sets WEEK_START = 1;
// a week from Sunday is the Monday week of the next day, a day earlier.
func (Dialect) DateTrunc(unit models.Grain, expr string) string {
	if unit == models.SundayWeek {
		return fmt.Sprintf("DATEADD(day, -1, DATE_TRUNC('WEEK', DATEADD(day, 1, %s)))", expr)
	}
	return fmt.Sprintf("DATE_TRUNC('%s', %s)", strings.ToUpper(unit.String()), expr)
}

// DateAdd renders DATEADD(unit, n, expr).
func (Dialect) DateAdd(expr string, n int, unit models.Grain) string {
	if unit == models.SundayWeek {
		unit = models.Week
	}
	return fmt.Sprintf("DATEADD(%s, %d, %s)", unit, n, expr)
}

// CastDate renders TO_DATE(expr).
func (Dialect) CastDate(expr string) string { return "TO_DATE(" + expr + ")" }

// CastString renders TO_VARCHAR(expr).
func (Dialect) CastString(expr string) string { return "TO_VARCHAR(" + expr + ")" }

// DateDiff renders DATEDIFF(unit, a, b), which counts unit boundaries;
// weeks start on Monday because the adapter sets WEEK_START = 1, and
// weeks from Sunday are counted between the next days.
func (Dialect) DateDiff(unit models.Grain, a, b string) string {
	if unit == models.SundayWeek {
		return fmt.Sprintf("DATEDIFF(week, DATEADD(day, 1, %s), DATEADD(day, 1, %s))", a, b)
	}
	return fmt.Sprintf("DATEDIFF(%s, %s, %s)", unit, a, b)
}

// TryCast renders TRY_CAST(TO_VARCHAR(expr) AS type): Snowflake's
// TRY_CAST only reads text.
func (d Dialect) TryCast(expr string, t models.ColumnType) string {
	return "TRY_CAST(" + d.CastString(expr) + " AS " + d.ColumnType(t) + ")"
}

// StringAgg renders LISTAGG(TO_VARCHAR(expr), sep) [WITHIN GROUP (ORDER BY
// orderBy)], which skips NULLs, in a COALESCE that makes an empty group the
// empty string.
func (d Dialect) StringAgg(expr, sep, orderBy string) string {
	agg := fmt.Sprintf("LISTAGG(%s, %s)", d.CastString(expr), sep)
	if orderBy != "" {
		agg += " WITHIN GROUP (ORDER BY " + orderBy + ")"
	}
	return "COALESCE(" + agg + ", '')"
}

// ColumnType maps a portable column type to Snowflake's.
func (Dialect) ColumnType(t models.ColumnType) string {
	switch t {
	case models.TypeBool:
		return "BOOLEAN"
	case models.TypeInt, models.TypeInt32:
		return "NUMBER(38,0)"
	case models.TypeFloat:
		return "FLOAT"
	case models.TypeDate:
		return "DATE"
	case models.TypeTimestamp:
		return "TIMESTAMP_NTZ"
	}
	if p, s, ok := t.Decimal(); ok {
		return fmt.Sprintf("NUMBER(%d,%d)", p, s)
	}
	return "VARCHAR"
}

// HashRows is Snowflake's HASH_AGG, which ignores the rows' order.
func (Dialect) HashRows(exprs []string) string {
	return fmt.Sprintf("COALESCE(SUM(HASH(%s)), 0)", strings.Join(exprs, ", "))
}
