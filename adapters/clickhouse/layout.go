package clickhouse

import (
	"strings"
	"time"

	"github.com/refill/refill/adapters"
)

// A table's layout: how its partition key groups rows. When every
// physical partition lies inside or outside a window, the window's
// partitions can be replaced straight from the stage; otherwise a swap
// table must carry the rows of the touched partitions that lie outside the
// window (see publish.go).

// bucket is the span of the values of the partition column one physical
// partition holds.
type bucket int

const (
	bucketUnknown bucket = iota // not a key refill understands
	bucketValue                 // one value of the column per partition
	bucketHour
	bucketDay
	bucketWeek // ISO weeks, from Monday
	bucketMonth
	bucketYear
)

// bucketFuncs are the partition key functions whose partitions are
// calendar spans of their argument.
var bucketFuncs = map[string]bucket{
	"toStartOfHour": bucketHour,
	"toYYYYMMDD":    bucketDay, "toDate": bucketDay, "toStartOfDay": bucketDay,
	"toMonday": bucketWeek,
	"toYYYYMM": bucketMonth, "toStartOfMonth": bucketMonth,
	"toYear": bucketYear, "toStartOfYear": bucketYear,
}

// keyBucket returns the span of column col that each partition of the
// partition key expression key holds, or bucketUnknown. The expression
// is as SHOW CREATE TABLE prints it; only a column or one of bucketFuncs
// of it (either possibly inside assumeNotNull) is understood.
func keyBucket(key, col string) bucket {
	e := strings.ReplaceAll(strings.ReplaceAll(key, "`", ""), " ", "")
	b := bucketValue
	if f, arg, ok := call(e); ok && f == "assumeNotNull" {
		e = arg
	}
	if f, arg, ok := call(e); ok {
		if b = bucketFuncs[f]; b == bucketUnknown {
			return bucketUnknown
		}
		e = arg
	}
	if f, arg, ok := call(e); ok && f == "assumeNotNull" {
		e = arg
	}
	if e != col {
		return bucketUnknown
	}
	return b
}

// call splits f(arg) into its parts.
func call(e string) (f, arg string, ok bool) {
	i := strings.IndexByte(e, '(')
	if i <= 0 || !strings.HasSuffix(e, ")") {
		return "", "", false
	}
	return e[:i], e[i+1 : len(e)-1], true
}

// partitionKey returns the PARTITION BY expression of a CREATE TABLE
// statement, or "" if it has none.
func partitionKey(create string) string {
	i := strings.LastIndex(create, "ENGINE = ")
	if i < 0 {
		return ""
	}
	engine := create[i:]
	j := strings.Index(engine, "PARTITION BY ")
	if j < 0 {
		return ""
	}
	key := engine[j+len("PARTITION BY "):]
	end := len(key)
	for _, kw := range []string{"ORDER BY ", "PRIMARY KEY ", "SAMPLE BY ", "TTL ", "SETTINGS "} {
		if k := strings.Index(key, kw); k >= 0 && k < end {
			end = k
		}
	}
	return strings.TrimSpace(key[:end])
}

// engineClause returns the ENGINE = ... clause of a CREATE TABLE
// statement, through its end.
func engineClause(create string) string {
	i := strings.LastIndex(create, "ENGINE = ")
	if i < 0 {
		return ""
	}
	return strings.Join(strings.Fields(create[i:]), " ")
}

// aligned reports whether every physical partition of a table whose
// partition key is key lies wholly inside or wholly outside window w,
// given the partition column's type and the server's time zone. It is
// false whenever that cannot be known.
func aligned(key, colType string, serverZone *time.Location, w adapters.Window) bool {
	if w.Whole() {
		return true
	}
	b := keyBucket(key, w.Column)
	if b == bucketValue {
		return true // each partition holds one value: in the window or not
	}
	if b == bucketUnknown || w.Values != nil {
		return false
	}
	// The calendar the key's functions use: a Date's own, or a DateTime's
	// time zone.
	var loc *time.Location
	switch t := baseType(colType); {
	case t == "Date":
		if w.Timestamp {
			return false
		}
		loc = w.Location
		if loc == nil {
			loc = time.UTC
		}
		// The window's DATE literals are its bounds' dates in loc.
		start, end := w.Start.In(loc), w.End.In(loc)
		return onBoundary(b, midnight(start), loc) && onBoundary(b, midnight(end), loc) && b != bucketHour
	case strings.HasPrefix(t, "DateTime") && !strings.HasPrefix(t, "DateTime64"):
		if !w.Timestamp {
			return false
		}
		loc = serverZone
		if zone, ok := strings.CutPrefix(t, "DateTime('"); ok {
			z, err := time.LoadLocation(strings.TrimSuffix(zone, "')"))
			if err != nil {
				return false
			}
			loc = z
		}
		if loc == nil {
			return false
		}
		return onBoundary(b, w.Start, loc) && onBoundary(b, w.End, loc)
	}
	return false
}

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// onBoundary reports whether instant t starts a span of b in loc.
func onBoundary(b bucket, t time.Time, loc *time.Location) bool {
	t = t.In(loc)
	if t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
		return false
	}
	if b == bucketHour {
		return true
	}
	if t.Hour() != 0 {
		return false
	}
	switch b {
	case bucketDay:
		return true
	case bucketWeek:
		return t.Weekday() == time.Monday
	case bucketMonth:
		return t.Day() == 1
	case bucketYear:
		return t.Day() == 1 && t.Month() == time.January
	}
	return false
}
