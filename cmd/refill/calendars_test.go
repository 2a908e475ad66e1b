package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// Weekly models from Sunday (week_start: sunday) and from Monday, and
// fiscal years of months (from October, batched, truncated in SQL) and of
// weeks (from the Sunday nearest February 1), over a daily model across
// the ends of years, on DuckDB and, when CLICKHOUSE_DSN is set, on
// ClickHouse: each period holds the sum of its days, the week that
// straddles the new year is one partition keyed by its Sunday, and
// periods still open at --now are left out.
func TestCalendarsAcrossTheYearsEnd(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"duckdb", "clickhouse"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			if engine == "clickhouse" {
				adaptertest.ClickHouseServer.Env(t)
			}
			calendarsAcrossTheYearsEnd(t, engine)
		})
	}
}

func calendarsAcrossTheYearsEnd(t *testing.T, engine string) {
	b := make([]byte, 3)
	rand.Read(b)
	prefix := ""
	dir := t.TempDir()
	if engine == "clickhouse" {
		prefix = "w" + hex.EncodeToString(b) + "_"
		write(t, dir, "refill.yml", "targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\"}\n")
	} else {
		write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\n")
	}
	write(t, dir, "models/"+prefix+"staging/days.sql", `/* refill
partition_by: d
grain: day
start: 2022-12-01
batch: 200
*/
SELECT d, sum(v) AS v FROM {{ source("`+prefix+`src.events") }}
WHERE d >= {{ start }} AND d < {{ end }}
GROUP BY d`)
	weekly := func(start, unit string) string {
		return `/* refill
partition_by: w
grain: week
` + start + `start: 2024-12-01
*/
SELECT {{ cast_date(date_trunc("` + unit + `", ident("d"))) }} AS w, sum(v) AS v, count(*) AS days
FROM {{ ref("` + prefix + `staging.days") }}
WHERE d >= {{ start }} AND d < {{ end }}
GROUP BY w`
	}
	write(t, dir, "models/"+prefix+"marts/sun.sql", weekly("week_start: sunday\n", "sunday_week"))
	write(t, dir, "models/"+prefix+"marts/mon.sql", weekly("", "week"))
	write(t, dir, "models/"+prefix+"marts/fy_oct.sql", `/* refill
partition_by: w
grain: year
fiscal_year_start: october
start: 2022-12-01
batch: 2
*/
SELECT {{ cast_date(date_trunc("fiscal_year", ident("d"))) }} AS w, sum(v) AS v, count(*) AS days
FROM {{ ref("`+prefix+`staging.days") }}
WHERE d >= {{ start }} AND d < {{ end }}
GROUP BY w`)
	write(t, dir, "models/"+prefix+"marts/fy_weeks.sql", `/* refill
partition_by: w
grain: year
fiscal_year_start: {month: february, week_start: sunday}
start: 2023-02-01
*/
SELECT {{ start }} AS w, sum(v) AS v, count(*) AS days
FROM {{ ref("`+prefix+`staging.days") }}
WHERE d >= {{ start }} AND d < {{ end }}`)
	// Two rows a day from 2022-11-24 to 2025-02-28, of values that make
	// every sum of up to 20 days distinct: day i (from 0) holds
	// 2^(i mod 20) twice.
	var csv strings.Builder
	csv.WriteString("d,v\n")
	first := time.Date(2022, 11, 24, 0, 0, 0, 0, time.UTC)
	value := map[string]int64{}
	for d := first; d.Before(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		v := int64(1) << (int(d.Sub(first).Hours()/24) % 20)
		value[d.Format(time.DateOnly)] = 2 * v
		fmt.Fprintf(&csv, "%s,%d\n%s,%d\n", d.Format(time.DateOnly), v, d.Format(time.DateOnly), v)
	}
	write(t, dir, "seeds/"+prefix+"src/events.csv", csv.String())
	if engine == "clickhouse" {
		dropClickHouseDatabases(t, prefix+"src", prefix+"staging", prefix+"marts")
	}
	// Saturday 2025-03-01: the week from Sunday 2025-02-23 is still open,
	// the Monday week from 2025-02-24 too, and the fiscal years from
	// 2024-10 and 2025-02-02.
	const now = "--now=2025-03-01"
	open := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	mustRefill(t, dir, "seed")
	pl := mustRefill(t, dir, "plan", now)
	for _, want := range []string{prefix + "marts.sun", "2024-12-01 .. 2025-02-16", prefix + "marts.mon", "2024-W48 .. 2025-W08",
		prefix + "marts.fy_oct", "2022-10 .. 2023-10", prefix + "marts.fy_weeks", "2023-01-29 .. 2024-02-04"} {
		if !strings.Contains(pl.stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, pl.stdout)
		}
	}
	mustRefill(t, dir, "run", now)
	// Each period, recomputed from the seed's days from the daily
	// model's start (the Monday model's first week is the one from
	// 2024-11-25, which holds its start:, 2024-12-01).
	sum := func(from, to time.Time) string {
		var sum, days int64
		for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
			sum, days = sum+value[day.Format(time.DateOnly)], days+1
		}
		return fmt.Sprintf("%d/%d", sum, days)
	}
	weeks := func(unit time.Weekday) map[string]string {
		out := map[string]string{}
		from := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)
		for d := from.AddDate(0, 0, -6); d.AddDate(0, 0, 7).Compare(open) <= 0; d = d.AddDate(0, 0, 1) {
			if d.Weekday() == unit {
				out[d.Format(time.DateOnly)] = sum(d, d.AddDate(0, 0, 7))
			}
		}
		return out
	}
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for model, want := range map[string]map[string]string{
		"sun": weeks(time.Sunday), "mon": weeks(time.Monday),
		// October 2022 through September 2023, from the first day the
		// daily model has, 2022-12-01.
		"fy_oct": {"2022-10-01": sum(day("2022-12-01"), day("2023-10-01")), "2023-10-01": sum(day("2023-10-01"), day("2024-10-01"))},
		// Sundays nearest February 1: 2023-01-29, 2024-02-04 (a year of
		// 53 weeks), 2025-02-02 (of 52).
		"fy_weeks": {"2023-01-29": sum(day("2023-01-29"), day("2024-02-04")), "2024-02-04": sum(day("2024-02-04"), day("2025-02-02"))},
	} {
		if got := weekRows(t, dir, engine, prefix+"marts", model); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %v\nwant %v", model, got, want)
		}
	}
	if states := partitionStates(t, dir, prefix+"marts.fy_weeks", now); states["2023-01-29"] != "done" || states["2024-02-04"] != "done" || len(states) != 2 {
		t.Errorf("status of the fiscal years of weeks: %v", states)
	}
	states := partitionStates(t, dir, prefix+"marts.sun", now)
	if states["2024-12-29"] != "done" || len(states) != 12 || states["2025-02-23"] != "" {
		t.Errorf("status of the weeks from Sunday: %v", states)
	}
	// The week that straddles the new year renders as one window; a day
	// that is not a Sunday is no key of it.
	r := mustRefill(t, dir, "render", prefix+"marts.sun", "--partition", "2024-12-29")
	if !strings.Contains(r.stdout, "'2024-12-29'") || !strings.Contains(r.stdout, "'2025-01-05'") {
		t.Errorf("render of the week from 2024-12-29:\n%s", r.stdout)
	}
	if r := refill(t, dir, "render", prefix+"marts.sun", "--partition", "2024-12-30"); r.code == 0 || !strings.Contains(r.stderr, "not a week starting on Sunday") {
		t.Errorf("render of a Monday as a week from Sunday: exit %d\n%s", r.code, r.stderr)
	}
	if r := refill(t, dir, "render", prefix+"marts.fy_weeks", "--partition", "2024-02-01"); r.code == 0 ||
		!strings.Contains(r.stderr, `"2024-02-01" does not start a fiscal year from the Sunday nearest February 1 (want its first day, such as 2023-01-29)`) {
		t.Errorf("render of a day that starts no fiscal year: exit %d\n%s", r.code, r.stderr)
	}
	// The batch of two fiscal years is one statement that truncates each
	// row's day to its fiscal year.
	r = mustRefill(t, dir, "render", prefix+"marts.fy_oct", "--partition", "2022-10,2023-10")
	if !strings.Contains(r.stdout, "2022-10..2023-10") {
		t.Errorf("render of a batch of fiscal years:\n%s", r.stdout)
	}
}

// weekRows returns week -> "sum/days" of a weekly mart.
func weekRows(t *testing.T, dir, engine, schema, table string) map[string]string {
	t.Helper()
	q := fmt.Sprintf("SELECT CAST(w AS VARCHAR), v, days FROM %s.%s ORDER BY w", schema, table)
	var rows [][]any
	if engine == "clickhouse" {
		ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{})
		res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT toString(w), v, days FROM `%s`.`%s` ORDER BY w", schema, table), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		rows = res.Rows
	} else {
		rows = queryRows(t, dir, q)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[fmt.Sprint(r[0])] = fmt.Sprintf("%d/%d", adapters.Int(adapters.Normalize(r[1])), adapters.Int(adapters.Normalize(r[2])))
	}
	return out
}
