package models

import (
	"strings"
	"testing"
	"time"
)

// Fiscal years of months and of weeks, across calendar years: where each
// starts, how long it is, its key, and the keys that are not one.
func TestFiscalYears(t *testing.T) {
	t.Parallel()
	april := FiscalYear(time.April)
	// The Sunday nearest February 1: 2023-01-29 (3 days before),
	// 2024-02-04 (3 after), 2025-02-02; the year from 2023-01-29 has 53
	// weeks. The Sunday nearest January 1: 2023-01-01, 2023-12-31,
	// 2024-12-29, 2026-01-04.
	feb := WeekFiscalYear(time.February, time.Sunday)
	jan := WeekFiscalYear(time.January, time.Sunday)
	for _, tc := range []struct {
		g         Grain
		at        string
		key, next string
		days      int
	}{
		{april, "2024-03-31", "2023-04", "2024-04", 366},
		{april, "2024-04-01", "2024-04", "2025-04", 365},
		{april, "2024-12-31", "2024-04", "2025-04", 365},
		{FiscalYear(time.October), "2024-09-30", "2023-10", "2024-10", 366},
		{feb, "2023-01-29", "2023-01-29", "2024-02-04", 371},
		{feb, "2024-02-03", "2023-01-29", "2024-02-04", 371},
		{feb, "2024-02-04", "2024-02-04", "2025-02-02", 364},
		{feb, "2023-01-28", "2022-01-30", "2023-01-29", 364},
		{jan, "2024-12-28", "2023-12-31", "2024-12-29", 364},
		{jan, "2024-12-30", "2024-12-29", "2026-01-04", 371}, // a new calendar year, the same fiscal one
		{jan, "2026-01-03", "2024-12-29", "2026-01-04", 371},
		{WeekFiscalYear(time.July, time.Saturday), "2024-07-01", "2024-06-29", "2025-06-28", 364},
	} {
		start := tc.g.Truncate(date(tc.at).Add(15*time.Hour), time.UTC)
		next := tc.g.Add(start, 1)
		if got := tc.g.Key(start); got != tc.key || tc.g.Key(next) != tc.next || int(next.Sub(start).Hours()/24) != tc.days {
			t.Errorf("%s of %s: %s (%s) to %s, %.0f days; want %s to %s, %d days", tc.g, tc.at, got, start.Format(time.DateOnly),
				tc.g.Key(next), next.Sub(start).Hours()/24, tc.key, tc.next, tc.days)
		}
		if back := tc.g.Add(next, -1); !back.Equal(start) {
			t.Errorf("%s: the year before %s starts %s, want %s", tc.g, tc.next, back, start)
		}
		if p, err := tc.g.ParseKey(tc.key, time.UTC); err != nil || !p.Equal(start) {
			t.Errorf("%s: ParseKey(%s) = %v, %v", tc.g, tc.key, p, err)
		}
	}
	for g, keys := range map[Grain][]string{april: {"2024-05", "2024", "2024-04-01"}, feb: {"2024-02-01", "2024-02", "2024"}} {
		for _, k := range keys {
			if _, err := g.ParseKey(k, time.UTC); err == nil || !strings.Contains(err.Error(), "does not start a "+g.String()) {
				t.Errorf("%s: ParseKey(%q) = %v", g, k, err)
			}
		}
	}
	if FiscalYear(time.January) != Year || april.String() != "fiscal year from April" || feb.String() != "fiscal year from the Sunday nearest February 1" {
		t.Errorf("names: %s, %s, %s", FiscalYear(time.January), april, feb)
	}
	// In a time zone, a fiscal year starts at local midnight.
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	if got := april.Truncate(time.Date(2024, 3, 31, 16, 0, 0, 0, time.UTC), tokyo); got.Format(time.RFC3339) != "2024-04-01T00:00:00+09:00" {
		t.Errorf("the fiscal year of 2024-03-31T16:00Z in Tokyo starts %s", got)
	}
}

// Which grains divide which: what lets a coarser model read a finer one
// period by period.
func TestGrainsDivide(t *testing.T) {
	t.Parallel()
	april, feb := FiscalYear(time.April), WeekFiscalYear(time.February, time.Sunday)
	for _, tc := range []struct {
		g, h Grain
		want bool
	}{
		{Day, Week, true}, {Day, april, true}, {Hour, feb, true}, {Month, Year, true}, {Month, april, true},
		{Month, feb, false}, {Week, Month, false}, {Week, feb, false}, {SundayWeek, feb, true},
		{SundayWeek, Week, false}, {Year, april, false}, {april, Year, false}, {Year, Year, true},
	} {
		if got := tc.g.Divides(tc.h); got != tc.want {
			t.Errorf("%s divides %s: %v, want %v", tc.g, tc.h, got, tc.want)
		}
	}
}

