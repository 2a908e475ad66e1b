package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// A ride-hailing project for late data: trips (the source, declared with
// its time column), drivers' days, weeks, a running total that reads its
// own past, and a whole table per driver. Its clock stands at ridesNow.
const ridesNow = "--now=2024-10-01"

var ridesFirst = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
var ridesEnd = time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)

// trip is one row of the source.
type trip struct {
	id      int
	driver  string
	started time.Time
	fare    int64
}

// ridesTrips generates the source: a few trips a day.
func ridesTrips() []trip {
	var out []trip
	id := 0
	for d := ridesFirst; d.Before(ridesEnd); d = d.AddDate(0, 0, 1) {
		for i := range 1 + d.YearDay()%3 {
			id++
			out = append(out, trip{id: id, driver: []string{"ana", "bo", "cy"}[(id+i)%3],
				started: d.Add(time.Duration(7+5*i)*time.Hour + time.Duration(id%60)*time.Minute), fare: int64(500 + id%37*10)})
		}
	}
	return out
}

// ridesProject writes the project, its schemas prefixed with p, and the
// trips as a seed; it returns the folder.
func ridesProject(t *testing.T, p string, trips []trip, loaded bool) string {
	t.Helper()
	dir := t.TempDir()
	loadedAt := ""
	if loaded {
		loadedAt = "    loaded_at: loaded_at\n"
	}
	write(t, dir, "refill.yml", fmt.Sprintf(`name: rides
target: dev
targets:
  dev:
    adapter: duckdb
    path: warehouse.duckdb
  clickhouse:
    adapter: clickhouse
    dsn: ${CLICKHOUSE_DSN}
sources:
  %sraw.trips:
    time_column: started_at
%s`, p, loadedAt))
	var csv strings.Builder
	// promo is mostly empty: NULL in the warehouse, where a hash of a
	// row must still see its other columns change.
	// loaded_at is when the row landed: an hour after the trip started.
	csv.WriteString("trip_id,driver,started_at,fare,promo,loaded_at\n")
	for _, tr := range trips {
		promo := ""
		if tr.id%10 == 0 {
			promo = "SPRING"
		}
		fmt.Fprintf(&csv, "%d,%s,%s,%d,%s,%s\n", tr.id, tr.driver, tr.started.Format(time.DateTime), tr.fare, promo, tr.started.Add(time.Hour).Format(time.DateTime))
	}
	write(t, dir, "seeds/"+p+"raw/trips.csv", csv.String())
	s := p + "rides"
	write(t, dir, "models/"+s+"/daily.sql", fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-01-01
batch: 7
*/
SELECT {{ cast_date(ident("started_at")) }} AS d, driver, CAST(count(*) AS BIGINT) AS trips, CAST(sum(fare) AS BIGINT) AS fares
FROM {{ source("%sraw.trips") }}
WHERE started_at >= {{ cast_timestamp(start) }} AND started_at < {{ cast_timestamp(end) }}
GROUP BY {{ cast_date(ident("started_at")) }}, driver
`, p))
	write(t, dir, "models/"+s+"/weekly.sql", fmt.Sprintf(`/* refill
partition_by: week_start
grain: week
start: 2024-01-01
*/
SELECT {{ start }} AS week_start, CAST(coalesce(sum(trips), 0) AS BIGINT) AS trips, CAST(coalesce(sum(fares), 0) AS BIGINT) AS fares
FROM {{ ref("%[1]s.daily") }} WHERE d >= {{ start }} AND d < {{ end }}
`, s))
	write(t, dir, "models/"+s+"/to_date.sql", fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-01-01
depends_on_past: self
columns: {d: date, trips: bigint, fares: bigint}
*/
SELECT {{ start }} AS d, CAST(coalesce(sum(trips), 0) AS BIGINT) AS trips, CAST(coalesce(sum(fares), 0) AS BIGINT) AS fares
FROM (SELECT trips, fares FROM {{ ref("%[1]s.daily") }} WHERE d >= {{ start }} AND d < {{ end }}
      UNION ALL
      SELECT trips, fares FROM {{ this }} WHERE d = {{ date_add(start, -1, "day") }}) AS t
`, s))
	write(t, dir, "models/"+s+"/per_driver.sql", fmt.Sprintf(`SELECT driver, CAST(sum(trips) AS BIGINT) AS trips, CAST(sum(fares) AS BIGINT) AS fares
FROM {{ ref("%s.daily") }} GROUP BY driver
`, s))
	return dir
}

