// Package clickhouse is refill's adapter for ClickHouse, over the native
// protocol with github.com/ClickHouse/clickhouse-go/v2. It works with
// ClickHouse 18.16 (Debian's package) and with current releases.
//
// ClickHouse has no transactions, so a swap is a sequence of statements:
// the stage is a MergeTree table with the target's structure and partition
// key, and Publish replaces each physical partition the window touches with
// ALTER TABLE ... REPLACE PARTITION, which is atomic per partition. The
// ledger is written after the swap with INSERT ... SELECT into
// ReplacingMergeTree tables; see Adapter.Info for the guarantee.
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
// Weeks start on Monday, as refill's do; a week from Sunday is the
// Monday week of the next day, a day earlier (18.16 has no
// toStartOfWeek).
func (Dialect) DateTrunc(unit models.Grain, expr string) string {
	if unit == models.SundayWeek {
		return "addDays(toMonday(addDays(" + expr + ", 1)), -1)"
	}
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
	fn := map[models.Grain]string{models.Hour: "addHours", models.Day: "addDays", models.Week: "addWeeks", models.SundayWeek: "addWeeks",
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

// DateDiff renders dateDiff('unit', a, b), which counts unit boundaries
// (weeks from Monday) on 18.16 and on current servers; weeks from Sunday
// are counted between the next days.
func (Dialect) DateDiff(unit models.Grain, a, b string) string {
	if unit == models.SundayWeek {
		return fmt.Sprintf("dateDiff('week', addDays(%s, 1), addDays(%s, 1))", a, b)
	}
	return fmt.Sprintf("dateDiff('%s', %s, %s)", unit, a, b)
}

// TryCast renders the text of expr read as t, or NULL, with functions that
// 18.16 has: its toXOrNull functions wrap integers that overflow, accept
// impossible dates (2024-02-30 is 2024-03-01) and do not exist for
// decimals, and accurateCastOrNull came later. So numbers are parsed
// through Decimal128, rounded half away from zero and range-checked, as
// DuckDB's TRY_CAST does; dates and timestamps must read back as written.
// Surrounding white space is ignored except for booleans, as in DuckDB.
// NULL reads as the empty string, which is no value of any type but text:
// 18.16's if rejects constant Nullable conditions and Nullable branches of
// constants.
func (d Dialect) TryCast(expr string, t models.ColumnType) string {
	raw := "ifNull(toString(" + expr + "), '')"
	text := fmt.Sprintf("replaceRegexpAll(%s, %s, '')", raw, d.QuoteString(`^\s+|\s+$`))
	switch t {
	case models.TypeString:
		return "toString(" + expr + ")"
	case models.TypeBool:
		low := "lower(" + raw + ")"
		return fmt.Sprintf("multiIf(%s IN ('true', 't', 'yes', 'y', '1'), 1, %s IN ('false', 'f', 'no', 'n', '0'), 0, NULL)", low, low)
	case models.TypeFloat:
		return "toFloat64OrNull(" + text + ")"
	case models.TypeDate:
		date := "toDateOrNull(" + text + ")"
		return fmt.Sprintf("if(ifNull(toString(%s) = substring(%s, 1, 10), 0), assumeNotNull(%s), NULL)", date, text, date)
	case models.TypeTimestamp:
		// Complete a date or a time without seconds, drop a fraction
		// (DateTime holds seconds), accept a T between date and time.
		full := fmt.Sprintf("replaceOne(replaceRegexpOne(concat(%s, substring(' 00:00:00', length(%s) - 9)), %s, ''), 'T', ' ')",
			text, text, d.QuoteString(`\.[0-9]+$`))
		ts := "toDateTimeOrNull(" + full + ", 'UTC')"
		return fmt.Sprintf("if(ifNull(toString(%s) = %s, 0), assumeNotNull(%s), NULL)", ts, full, ts)
	case models.TypeInt:
		return d.tryInteger(text, "Int64", "-9223372036854775808", "9223372036854775807")
	case models.TypeInt32:
		return d.tryInteger(text, "Int32", "-2147483648", "2147483647")
	}
	p, sc, ok := t.Decimal()
	if !ok {
		return "toString(" + expr + ")"
	}
	good, r := d.parseNumber(text, p-sc, sc)
	// abs(r) < 10^(p-s): rounding may carry a digit the type lacks.
	good = fmt.Sprintf("%s AND abs(%s) < toDecimal128('1%s', 0)", good, r, strings.Repeat("0", p-sc))
	return fmt.Sprintf("if(%s, CAST(%s AS Decimal(%d, %d)), NULL)", good, r, p, sc)
}

// tryInteger renders text read as an integer of ClickHouse type typ
// within [lo, hi], or NULL. The conversion reads 0 where the value does
// not fit, since toInt64 throws on overflow and both branches of if run.
func (d Dialect) tryInteger(text, typ, lo, hi string) string {
	ok, r := d.parseNumber(text, len(hi), 0)
	good := fmt.Sprintf("%s AND %s >= toDecimal128('%s', 0) AND %s <= toDecimal128('%s', 0)", ok, r, lo, r, hi)
	return fmt.Sprintf("if(%s, to%s(if(%s, %s, toDecimal128('0', 1))), NULL)", good, typ, good, r)
}

// parseNumber returns SQL that tells whether text is a decimal number with
// at most digits integer digits, and SQL for its value as a Decimal128 with
// one decimal more than scale, rounded to scale decimals (half away from
// zero). The value is parsed from a prefix that always parses (or from
// '0'), so neither expression can throw.
func (d Dialect) parseNumber(text string, digits, scale int) (ok, value string) {
	extra := min(scale+1, 37) // one more decimal than kept, to round
	digits = max(1, min(digits, 38-extra))
	ok = fmt.Sprintf("match(%s, %s)", text, d.QuoteString(fmt.Sprintf(`^[-+]?([0-9]{1,%d}(\.[0-9]*)?|\.[0-9]+)$`, digits)))
	prefix := fmt.Sprintf("extract(%s, %s)", text, d.QuoteString(fmt.Sprintf(`^[-+]?[0-9]*(?:\.[0-9]{0,%d})?`, extra)))
	value = fmt.Sprintf("round(toDecimal128(if(%s, %s, '0'), %d), %d)", ok, prefix, extra, scale)
	return ok, value
}

// StringAgg renders arrayStringConcat(groupArray(toString(expr)), sep);
// with an order, the values are sorted as (orderBy, value) tuples.
// groupArray skips NULLs, and an empty group gives the empty string.
func (Dialect) StringAgg(expr, sep, orderBy string) string {
	if orderBy == "" {
		return fmt.Sprintf("arrayStringConcat(groupArray(toString(%s)), %s)", expr, sep)
	}
	return fmt.Sprintf("arrayStringConcat(arrayMap(refill_v -> refill_v.2, arraySort(groupArrayIf((%s, assumeNotNull(toString(%s))), isNotNull(%s)))), %s)",
		orderBy, expr, expr, sep)
}

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

// nullableType wraps a column type in Nullable(...).
func nullableType(typ string) string { return "Nullable(" + typ + ")" }

// HashRows sums the rows' cityHash64, modulo 2^64 (a UInt64), as text.
// cityHash64 is NULL when any argument is, and sum skips NULL: each value
// is hashed as whether it is NULL and its value otherwise, so that a row
// holding a NULL still hashes by its other columns.
func (Dialect) HashRows(exprs []string) string {
	args := make([]string, 0, 2*len(exprs))
	for _, e := range exprs {
		args = append(args, "isNull("+e+")", "assumeNotNull("+e+")")
	}
	return fmt.Sprintf("toString(sum(cityHash64(%s)))", strings.Join(args, ", "))
}