// fiscal_year_start: as a month, a month's number, or with week_start;
// errors at their line; date_trunc("fiscal_year", ...) in SQL and on
// start.
func TestFiscalYearStart(t *testing.T) {
	t.Parallel()
	model := func(header, sql string) string {
		return "/* refill\npartition_by: fy\ngrain: year\n" + header + "\nstart: 2023-06-01\n*/\n" + sql + "\n"
	}
	p := mustLoad(t, map[string]string{
		"models/apr.sql":   model("fiscal_year_start: april", `SELECT {{ date_trunc("fiscal_year", ident("d")) }} AS fy, {{ date_trunc("fiscal_year", end) }} AS e`),
		"models/oct.sql":   model("fiscal_year_start: 10", "SELECT {{ start }} AS fy"),
		"models/weeks.sql": model("fiscal_year_start: {month: Feb, week_start: saturday}", "SELECT {{ start }} AS fy"),
		"models/jan.sql":   model("fiscal_year_start: january", "SELECT {{ start }} AS fy"),
	})
	for name, want := range map[string]Grain{"apr": FiscalYear(time.April), "oct": FiscalYear(time.October),
		"weeks": WeekFiscalYear(time.February, time.Saturday), "jan": Year} {
		if m := mustModel(t, p, name); m.Config.Grain != want {
			t.Errorf("%s: grain %s, want %s", name, m.Config.Grain, want)
		}
	}
	apr := mustModel(t, p, "apr")
	if !apr.Config.Start.Equal(date("2023-04-01")) {
		t.Errorf("start: 2023-06-01 of a fiscal year from April is %s", apr.Config.Start)
	}
	part, err := apr.Partition("2023-04")
	if err != nil {
		t.Fatal(err)
	}
	sql, err := apr.Render(&Scope{Dialect: ansi{}, Schema: "main"}, part)
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT (date_trunc('year', ("d" + INTERVAL '-3 month')) + INTERVAL '3 month') AS fy, DATE '2024-04-01' AS e`; !strings.Contains(sql, want) {
		t.Errorf("render:\n%s\nwant %s", sql, want)
	}
	for header, want := range map[string]string{
		"fiscal_year_start: april\nweek_start: sunday":         "models/bad.sql:5:13: week_start applies to grain: week",
		"fiscal_year_start: aprl":                              `models/bad.sql:4:20: fiscal_year_start: "aprl" is not a month (want its name, such as april, or its number, 1 to 12) (did you mean "april"?)`,
		"fiscal_year_start: 13":                                `models/bad.sql:4:20: fiscal_year_start: "13" is not a month`,
		"fiscal_year_start: {month: may, week_start: someday}": `models/bad.sql:4:20: fiscal_year_start: week_start must be a day of the week (sunday, monday, ...), not "someday"`,
		"fiscal_year_start: {week_start: sunday}":              "models/bad.sql:4:20: fiscal_year_start needs month:",
		"fiscal_year_start: {month: may, weekday: sunday}":     `models/bad.sql:4:33: unknown key "weekday" in fiscal_year_start`,
	} {
		_, err := load(t, map[string]string{"models/bad.sql": model(header, "SELECT {{ start }} AS fy")})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", header, err, want)
		}
	}
	_, err = load(t, map[string]string{"models/bad.sql": "/* refill\npartition_by: d\ngrain: month\nfiscal_year_start: april\nstart: 2024-01-01\n*/\nSELECT {{ start }} AS d\n"})
	if err == nil || !strings.Contains(err.Error(), "models/bad.sql:4:20: fiscal_year_start applies to grain: year") {
		t.Errorf("fiscal_year_start on a monthly model: %v", err)
	}
	// date_trunc("fiscal_year") needs a fiscal model; in SQL, one of months.
	bad := map[string]string{
		"models/calendar.sql": "/* refill\npartition_by: fy\ngrain: year\nstart: 2024-01-01\n*/\nSELECT {{ date_trunc(\"fiscal_year\", start) }} AS fy\n",
		"models/weekly.sql":   model("fiscal_year_start: {month: february, week_start: sunday}", `SELECT {{ date_trunc("fiscal_year", ident("d")) }} AS fy`),
	}
	for name, want := range map[string]string{
		"calendar": `date_trunc("fiscal_year", ...) is the model's fiscal year: declare fiscal_year_start: with grain: year`,
		"weekly":   `date_trunc("fiscal_year", ...) of SQL is not computed for a fiscal year of weeks: use {{ start }}`,
	} {
		p, err := load(t, map[string]string{"models/" + name + ".sql": bad["models/"+name+".sql"]})
		if err == nil {
			m := mustModel(t, p, name)
			var part Partition
			if part, err = m.Partition(m.Config.Grain.Key(m.Config.Start)); err == nil {
				_, err = m.Render(&Scope{Dialect: ansi{}, Schema: "main"}, part)
			}
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %q", name, err, want)
		}
	}
}
