package clickhouse

import (
	"testing"
	"time"

	"github.com/refill/refill/adapters"
)

func TestKeyBucket(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bucket
	}{
		{"d", bucketValue},
		{"`d`", bucketValue},
		{"assumeNotNull(d)", bucketValue},
		{"toYYYYMM(d)", bucketMonth},
		{"toYYYYMM(assumeNotNull(d))", bucketMonth},
		{"assumeNotNull(toYYYYMM(d))", bucketMonth},
		{"toYYYYMMDD(d)", bucketDay},
		{"toDate(d)", bucketDay},
		{"toStartOfHour(d)", bucketHour},
		{"toMonday(d)", bucketWeek},
		{"toStartOfYear(d)", bucketYear},
		{"toYear(d)", bucketYear},
		{"toYYYYMM(e)", bucketUnknown},           // another column
		{"(toYYYYMM(d), region)", bucketUnknown}, // a tuple
		{"intDiv(d, 7)", bucketUnknown},          // not a calendar function
		{"tuple()", bucketUnknown},
		{"", bucketUnknown},
	} {
		if got := keyBucket(c.key, "d"); got != c.want {
			t.Errorf("keyBucket(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

func TestPartitionKeyAndEngineClause(t *testing.T) {
	create := "CREATE TABLE db.t (`d` Date, `v` Int64) ENGINE = MergeTree PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192"
	if got, want := partitionKey(create), "toYYYYMM(d)"; got != want {
		t.Errorf("partitionKey = %q, want %q", got, want)
	}
	if got, want := engineClause(create), "ENGINE = MergeTree PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192"; got != want {
		t.Errorf("engineClause = %q, want %q", got, want)
	}
	// A column named like a keyword in the column list does not confuse it.
	noKey := "CREATE TABLE db.t (`ENGINE = ` String) ENGINE = MergeTree ORDER BY tuple()"
	if got := partitionKey(noKey); got != "" {
		t.Errorf("partitionKey of a table without one = %q", got)
	}
	if got := partitionKey("CREATE TABLE db.t (d Date) ENGINE = MergeTree PARTITION BY d PRIMARY KEY d ORDER BY d"); got != "d" {
		t.Errorf("partitionKey before PRIMARY KEY = %q", got)
	}
}

func TestAligned(t *testing.T) {
	utc := time.UTC
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err) // models links time/tzdata: every zone loads
	}
	day := func(s string, loc *time.Location) time.Time {
		d, err := time.ParseInLocation("2006-01-02", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	dates := func(from, to string) adapters.Window {
		return adapters.Window{Column: "d", Start: day(from, utc), End: day(to, utc), Location: utc}
	}
	stamps := func(from, to time.Time) adapters.Window {
		return adapters.Window{Column: "d", Start: from, End: to, Timestamp: true, Location: utc}
	}
	for _, c := range []struct {
		name    string
		key     string
		colType string
		w       adapters.Window
		want    bool
	}{
		{"a day in daily partitions", "d", "Date", dates("2024-01-05", "2024-01-06"), true},
		{"a day in monthly partitions", "toYYYYMM(d)", "Date", dates("2024-01-05", "2024-01-06"), false},
		{"a month in monthly partitions", "toYYYYMM(d)", "Date", dates("2024-01-01", "2024-02-01"), true},
		{"a year less a day in monthly partitions", "toYYYYMM(d)", "Date", dates("2024-01-01", "2024-12-31"), false},
		{"two months in monthly partitions", "toYYYYMM(d)", "Date", dates("2024-01-01", "2024-03-01"), true},
		{"a week from Monday in weekly partitions", "toMonday(d)", "Date", dates("2024-01-01", "2024-01-08"), true},
		{"a week from Tuesday in weekly partitions", "toMonday(d)", "Date", dates("2024-01-02", "2024-01-09"), false},
		{"a year in yearly partitions", "toYear(d)", "Date", dates("2024-01-01", "2025-01-01"), true},
		{"a month in yearly partitions", "toYear(d)", "Date", dates("2024-01-01", "2024-02-01"), false},
		{"dates in hourly partitions", "toStartOfHour(d)", "Date", dates("2024-01-01", "2024-01-02"), false},
		{"an unknown key", "intDiv(v, 2)", "Date", dates("2024-01-01", "2024-02-01"), false},
		{"a timestamp window over a Date", "toYYYYMM(d)", "Date", stamps(day("2024-01-01", utc), day("2024-02-01", utc)), false},
		{"a date window over a DateTime", "toYYYYMM(d)", "DateTime", dates("2024-01-01", "2024-02-01"), false},
		{"hours in hourly partitions", "toStartOfHour(d)", "DateTime", stamps(day("2024-01-01", utc).Add(3*time.Hour), day("2024-01-01", utc).Add(5*time.Hour)), true},
		{"half hours in hourly partitions", "toStartOfHour(d)", "DateTime", stamps(day("2024-01-01", utc).Add(30*time.Minute), day("2024-01-01", utc).Add(90*time.Minute)), false},
		{"a UTC day in a New York column", "toYYYYMMDD(d)", "DateTime('America/New_York')", stamps(day("2024-01-01", utc), day("2024-01-02", utc)), false},
		{"a New York day in a New York column", "toYYYYMMDD(d)", "DateTime('America/New_York')", stamps(day("2024-01-01", ny), day("2024-01-02", ny)), true},
		{"a UTC day in a column of the server's zone", "toYYYYMMDD(d)", "DateTime", stamps(day("2024-01-01", utc), day("2024-01-02", utc)), true},
		{"a DateTime64", "toYYYYMMDD(d)", "DateTime64(3)", stamps(day("2024-01-01", utc), day("2024-01-02", utc)), false},
		{"the whole table", "toYYYYMM(d)", "Date", adapters.Window{}, true},
		{"list values in value partitions", "d", "String", adapters.Window{Column: "d", Values: []any{"a"}}, true},
		{"list values in other partitions", "substring(d, 1, 1)", "String", adapters.Window{Column: "d", Values: []any{"a"}}, false},
	} {
		if got := aligned(c.key, c.colType, utc, c.w); got != c.want {
			t.Errorf("%s: aligned(%q, %s) = %v, want %v", c.name, c.key, c.colType, got, c.want)
		}
	}
}

func TestInside(t *testing.T) {
	utc := time.UTC
	d := func(s string) time.Time { x, _ := time.Parse("2006-01-02", s); return x }
	w := adapters.Window{Column: "d", Start: d("2024-01-05"), End: d("2024-01-07"), Location: utc}
	for _, c := range []struct {
		lo, hi string
		want   bool
	}{
		{"2024-01-05", "2024-01-06", true},
		{"2024-01-05", "2024-01-05", true},
		{"2024-01-04", "2024-01-06", false},
		{"2024-01-05", "2024-01-07", false},
	} {
		if got := inside(d(c.lo), d(c.hi), w); got != c.want {
			t.Errorf("inside(%s, %s) of [2024-01-05, 2024-01-07) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	// Dates against a window in another zone compare as its dates.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err) // models links time/tzdata: every zone loads
	}
	start, _ := time.ParseInLocation("2006-01-02", "2024-01-05", ny)
	wny := adapters.Window{Column: "d", Start: start, End: start.AddDate(0, 0, 1), Location: ny}
	if !inside(d("2024-01-05"), d("2024-01-05"), wny) || inside(d("2024-01-06"), d("2024-01-06"), wny) {
		t.Errorf("inside: dates compare with the window's dates in its zone")
	}
}

func TestParseIn(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err) // models links time/tzdata: every zone loads
	}
	got, err := parseIn("2024-01-05 10:00:00", "2006-01-02 15:04:05", "DateTime('America/New_York')", time.UTC)
	if err != nil || !got.Equal(time.Date(2024, 1, 5, 15, 0, 0, 0, time.UTC)) {
		t.Errorf("a New York DateTime: %v, %v", got, err)
	}
	got, err = parseIn("2024-01-05 10:00:00", "2006-01-02 15:04:05", "DateTime", ny)
	if err != nil || !got.Equal(time.Date(2024, 1, 5, 15, 0, 0, 0, time.UTC)) {
		t.Errorf("a DateTime in the server's zone: %v, %v", got, err)
	}
	if _, err := parseIn("2024-01-05 10:00:00", "2006-01-02 15:04:05", "DateTime", nil); err == nil {
		t.Errorf("a DateTime without a known server zone parsed")
	}
	got, err = parseIn("2024-01-05", "2006-01-02", "Date", ny)
	if err != nil || !got.Equal(time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a Date: %v, %v", got, err)
	}
}
