package models

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGrainKeys(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 1, 2, 13, 45, 0, 0, time.UTC)
	for _, tc := range []struct {
		g         Grain
		key, next string
	}{
		{Hour, "2024-01-02T13", "2024-01-02T14"},
		{Day, "2024-01-02", "2024-01-03"},
		{Week, "2024-W01", "2024-W02"},
		{Month, "2024-01", "2024-02"},
		{Year, "2024", "2025"},
	} {
		start := tc.g.Truncate(at, time.UTC)
		if got := tc.g.Key(start); got != tc.key {
			t.Errorf("%s: key %q, want %q", tc.g, got, tc.key)
		}
		if got := tc.g.Key(tc.g.Add(start, 1)); got != tc.next {
			t.Errorf("%s: next key %q, want %q", tc.g, got, tc.next)
		}
		back, err := tc.g.ParseKey(tc.key, time.UTC)
		if err != nil || !back.Equal(start) {
			t.Errorf("%s: ParseKey(%q) = %v, %v; want %v", tc.g, tc.key, back, err, start)
		}
	}
}

func TestISOWeeks(t *testing.T) {
	t.Parallel()
	// 2021-01-03 is a Sunday in ISO week 2020-W53; 2024-12-30 is in 2025-W01.
	for day, want := range map[string]string{"2021-01-03": "2020-W53", "2021-01-04": "2021-W01", "2024-12-30": "2025-W01", "2024-01-01": "2024-W01"} {
		start := Week.Truncate(date(day), time.UTC)
		if start.Weekday() != time.Monday {
			t.Errorf("week of %s starts on %s", day, start.Weekday())
		}
		if got := Week.Key(start); got != want {
			t.Errorf("week of %s = %s, want %s", day, got, want)
		}
		back, err := Week.ParseKey(want, time.UTC)
		if err != nil || !back.Equal(start) {
			t.Errorf("ParseKey(%s) = %v, %v; want %v", want, back, err, start)
		}
	}
	if _, err := ParsePeriod("2024-W53", time.UTC); err == nil {
		t.Error("2024 has no ISO week 53, but it parsed")
	}
}

func TestParsePeriodErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2024-13-01", "2024-02-30", "yesterday", "2024-1-1", "2024-01-02T25"} {
		if _, err := ParsePeriod(s, time.UTC); err == nil {
			t.Errorf("ParsePeriod(%q) succeeded", s)
		}
	}
	if _, err := Day.ParseKey("2024-01", time.UTC); err == nil {
		t.Error("a month key parsed as a day key")
	}
}

func TestDSTDays(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err) // time/tzdata is linked in: every zone loads
	}
	// Clocks go forward on 2024-03-31 (23 h) and back on 2024-10-27 (25 h).
	for day, hours := range map[string]float64{"2024-03-30": 24, "2024-03-31": 23, "2024-10-27": 25} {
		start, err := Day.ParseKey(day, berlin)
		if err != nil {
			t.Fatal(err)
		}
		end := Day.Add(start, 1)
		if got := end.Sub(start).Hours(); got != hours {
			t.Errorf("%s lasts %v hours, want %v", day, got, hours)
		}
		if Day.Key(start) != day || Day.Key(end) == day {
			t.Errorf("%s: keys %s..%s", day, Day.Key(start), Day.Key(end))
		}
	}
	// Local midnight is 23:00 UTC the day before in winter, 22:00 in summer.
	start, _ := Day.ParseKey("2024-10-27", berlin)
	if got := start.UTC().Format(time.RFC3339); got != "2024-10-26T22:00:00Z" {
		t.Errorf("start of 2024-10-27 in Berlin = %s", got)
	}
	if got := Day.Add(start, 1).UTC().Format(time.RFC3339); got != "2024-10-27T23:00:00Z" {
		t.Errorf("end of 2024-10-27 in Berlin = %s", got)
	}
}

func TestModelPartitions(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{
		"models/m.sql": "/* refill\npartition_by: d\ngrain: month\nstart: 2024-01-15\n*/\nSELECT 1",
	})
	m := mustModel(t, p, "m")
	got := keys(m.Partitions(date("2023-06-01"), date("2024-03-31")))
	if diff := cmp.Diff([]string{"2024-01", "2024-02", "2024-03"}, got); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
	now := time.Date(2024, 3, 10, 5, 0, 0, 0, time.UTC)
	last, ok := m.LastComplete(now)
	if !ok || m.PartitionAt(last).Key != "2024-02" {
		t.Errorf("last complete at %v = %v %v, want 2024-02", now, last, ok)
	}
	if _, ok := m.LastComplete(date("2024-01-20")); ok {
		t.Error("a partition is complete before the first one ends")
	}
}

// TestDateErrorsSayTheForms: a date in another form is answered with the
// forms taken, in words with examples, and the text received; never Go's
// layout.
func TestDateErrorsSayTheForms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2024/03/01":    `invalid date or partition key "2024/03/01": want a year (2024), a month (2024-03), an ISO week (2024-W09), a day (2024-03-01)`,
		"01/15/2024":    `"01/15/2024": want a year (2024)`,
		"2024-03-01T1x": `"2024-03-01T1x": want a year`,
		"yesterday":     `"yesterday": want a year`,
		"2024-13-01":    `"2024-13-01": month out of range`,
		"2024-02-30":    `"2024-02-30": day out of range`,
	} {
		_, err := ParsePeriod(in, time.UTC)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "2006") || strings.Contains(err.Error(), `as "`) {
			t.Errorf("ParsePeriod(%q) = %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{"2x", "-1d", "1.5d", "soon"} {
		if _, err := ParseDuration(in); err == nil || !strings.Contains(err.Error(), `"`+in+`": want a whole number of days (1d)`) {
			t.Errorf("ParseDuration(%q) = %v", in, err)
		}
	}
}