// ridesExpected computes every table of the project from trips, in Go.
func ridesExpected(trips []trip) map[string][]string {
	type agg struct{ trips, fares int64 }
	daily := map[string]*agg{}
	byDay := map[string]*agg{}
	byWeek := map[string]*agg{}
	byDriver := map[string]*agg{}
	add := func(m map[string]*agg, k string, fare int64) {
		if m[k] == nil {
			m[k] = &agg{}
		}
		m[k].trips++
		m[k].fares += fare
	}
	for _, tr := range trips {
		day := tr.started.Format(time.DateOnly)
		add(daily, day+" | "+tr.driver, tr.fare)
		add(byDay, day, tr.fare)
		add(byDriver, tr.driver, tr.fare)
		wd := (int(tr.started.Weekday()) + 6) % 7
		add(byWeek, tr.started.AddDate(0, 0, -wd).Format(time.DateOnly), tr.fare)
	}
	out := map[string][]string{}
	for k, a := range daily {
		out["daily"] = append(out["daily"], fmt.Sprintf("%s | %d | %d", k, a.trips, a.fares))
	}
	for k, a := range byDriver {
		out["per_driver"] = append(out["per_driver"], fmt.Sprintf("%s | %d | %d", k, a.trips, a.fares))
	}
	for w := ridesFirst; w.Before(ridesEnd.AddDate(0, 0, -6)); w = w.AddDate(0, 0, 7) {
		a := byWeek[w.Format(time.DateOnly)]
		if a == nil {
			a = &agg{}
		}
		out["weekly"] = append(out["weekly"], fmt.Sprintf("%s | %d | %d", w.Format(time.DateOnly), a.trips, a.fares))
	}
	var run agg
	for d := ridesFirst; d.Before(ridesEnd); d = d.AddDate(0, 0, 1) {
		if a := byDay[d.Format(time.DateOnly)]; a != nil {
			run.trips += a.trips
			run.fares += a.fares
		}
		out["to_date"] = append(out["to_date"], fmt.Sprintf("%s | %d | %d", d.Format(time.DateOnly), run.trips, run.fares))
	}
	for _, rows := range out {
		sort.Strings(rows)
	}
	return out
}

// ridesColumns are the columns each table is compared by.
var ridesColumns = map[string]string{
	"daily":      "d, driver, trips, fares",
	"weekly":     "week_start, trips, fares",
	"to_date":    "d, trips, fares",
	"per_driver": "driver, trips, fares",
}

// ridesWarehouse is what the late-data test needs of an engine.
type ridesWarehouse struct {
	target string
	prefix string
	exec   func(t *testing.T, stmt string) // changes the source
	rows   func(t *testing.T, q string) [][]any
	// table quotes schema.name for queries.
	table func(schema, name string) string
}

// TestLateDataFoundAnywhereInHistory is the acceptance of tracked sources
// on DuckDB: late trips 40 days back and a trip updated in place 200 days
// back are found by the next scheduled run, with no lookback, and only
// the partitions they touch run, with what reads them: with the source
// fingerprinted by the hash of its rows, and by its loaded_at.
func TestLateDataFoundAnywhereInHistory(t *testing.T) {
	t.Parallel()
	for _, loaded := range []bool{false, true} {
		t.Run(map[bool]string{false: "hash", true: "loaded_at"}[loaded], func(t *testing.T) {
			t.Parallel()
			trips := ridesTrips()
			dir := ridesProject(t, "", trips, loaded)
			lateData(t, dir, trips, loaded, ridesWarehouse{target: "dev",
				exec:  func(t *testing.T, stmt string) { execSQL(t, dir, stmt) },
				rows:  func(t *testing.T, q string) [][]any { return queryRows(t, dir, q) },
				table: func(schema, name string) string { return schema + "." + name }})
		})
	}
}

