package models

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Dialect renders the SQL text of one warehouse. It does no I/O, so every
// statement refill issues can be rendered and tested without a connection.
// Implementations must be safe for concurrent use.
type Dialect interface {
	// Name is the adapter's name, as a target's adapter: writes it.
	Name() string
	// QuoteIdent quotes one identifier (a schema, table or column name),
	// applying the warehouse's case rules.
	QuoteIdent(name string) string
	// QuoteString renders s as a string literal.
	QuoteString(s string) string
	// Date renders the calendar date of t, in t's location, as a DATE literal.
	Date(t time.Time) string
	// Timestamp renders the instant t as a UTC timestamp literal.
	Timestamp(t time.Time) string
	// Bool renders a boolean literal.
	Bool(b bool) string
	// DateTrunc, DateAdd and CastDate render expressions over the SQL
	// expression expr; they back the template helpers of the same names.
	DateTrunc(unit Grain, expr string) string
	DateAdd(expr string, n int, unit Grain) string
	CastDate(expr string) string
	// CastString renders expr converted to text.
	CastString(expr string) string
	// DateDiff renders the number of unit boundaries crossed from a to b,
	// as an integer (negative when b is earlier): calendar days, weeks
	// starting on Monday (Week) or Sunday (SundayWeek), months, years,
	// hours. It backs date_diff.
	DateDiff(unit Grain, a, b string) string
	// TryCast renders the text of expr read as a value of type t, NULL
	// where it is not one. It backs try_cast.
	TryCast(expr string, t ColumnType) string
	// StringAgg renders an aggregate that joins the text of expr's non-NULL
	// values with sep (a rendered literal), in the order of orderBy when it
	// is not empty; it is the empty string when there are no values. It
	// backs string_agg.
	StringAgg(expr, sep, orderBy string) string
	// ColumnType returns the dialect's type for a portable column type.
	ColumnType(t ColumnType) string
	// HashRows renders an aggregate over the SQL expressions exprs (a
	// row's columns) whose value depends on the multiset of rows and not
	// on their order: two tables of equal rows hash alike, and tables that
	// differ almost surely do not. It fingerprints a table's content.
	HashRows(exprs []string) string
}

// SQL is text that a template splices into a statement verbatim: relations
// from ref(), source() and this, expressions from the date helpers, and
// whatever the model author passes to raw(). Every other template value is
// rendered as a quoted literal.
type SQL string

// Time is a date or timestamp in a template (start, end and the results of
// date arithmetic on them). It renders as a typed literal of the dialect.
type Time struct {
	T         time.Time // in the model's time zone
	Timestamp bool      // render as a TIMESTAMP (in UTC) rather than a DATE
}

// Literal renders v as a SQL literal of dialect d. Strings are quoted,
// numbers and booleans formatted, nil is NULL, a list renders as a
// parenthesised list for IN, and SQL is returned as is.
func Literal(d Dialect, v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case SQL:
		return string(v), nil
	case string:
		return d.QuoteString(v), nil
	case bool:
		return d.Bool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int8, int16, int32, int64:
		return fmt.Sprintf("%d", v), nil
	case uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("%d", v), nil
	case float32:
		return formatFloat(float64(v))
	case float64:
		return formatFloat(v)
	case Time:
		if v.Timestamp {
			return d.Timestamp(v.T), nil
		}
		return d.Date(v.T), nil
	case time.Time:
		return d.Timestamp(v), nil
	case []any:
		if len(v) == 0 {
			return "(NULL)", nil // IN (NULL) matches nothing, like an empty list
		}
		parts := make([]string, len(v))
		for i, x := range v {
			s, err := Literal(d, x)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "(" + strings.Join(parts, ", ") + ")", nil
	case []string:
		list := make([]any, len(v))
		for i, s := range v {
			list[i] = s
		}
		return Literal(d, list)
	}
	return "", fmt.Errorf("cannot render a %T as SQL; wrap SQL text in raw(...)", v)
}

func formatFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("cannot render %v as a SQL literal", f)
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// Relation names a table: an optional database, a schema and a table name.
// An empty Schema means the target's default schema.
type Relation struct {
	Database string
	Schema   string
	Name     string
}

// Quote renders r with d's identifier quoting.
func (r Relation) Quote(d Dialect) string {
	var parts []string
	for _, p := range []string{r.Database, r.Schema, r.Name} {
		if p != "" {
			parts = append(parts, d.QuoteIdent(p))
		}
	}
	return strings.Join(parts, ".")
}

// String returns the unquoted dotted name.
func (r Relation) String() string {
	var parts []string
	for _, p := range []string{r.Database, r.Schema, r.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// ParseRelation splits "schema.table" or "database.schema.table".
func ParseRelation(name string) (Relation, error) {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if p == "" {
			return Relation{}, fmt.Errorf("invalid table name %q", name)
		}
	}
	switch len(parts) {
	case 1:
		return Relation{Name: parts[0]}, nil
	case 2:
		return Relation{Schema: parts[0], Name: parts[1]}, nil
	case 3:
		return Relation{Database: parts[0], Schema: parts[1], Name: parts[2]}, nil
	}
	return Relation{}, fmt.Errorf("invalid table name %q: want table, schema.table or database.schema.table", name)
}
