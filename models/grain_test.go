package models

import (
	"slices"
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

// Weeks from Sunday (week_start: sunday) across year boundaries: keyed
// by their Sunday's date, seven days long, and never split by a new year.
func TestSundayWeeks(t *testing.T) {
	t.Parallel()
	// 2023-12-31 and 2024-12-29 are Sundays; 2025-01-04 is a Saturday.
	for day, want := range map[string]string{"2023-12-31": "2023-12-31", "2024-01-06": "2023-12-31", "2024-01-07": "2024-01-07",
		"2024-12-31": "2024-12-29", "2025-01-04": "2024-12-29", "2025-01-05": "2025-01-05", "2024-02-29": "2024-02-25"} {
		start := SundayWeek.Truncate(date(day).Add(13*time.Hour), time.UTC)
		if got := SundayWeek.Key(start); got != want || start.Weekday() != time.Sunday {
			t.Errorf("the week from Sunday of %s = %s (a %s), want %s", day, got, start.Weekday(), want)
		}
		back, err := SundayWeek.ParseKey(want, time.UTC)
		if err != nil || !back.Equal(start) {
			t.Errorf("ParseKey(%s) = %v, %v; want %v", want, back, err, start)
		}
		if next := SundayWeek.Add(start, 1); next.Sub(start) != 7*24*time.Hour || next.Weekday() != time.Sunday {
			t.Errorf("the week after %s starts %s", want, next)
		}
	}
	// A local week from Sunday across a DST change is a calendar week.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	start := SundayWeek.Truncate(time.Date(2024, 3, 12, 0, 0, 0, 0, ny), ny)
	if next := SundayWeek.Add(start, 1); start.Format("2006-01-02 15:04") != "2024-03-10 00:00" || next.Format("2006-01-02 15:04") != "2024-03-17 00:00" {
		t.Errorf("the local week of 2024-03-12 is %s to %s", start, next)
	}
	for _, bad := range []string{"2024-01-08", "2024-W02", "2024-01"} {
		if _, err := SundayWeek.ParseKey(bad, time.UTC); err == nil || !strings.Contains(err.Error(), "starting on Sunday") {
			t.Errorf("ParseKey(%q) = %v, want an error naming Sundays", bad, err)
		}
	}
}

// week_start: sunday makes a weekly model's partitions weeks from Sunday;
// week_start elsewhere, an unknown day, or the internal grain name are
// errors at their line.
func TestWeekStart(t *testing.T) {
	t.Parallel()
	model := func(header string) string {
		return "/* refill\npartition_by: w\n" + header + "\nstart: 2024-12-01\n*/\nSELECT {{ start }} AS w\n"
	}
	p := mustLoad(t, map[string]string{
		"models/sun.sql": model("grain: week\nweek_start: sunday"),
		"models/mon.sql": model("grain: week\nweek_start: monday"),
	})
	sun, mon := mustModel(t, p, "sun"), mustModel(t, p, "mon")
	if sun.Config.Grain != SundayWeek || mon.Config.Grain != Week {
		t.Fatalf("grains %s and %s", sun.Config.Grain, mon.Config.Grain)
	}
	// start: 2024-12-01 is a Sunday; the weeks run into 2025 unsplit.
	var keys []string
	for _, part := range sun.Partitions(sun.Config.Start, date("2025-01-13")) {
		keys = append(keys, part.Key)
	}
	if want := []string{"2024-12-01", "2024-12-08", "2024-12-15", "2024-12-22", "2024-12-29", "2025-01-05", "2025-01-12"}; !slices.Equal(keys, want) {
		t.Errorf("weeks from Sunday: %v, want %v", keys, want)
	}
	if got := mon.PartitionAt(date("2025-01-01")).Key; got != "2025-W01" {
		t.Errorf("the Monday week of 2025-01-01 is %s", got)
	}
	if part := sun.PartitionAt(date("2025-01-01")); part.Key != "2024-12-29" || !part.End.Equal(date("2025-01-05")) {
		t.Errorf("the Sunday week of 2025-01-01 is %s to %s", part.Key, part.End)
	}
	for header, want := range map[string]string{
		"grain: day\nweek_start: sunday":    "models/bad.sql:4:13: week_start applies to grain: week",
		"grain: week\nweek_start: tuesday":  `models/bad.sql:4:13: week_start must be monday (ISO weeks, the default) or sunday, not "tuesday"`,
		"grain: sunday_week":                "models/bad.sql:3:8: weeks from Sunday are grain: week with week_start: sunday",
		"grain: week\nweek_start: [sunday]": "models/bad.sql:4",
	} {
		_, err := load(t, map[string]string{"models/bad.sql": model(header)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", header, err, want)
		}
	}
}