// clickhouseRides is the rides project's warehouse on ClickHouse, its
// databases prefixed with p.
func clickhouseRides(ch *clickhouse.Adapter, p string) ridesWarehouse {
	return ridesWarehouse{target: "clickhouse", prefix: p,
		exec: func(t *testing.T, stmt string) {
			t.Helper()
			if _, err := ch.DB().Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			// Mutations run in the background: wait for them.
			for range 200 {
				res, err := ch.Query(context.Background(), "SELECT count(*) FROM system.mutations WHERE NOT is_done AND database LIKE '"+p+"%'", adapters.Tag{})
				if err != nil {
					t.Fatal(err)
				}
				if adapters.Int(res.Rows[0][0]) == 0 {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatalf("%s: the mutation did not finish", stmt)
		},
		rows: func(t *testing.T, q string) [][]any {
			t.Helper()
			res, err := ch.Query(context.Background(), q, adapters.Tag{})
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return res.Rows
		},
		table: func(schema, name string) string { return "`" + schema + "`.`" + name + "`" }}
}

// TestLateDataFoundAnywhereInHistoryClickHouse is the same on ClickHouse.
func TestLateDataFoundAnywhereInHistoryClickHouse(t *testing.T) {
	adaptertest.ClickHouseServer.Env(t)
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	for _, loaded := range []bool{false, true} {
		t.Run(map[bool]string{false: "hash", true: "loaded_at"}[loaded], func(t *testing.T) {
			t.Parallel()
			p := fmt.Sprintf("t%d_", time.Now().UnixNano()%1e9)
			dropClickHouseDatabases(t, p+"raw", p+"rides")
			trips := ridesTrips()
			dir := ridesProject(t, p, trips, loaded)
			lateData(t, dir, trips, loaded, clickhouseRides(ch, p))
		})
	}
}

func lateData(t *testing.T, dir string, trips []trip, loaded bool, wh ridesWarehouse) {
	target := "--target=" + wh.target
	mustRefill(t, dir, "seed", target)
	// On ClickHouse, the source partitioned by month: its parts prove the
	// months no insert or mutation touched unchanged (the hash's check
	// reads the others only).
	parts := wh.target == "clickhouse" && !loaded
	if parts {
		src := wh.table(wh.prefix+"raw", "trips")
		wh.exec(t, "CREATE TABLE "+wh.table(wh.prefix+"raw", "trips_m")+" ENGINE = MergeTree PARTITION BY toYYYYMM(started_at) ORDER BY trip_id AS SELECT * FROM "+src+" ORDER BY trip_id")
		wh.exec(t, "DROP TABLE "+src)
		wh.exec(t, "RENAME TABLE "+wh.table(wh.prefix+"raw", "trips_m")+" TO "+src)
	}
	renamed := time.Now()
	mustRefill(t, dir, "run", target, ridesNow, "--yes", "--quiet")
	check := func(when string) {
		t.Helper()
		want := ridesExpected(trips)
		for name, cols := range ridesColumns {
			got := normalizedRides(wh.rows(t, fmt.Sprintf("SELECT %s FROM %s", cols, wh.table(wh.prefix+"rides", name))))
			if !slices.Equal(got, want[name]) {
				t.Errorf("%s: %s differs from its recomputation: %d rows, %d wanted\n%s", when, name, len(got), len(want[name]), firstDiff(got, want[name]))
			}
		}
	}
	check("after the backfill")
	if r := mustRefill(t, dir, "plan", target, ridesNow, "--verbose"); !strings.Contains(r.stdout, "Nothing to do") {
		t.Fatalf("a scheduled run with the source unchanged plans:\n%s", r.stdout)
	} else if parts && strings.Contains(r.stderr, "refill_print") {
		t.Errorf("with no part of the source changed, the check still reads it:\n%s", r.stderr)
	}
	if parts {
		// A reload that builds a new table and swaps it in: its block
		// numbers start again, so its parts' rows, blocks and data versions
		// are the old table's, one fare 150 days back aside. The states
		// name the table, so the check reads the source again and finds
		// that day. (18.16 names it by the second its metadata changed.)
		i := slices.IndexFunc(trips, func(tr trip) bool { return !tr.started.Before(ridesEnd.AddDate(0, 0, -150)) })
		trips[i].fare += 7
		src, fresh, old := wh.table(wh.prefix+"raw", "trips"), wh.table(wh.prefix+"raw", "trips_n"), wh.table(wh.prefix+"raw", "trips_o")
		time.Sleep(time.Until(renamed.Add(1100 * time.Millisecond)))
		wh.exec(t, "CREATE TABLE "+fresh+" AS "+src)
		wh.exec(t, fmt.Sprintf("INSERT INTO %s SELECT trip_id, driver, started_at, if(trip_id = %d, fare + 7, fare), promo, loaded_at FROM %s ORDER BY trip_id", fresh, trips[i].id, src))
		parts := func(name string) string {
			return fmt.Sprint(wh.rows(t, "SELECT partition_id, sum(rows), max(max_block_number), max(data_version) FROM system.parts WHERE active AND database = '"+
				wh.prefix+"raw' AND table = '"+name+"' GROUP BY partition_id ORDER BY partition_id"))
		}
		if was, now := parts("trips"), parts("trips_n"); was != now {
			t.Fatalf("the new table's parts differ from the old one's in rows, blocks or versions, so this does not test the table's identity:\n%s\n%s", was, now)
		}
		wh.exec(t, "RENAME TABLE "+src+" TO "+old+", "+fresh+" TO "+src)
		wh.exec(t, "DROP TABLE "+old)
		r := mustRefill(t, dir, "plan", target, ridesNow, "--output", "json")
		var p planOutput
		if err := jsonUnmarshal(r.stdout, &p); err != nil {
			t.Fatal(err)
		}
		var daily []string
		for _, st := range p.Steps {
			if st.Model == wh.prefix+"rides.daily" {
				daily = append(daily, st.Partition+" "+st.Reason)
			}
		}
		if want := trips[i].started.Format(time.DateOnly) + " source"; !slices.Equal(daily, []string{want}) {
			t.Errorf("after the source table was swapped for one with a changed fare, the plan has daily %q, not %q", daily, want)
		}
		mustRefill(t, dir, "run", target, ridesNow, "--yes", "--quiet")
		check("after the swapped source was read")
	}
	timestamp := "TIMESTAMP"
	if wh.target == "clickhouse" {
		timestamp = "DateTime"
	}
	trips = lateTrips(t, trips, ridesEnd.AddDate(0, 0, -40), ridesEnd, 2, timestamp, wh)
	if parts {
		// Only August's part is new: the check reads that month alone.
		r := mustRefill(t, dir, "plan", target, ridesNow, "--verbose", "--output", "json")
		scan := ""
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.Contains(line, "refill_print") {
				scan = line
			}
		}
		if !strings.Contains(scan, ">= toDateTime('2024-07-3") || strings.Contains(scan, "2024-06-") || strings.Contains(scan, "2024-09-1") {
			t.Errorf("the check does not read August alone: %s", scan)
		}
		if n := strings.Count(r.stdout, `"reason": "source"`); n != 1 {
			t.Errorf("the plan after the late trips has %d steps for a changed source, not 1", n)
		}
	}

	// A fare corrected in place 200 days back, on the first trip from then
	// without a promo (so with a NULL column); its loaded_at moves.
	i := slices.IndexFunc(trips, func(tr trip) bool { return !tr.started.Before(ridesEnd.AddDate(0, 0, -200)) && tr.id%10 != 0 })
	old, late := trips[i].started.Truncate(24*time.Hour), ridesEnd.AddDate(0, 0, -40)
	trips[i].fare += 1000
	set := fmt.Sprintf("fare = fare + 1000, loaded_at = CAST('%s' AS %s)", ridesEnd.Add(time.Minute).Format(time.DateTime), timestamp)
	if wh.target == "clickhouse" {
		wh.exec(t, fmt.Sprintf("ALTER TABLE %s UPDATE %s WHERE trip_id = %d", wh.table(wh.prefix+"raw", "trips"), set, trips[i].id))
	} else {
		wh.exec(t, fmt.Sprintf("UPDATE %s SET %s WHERE trip_id = %d", wh.table(wh.prefix+"raw", "trips"), set, trips[i].id))
	}

	lateWhy, oldWhy := "2 rows when built, 4 now", "rows changed in place"
	if loaded {
		lateWhy, oldWhy = "2 rows loaded since it was built (latest loaded_at 2024-10-01 00:00:00, was 2024-08-22 ", "1 row loaded since it was built (latest loaded_at 2024-10-01 00:01:00, was 2024-03-16 "
	}
	if r := mustRefill(t, dir, "plan", target, ridesNow); !strings.Contains(r.stdout, "source: "+wh.prefix+"raw.trips: "+lateWhy) ||
		!strings.Contains(r.stdout, "source: "+wh.prefix+"raw.trips: "+oldWhy) {
		t.Errorf("the plan does not say how the days' source changed (%q, %q):\n%s", lateWhy, oldWhy, r.stdout)
	}
	r := mustRefill(t, dir, "plan", target, ridesNow, "--output", "json")
	var p planOutput
	if err := jsonUnmarshal(r.stdout, &p); err != nil {
		t.Fatal(err)
	}
	s := wh.prefix + "rides."
	lateDay, oldDay := late.Format(time.DateOnly), old.Format(time.DateOnly)
	planned := map[string]map[string]string{}
	for _, st := range p.Steps {
		if planned[st.Model] == nil {
			planned[st.Model] = map[string]string{}
		}
		planned[st.Model][st.Partition] = st.Reason
		if st.Model == s+"daily" && (st.Reason != "source" || !strings.Contains(st.Detail, wh.prefix+"raw.trips")) {
			t.Errorf("daily %s is planned for %q (%s), not for its changed source", st.Partition, st.Reason, st.Detail)
		}
	}
	if got := slices.Sorted(maps.Keys(planned[s+"daily"])); !slices.Equal(got, []string{oldDay, lateDay}) {
		t.Errorf("the scheduled run plans daily %v, not exactly the two changed days %s and %s\n%s", got, oldDay, lateDay, r.stdout)
	}
	weekOf := func(d time.Time) string { y, w := d.ISOWeek(); return fmt.Sprintf("%d-W%02d", y, w) }
	if got := slices.Sorted(maps.Keys(planned[s+"weekly"])); !slices.Equal(got, []string{weekOf(old), weekOf(late)}) {
		t.Errorf("the scheduled run plans weekly %v, not the two changed days' weeks", got)
	}
	if n := len(planned[s+"to_date"]); n != int(ridesEnd.Sub(old).Hours()/24) {
		t.Errorf("the running total reruns %d days, not the %d from the older change on", n, int(ridesEnd.Sub(old).Hours()/24))
	}
	if len(planned[s+"per_driver"]) != 1 {
		t.Errorf("the whole table over daily is not planned: %v", planned[s+"per_driver"])
	}
	if len(planned) != 4 {
		t.Errorf("the plan has steps of %d models: %v", len(planned), slices.Sorted(maps.Keys(planned)))
	}

	mustRefill(t, dir, "run", target, ridesNow, "--yes", "--quiet")
	check("after the scheduled run")
	r = mustRefill(t, dir, "plan", target, ridesNow, "--verbose")
	if !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("after the scheduled run, the next plans:\n%s", r.stdout)
	}
	if !loaded {
		return
	}
	// The scan reads only the rows loaded after what the last succeeded
	// run read: the corrected fare's.
	if !strings.Contains(r.stderr, "loaded_at") || !strings.Contains(r.stderr, ">= "+map[bool]string{true: "toDateTime('", false: "TIMESTAMP '"}[wh.target == "clickhouse"]+"2024-10-01 00:01:00") {
		t.Errorf("the scheduled plan's scan does not start at the last check:\n%s", r.stderr)
	}
	// A trip landing now for a day 100 days back is found from there.
	trips = lateTrips(t, trips, ridesEnd.AddDate(0, 0, -100), ridesEnd.Add(2*time.Hour), 1, timestamp, wh)
	r = mustRefill(t, dir, "run", target, ridesNow, "--yes", "--output", "json")
	if days := ranDays(t, r.stdout, wh.prefix+"rides.daily"); !slices.Equal(days, []string{ridesEnd.AddDate(0, 0, -100).Format(time.DateOnly)}) {
		t.Errorf("the run after a trip landed 100 days back rebuilt daily %v", days)
	}
	check("after a third run")
}

