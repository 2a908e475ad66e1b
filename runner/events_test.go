package runner_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// The events project: a source of events over January to March 2024 (the
// United States change to summer time on 10 March), and models of every
// kind over it. Each test takes the models it needs.
var eventModels = map[string]string{
	"models/hourly.sql": `/* refill
partition_by: h
grain: hour
start: 2024-01-01
*/
SELECT date_trunc('hour', ts) AS h, count(*) AS n, sum(v) AS s
FROM {{ source("raw.events") }}
WHERE ts >= {{ start }} AND ts < {{ end }}
GROUP BY 1`,
	"models/daily.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT CAST(h AS DATE) AS d, sum(n) AS n, sum(s) AS s
FROM {{ ref("hourly") }}
WHERE h >= {{ start }} AND h < {{ end }}
GROUP BY 1`,
	"models/rolling.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
depends_on_past: 6
*/
SELECT CAST(k.d + CAST(o.i AS INTEGER) AS DATE) AS d, sum(k.s) AS s7
FROM {{ ref("daily") }} AS k CROSS JOIN range(7) AS o(i)
WHERE k.d >= {{ date_add(start, -6, "day") }} AND k.d < {{ end }}
  AND k.d + CAST(o.i AS INTEGER) >= {{ start }} AND k.d + CAST(o.i AS INTEGER) < {{ end }}
GROUP BY 1`,
	// New York days, as timestamps of their start.
	"models/ny_daily.sql": `/* refill
partition_by: day_start
grain: day
start: 2024-01-01
timezone: America/New_York
*/
SELECT {{ start }} AS day_start, sum(n) AS n
FROM {{ ref("hourly") }}
WHERE h >= {{ start }} AND h < {{ end }}`,
	// New York days, as the local date.
	"models/ny_local.sql": `/* refill
partition_by: local_date
grain: day
start: 2024-01-01
timezone: America/New_York
partition_type: date
*/
SELECT CAST(timezone('America/New_York', CAST(h AS TIMESTAMPTZ)) AS DATE) AS local_date, sum(n) AS n
FROM {{ ref("hourly") }}
WHERE h >= {{ cast_timestamp(start) }} AND h < {{ cast_timestamp(end) }}
GROUP BY 1`,
	"models/by_region.sql": `/* refill
partition_by: region
values: [eu, us]
*/
SELECT region, count(*) AS n FROM {{ source("raw.events") }} WHERE region = {{ partition }} GROUP BY region`,
	"models/total.sql": `SELECT count(*) AS days, sum(s) AS s FROM {{ ref("daily") }}`,
	// A daily model reading a list model: every day reads every region.
	"models/share.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT d, n, (SELECT sum(n) FROM {{ ref("by_region") }}) AS all_n FROM {{ ref("daily") }} WHERE d >= {{ start }} AND d < {{ end }}`,
}

// eventsCSV returns the events: every hour of January to March 2024 has
// one event of value hour-of-month, in region eu or us.
func eventsCSV() string {
	var b strings.Builder
	b.WriteString("ts,region,v\n")
	for t := time.Date(2024, 1, 1, 0, 30, 0, 0, time.UTC); t.Before(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)); t = t.Add(time.Hour) {
		region := "eu"
		if t.Hour()%3 == 0 {
			region = "us"
		}
		fmt.Fprintf(&b, "%s,%s,%d\n", t.Format("2006-01-02 15:04:05"), region, t.Day()*100+t.Hour())
	}
	return b.String()
}

// eventsEnv is a project of the named event models (plus any extra files)
// on a fresh DuckDB file with the events loaded.
func eventsEnv(t *testing.T, names []string, extra map[string]string) *env {
	t.Helper()
	fsys := fstest.MapFS{
		"refill.yml":           {Data: []byte("targets:\n  dev: {adapter: duckdb, path: w.duckdb}\n")},
		"seeds/raw/events.csv": {Data: []byte(eventsCSV())},
	}
	for _, n := range names {
		f := "models/" + n + ".sql"
		fsys[f] = &fstest.MapFile{Data: []byte(eventModels[f])}
	}
	for k, v := range extra {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	e := &env{t: t, fsys: fsys, path: filepath.Join(t.TempDir(), "w.duckdb")}
	db, err := duckdb.Open(context.Background(), duckdb.Config{Path: e.path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.load()
	seeds, err := e.project.LoadSeeds(e.fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		if err := db.LoadSeed(context.Background(), s, s.Relation); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// apr2024 is "now" for the events: after the last of them.
var apr2024 = time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)

// keys returns "model key" for every step, sorted as planned.
func stepKeys(steps []plan.Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Model.Name + " " + s.Partition.Key
	}
	return out
}

// keySet returns the set of "model key" of steps.
func keySet(steps []plan.Step) map[string]bool {
	out := map[string]bool{}
	for _, k := range stepKeys(steps) {
		out[k] = true
	}
	return out
}

// hours returns "hourly <key>" for every hour in [from, to).
func hours(from, to time.Time) []string {
	var out []string
	for t := from; t.Before(to); t = t.Add(time.Hour) {
		out = append(out, "hourly "+t.Format("2006-01-02T15"))
	}
	return out
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// withFiles returns a copy of files with changes applied.
func withFiles(files map[string]string, changes map[string]string) map[string]string {
	out := maps.Clone(files)
	maps.Copy(out, changes)
	return out
}

// recompute runs model m's SQL for every partition in [from, to] into a
// table of its own and returns the rows of both, sorted, as text: the
// oracle a table must equal.
func (e *env) recompute(name string, parts []models.Partition) (want, got []string) {
	e.t.Helper()
	m, err := e.project.Model(name)
	if err != nil {
		e.t.Fatal(err)
	}
	scope := e.runner.Scope
	var selects []string
	for _, p := range parts {
		sql, err := m.Render(scope, p)
		if err != nil {
			e.t.Fatal(err)
		}
		selects = append(selects, "SELECT * FROM (\n"+sql+"\n)")
	}
	rel := scope.Relation(m).Quote(scope.Dialect)
	text := func(q string) []string {
		var out []string
		for _, row := range e.query(q) {
			out = append(out, fmt.Sprint(row))
		}
		return out
	}
	union := strings.Join(selects, "\nUNION ALL\n")
	return text("SELECT * FROM (" + union + ") ORDER BY ALL"), text("SELECT * FROM " + rel + " ORDER BY ALL")
}
