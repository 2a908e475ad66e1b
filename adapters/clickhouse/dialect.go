// Package clickhouse is refill's adapter for ClickHouse, over the native
// protocol with github.com/ClickHouse/clickhouse-go/v2. It works with
// ClickHouse 18.16 (Debian's package) and with current releases.
//
// ClickHouse has no transactions, so a swap is a sequence of statements:
// the stage is a MergeTree table with the target's structure and partition
// key, and Publish replaces each physical partition the window touches with
// ALTER TABLE ... REPLACE PARTITION, which is atomic per partition. The
// ledger is written after the swap with INSERT ... SELECT into
// ReplacingMergeTree tables; see Capabilities for the guarantee.
package clickhouse

import (
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// Dialect renders ClickHouse SQL that runs on 18.16 and on current
// servers. It needs no connection.
type Dialect struct{}

var _ models.Dialect = Dialect{}

// Name returns "clickhouse".
func (Dialect) Name() string { return "clickhouse" }

var (
	identEscaper  = strings.NewReplacer(`\`, `\\`, "`", "\\`")
	stringEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`)
)

// QuoteIdent backquotes name, escaping backquotes and backslashes.
// ClickHouse identifiers are case-sensitive.
func (Dialect) QuoteIdent(name string) string {
	return "`" + identEscaper.Replace(name) + "`"
}

// QuoteString single-quotes s with ClickHouse's backslash escapes: a
// backslash and a quote are escaped, as are NUL, newline and carriage
// return, so every literal stays on one line.
func (Dialect) QuoteString(s string) string {
	return "'" + stringEscaper.Replace(s) + "'"
}

// Date renders toDate('YYYY-MM-DD'), the calendar date of t in t's
// location.
func (Dialect) Date(t time.Time) string { return "toDate('" + t.Format("2006-01-02") + "')" }

// Timestamp renders the instant t as toDateTime('YYYY-MM-DD HH:MM:SS',
// 'UTC'). Windows and ledger times are whole seconds, which DateTime holds
// on every version. A time with a fraction of a second renders as
// toDateTime64('...', scale, 'UTC'), which needs ClickHouse 20.1 or later:
// older servers reject it rather than silently dropping the fraction.
func (Dialect) Timestamp(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return "toDateTime('" + t.Format("2006-01-02 15:04:05") + "', 'UTC')"
	}
	scale, layout := 9, "2006-01-02 15:04:05.000000000"
	switch {
	case t.Nanosecond()%1e6 == 0:
		scale, layout = 3, "2006-01-02 15:04:05.000"
	case t.Nanosecond()%1e3 == 0:
		scale, layout = 6, "2006-01-02 15:04:05.000000"
	}
	return fmt.Sprintf("toDateTime64('%s', %d, 'UTC')", t.Format(layout), scale)
}

// Bool renders 1 or 0: ClickHouse 18.16 has no boolean literals, and
// refill stores booleans as UInt8.
func (Dialect) Bool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// DateTrunc renders the start of expr's period: toStartOfHour (a
// DateTime), toDate, toMonday, toStartOfMonth or toStartOfYear (Dates).
// Weeks start on Monday, as refill's do.
func (Dialect) DateTrunc(unit models.Grain, expr string) string {
	fn := map[models.Grain]string{models.Hour: "toStartOfHour", models.Day: "toDate", models.Week: "toMonday",
		models.Month: "toStartOfMonth", models.Year: "toStartOfYear"}[unit]
	if fn == "" {
		fn = "toDate"
	}
	return fn + "(" + expr + ")"
}

// DateAdd renders addHours(expr, n), addDays, addWeeks, addMonths or
// addYears.
func (Dialect) DateAdd(expr string, n int, unit models.Grain) string {
	fn := map[models.Grain]string{models.Hour: "addHours", models.Day: "addDays", models.Week: "addWeeks",
		models.Month: "addMonths", models.Year: "addYears"}[unit]
	if fn == "" {
		fn = "addDays"
	}
	return fmt.Sprintf("%s(%s, %d)", fn, expr, n)
}

// CastDate renders toDate(expr).
func (Dialect) CastDate(expr string) string { return "toDate(" + expr + ")" }

// CastString renders toString(expr).
func (Dialect) CastString(expr string) string { return "toString(" + expr + ")" }

// ColumnType maps a portable column type to ClickHouse's: Int64, Float64,
// UInt8 for booleans, Date, DateTime('UTC') for timestamps (the zone pins
// how clients and functions such as toDate show the instant), String.
func (Dialect) ColumnType(t models.ColumnType) string {
	switch t {
	case models.TypeBool:
		return "UInt8"
	case models.TypeInt:
		return "Int64"
	case models.TypeInt32:
		return "Int32"
	case models.TypeFloat:
		return "Float64"
	case models.TypeDate:
		return "Date"
	case models.TypeTimestamp:
		return "DateTime('UTC')"
	}
	if p, s, ok := t.Decimal(); ok {
		return fmt.Sprintf("Decimal(%d, %d)", p, s)
	}
	return "String"
}

// Nullable wraps a column type in Nullable(...).
func Nullable(typ string) string { return "Nullable(" + typ + ")" }
