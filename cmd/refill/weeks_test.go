package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
)

// Weekly models from Sunday (week_start: sunday) and from Monday over a
// daily model, across the end of a year, on DuckDB and, when
// CLICKHOUSE_DSN is set, on ClickHouse: each week holds the sum of its
// seven days, the week that straddles the new year is one partition keyed
// by its Sunday, and weeks still open at --now are left out.
func TestWeeksAcrossTheYearsEnd(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"duckdb", "clickhouse"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			if engine == "clickhouse" && os.Getenv("CLICKHOUSE_DSN") == "" {
				t.Skip("CLICKHOUSE_DSN is not set: start a server with .ci/clickhouse/start (see README)")
			}
			weeksAcrossTheYearsEnd(t, engine)
		})
	}
}

func weeksAcrossTheYearsEnd(t *testing.T, engine string) {
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
start: 2024-12-01
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
	// Two rows a day from 2024-11-24 to 2025-01-31, of values that make
	// every sum of days distinct: day i (from 0) holds 2^(i mod 20) twice.
	var csv strings.Builder
	csv.WriteString("d,v\n")
	first := time.Date(2024, 11, 24, 0, 0, 0, 0, time.UTC)
	value := map[string]int64{}
	for d := first; d.Before(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		v := int64(1) << (int(d.Sub(first).Hours()/24) % 20)
		value[d.Format(time.DateOnly)] = 2 * v
		fmt.Fprintf(&csv, "%s,%d\n%s,%d\n", d.Format(time.DateOnly), v, d.Format(time.DateOnly), v)
	}
	write(t, dir, "seeds/"+prefix+"src/events.csv", csv.String())
	if engine == "clickhouse" {
		t.Cleanup(func() {
			ch, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: os.Getenv("CLICKHOUSE_DSN")})
			if err != nil {
				return
			}
			defer ch.Close()
			for _, db := range []string{"src", "staging", "marts"} {
				ch.DB().Exec("DROP DATABASE IF EXISTS `" + prefix + db + "`")
			}
		})
	}
	// Saturday 2025-02-01: the week from Sunday 2025-01-26 is still open,
	// the Monday week from 2025-01-27 too.
	const now = "--now=2025-02-01"
	mustRefill(t, dir, "seed")
	plan := mustRefill(t, dir, "plan", now)
	for _, want := range []string{prefix + "marts.sun", "2024-12-01 .. 2025-01-19", prefix + "marts.mon", "2024-W48 .. 2025-W04"} {
		if !strings.Contains(plan.stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, plan.stdout)
		}
	}
	mustRefill(t, dir, "run", now)
	// Each week, recomputed from the seed's days from 2024-12-01, where
	// the daily model starts (the Monday model's first week, from
	// 2024-11-25, holds that Sunday alone).
	want := func(unit time.Weekday) map[string]string {
		out := map[string]string{}
		from := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)
		for d := from.AddDate(0, 0, -6); d.Before(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
			if d.Weekday() != unit {
				continue
			}
			if d.AddDate(0, 0, 7).After(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)) {
				break // still open
			}
			var sum, days int64
			for i := range 7 {
				if day := d.AddDate(0, 0, i); !day.Before(from) {
					sum, days = sum+value[day.Format(time.DateOnly)], days+1
				}
			}
			out[d.Format(time.DateOnly)] = fmt.Sprintf("%d/%d", sum, days)
		}
		return out
	}
	for model, start := range map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday} {
		got := weekRows(t, dir, engine, prefix+"marts", model)
		if w := want(start); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s:\n got %v\nwant %v", model, got, w)
		}
	}
	states := partitionStates(t, dir, prefix+"marts.sun", now)
	if states["2024-12-29"] != "done" || states["2025-01-26"] != "" && states["2025-01-26"] != "open" {
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
}

// weekRows returns week -> "sum/days" of a weekly mart.
func weekRows(t *testing.T, dir, engine, schema, table string) map[string]string {
	t.Helper()
	q := fmt.Sprintf("SELECT CAST(w AS VARCHAR), v, days FROM %s.%s ORDER BY w", schema, table)
	var rows [][]any
	if engine == "clickhouse" {
		ch, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: os.Getenv("CLICKHOUSE_DSN")})
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
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