// lateTrips inserts n trips on day, loaded at loadedAt, and returns trips
// with them.
func lateTrips(t *testing.T, trips []trip, day, loadedAt time.Time, n int, timestamp string, wh ridesWarehouse) []trip {
	t.Helper()
	next := trips[len(trips)-1].id + 1
	for i := range n {
		tr := trip{id: next + i, driver: "bo", started: day.Add(time.Duration(20+i) * time.Hour), fare: 990}
		trips = append(trips, tr)
		wh.exec(t, fmt.Sprintf("INSERT INTO %s SELECT %d, '%s', CAST('%s' AS %s), %d, NULL, CAST('%s' AS %s)", wh.table(wh.prefix+"raw", "trips"),
			tr.id, tr.driver, tr.started.Format(time.DateTime), timestamp, tr.fare, loadedAt.Format(time.DateTime), timestamp))
	}
	return trips
}

// ranDays returns the partitions of model a run's JSON output says it
// built, sorted.
func ranDays(t *testing.T, stdout, model string) []string {
	t.Helper()
	var out struct {
		Partitions []struct{ Model, Partition, Status string }
	}
	if err := jsonUnmarshal(stdout, &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var days []string
	for _, p := range out.Partitions {
		if p.Model == model {
			days = append(days, p.Partition)
		}
	}
	slices.Sort(days)
	return days
}

// normalizedRides reads rows as " | "-joined text, dates as days.
func normalizedRides(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		parts := make([]string, len(row))
		for j, v := range row {
			switch v := adapters.Normalize(v).(type) {
			case time.Time:
				parts[j] = v.UTC().Format(time.DateOnly)
			default:
				parts[j] = fmt.Sprint(v)
			}
		}
		out[i] = strings.Join(parts, " | ")
	}
	sort.Strings(out)
	return out
}

// firstDiff names the first row where got and want differ.
func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("row %d: got %q, want %q", i, g, w)
		}
	}
	return ""
}

// TestVerifyFindsRowsChangedOutsideRefill: with content_hash:, refill
// verify finds a row of a built table updated in place (its count
// unchanged, so drift does not) and a row deleted, names the partitions
// and how to rebuild them, and is clean once they are rebuilt. weekly
// declares a column type its query does not return: the hash recorded
// from the stage is of the values as the table holds them.
func TestVerifyFindsRowsChangedOutsideRefill(t *testing.T) {
	t.Parallel()
	trips := ridesTrips()
	dir := ridesProject(t, "", trips, false)
	verifyContent(t, dir, ridesWarehouse{target: "dev",
		exec:  func(t *testing.T, stmt string) { execSQL(t, dir, stmt) },
		rows:  func(t *testing.T, q string) [][]any { return queryRows(t, dir, q) },
		table: func(schema, name string) string { return schema + "." + name }})
}

// TestVerifyFindsRowsChangedOutsideRefillClickHouse is the same on
// ClickHouse.
func TestVerifyFindsRowsChangedOutsideRefillClickHouse(t *testing.T) {
	adaptertest.ClickHouseServer.Env(t)
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	p := fmt.Sprintf("t%d_", time.Now().UnixNano()%1e9)
	dropClickHouseDatabases(t, p+"raw", p+"rides")
	dir := ridesProject(t, p, ridesTrips(), false)
	verifyContent(t, dir, clickhouseRides(ch, p))
}

func verifyContent(t *testing.T, dir string, wh ridesWarehouse) {
	yml, err := osReadFile(dir, "refill.yml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "refill.yml", yml+"content_hash: true\n")
	weekly, err := osReadFile(dir, "models/"+wh.prefix+"rides/weekly.sql")
	if err != nil {
		t.Fatal(err)
	}
	weekly = strings.Replace(weekly, "start: 2024-01-01\n", "start: 2024-01-01\ncolumns: {week_start: date, trips: double, fares: bigint}\n", 1)
	write(t, dir, "models/"+wh.prefix+"rides/weekly.sql", strings.Replace(weekly, "CAST(coalesce(sum(trips), 0) AS BIGINT)", "CAST(coalesce(sum(trips), 0) AS INTEGER)", 1))
	target := "--target=" + wh.target
	mustRefill(t, dir, "seed", target)
	mustRefill(t, dir, "run", target, ridesNow, "--yes", "--quiet")
	s := wh.prefix + "rides"
	r := mustRefill(t, dir, "verify", target, ridesNow)
	for _, want := range []string{s + ".daily: 274 partitions verified, unchanged", s + ".weekly: 39 partitions verified, unchanged",
		s + ".to_date: 274 partitions verified, unchanged", s + ".per_driver: 1 partition verified, unchanged"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify after the backfill does not say %q:\n%s", want, r.stdout)
		}
	}
	// A fare edited in place in daily, and a week deleted from weekly.
	update := fmt.Sprintf("UPDATE %s SET fares = fares + 1 WHERE d = DATE '2024-05-05'", wh.table(s, "daily"))
	del := fmt.Sprintf("DELETE FROM %s WHERE week_start = DATE '2024-02-05'", wh.table(s, "weekly"))
	if wh.target == "clickhouse" {
		update = fmt.Sprintf("ALTER TABLE %s UPDATE fares = fares + 1 WHERE d = toDate('2024-05-05')", wh.table(s, "daily"))
		del = fmt.Sprintf("ALTER TABLE %s DELETE WHERE week_start = toDate('2024-02-05')", wh.table(s, "weekly"))
	}
	wh.exec(t, update)
	wh.exec(t, del)
	r = refill(t, dir, "verify", target, ridesNow)
	if r.code != exitFailed {
		t.Errorf("verify of changed tables exits %d, not %d\n%s%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	for _, want := range []string{s + ".daily: 274 partitions verified, 1 changed outside refill", "  2024-05-05  rows changed in place (",
		"rebuild them: refill run " + s + ".daily --partitions 2024-05-05 --mode all",
		s + ".weekly: 39 partitions verified, 1 changed outside refill", "  2024-W06  1 row when published, 0 now"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify does not say %q:\n%s", want, r.stdout)
		}
	}
	var out verifyOutput
	if err := jsonUnmarshal(refill(t, dir, "verify", s+".daily", target, ridesNow, "-o", "json").stdout, &out); err != nil ||
		len(out.Models) != 1 || len(out.Models[0].Changed) != 1 || out.Models[0].Changed[0].Partition != "2024-05-05" {
		t.Errorf("verify -o json: %+v, %v", out, err)
	}
	mustRefill(t, dir, "run", s+".daily", target, "--partitions", "2024-05-05", "--mode", "all", "--yes", "--quiet", ridesNow)
	mustRefill(t, dir, "run", s+".weekly", target, "--partitions", "2024-W06", "--mode", "all", "--yes", "--quiet", ridesNow)
	if r := refill(t, dir, "verify", target, ridesNow); r.code != 0 {
		t.Errorf("verify after the rebuilds exits %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
