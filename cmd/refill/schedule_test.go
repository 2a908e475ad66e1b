package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// lateProject is a project with one source of events and a daily count
// with the given extra config lines.
func lateProject(t *testing.T, config string) string {
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\n")
	write(t, dir, "models/daily.sql", "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n"+config+"\n*/\n"+
		"SELECT d, count(*) AS events, max(loaded_at) AS last_loaded\nFROM {{ source(\"src.events\") }}\nWHERE d >= {{ start }} AND d < {{ end }}\nGROUP BY d")
	var b strings.Builder
	b.WriteString("id,d,loaded_at\n")
	for day := 1; day <= 20; day++ {
		for i := 0; i < 3; i++ {
			fmt.Fprintf(&b, "%d,2024-01-%02d,2024-01-%02d 23:00:00\n", day*10+i, day, day)
		}
	}
	write(t, dir, "seeds/src/events.csv", b.String())
	mustRefill(t, dir, "seed")
	return dir
}

func events(t *testing.T, dir, day string) any {
	return query(t, dir, fmt.Sprintf(`SELECT events FROM main.daily WHERE d = DATE '%s'`, day))
}

func addLate(t *testing.T, dir string, id int, day, loaded string) {
	execSQL(t, dir, fmt.Sprintf(`INSERT INTO src.events VALUES (%d, DATE '%s', TIMESTAMP '%s')`, id, day, loaded))
}

func planReasons(t *testing.T, dir string, args ...string) map[string]string {
	t.Helper()
	r := mustRefill(t, dir, append([]string{"plan", "--output", "json"}, args...)...)
	var p planOutput
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range p.Steps {
		out[s.Partition] = s.Reason
	}
	return out
}

// TestScheduledRunsPickUpLateData simulates a daily cron over several days.
func TestScheduledRunsPickUpLateData(t *testing.T) {
	t.Parallel()
	dir := lateProject(t, "lookback: 3")
	mustRefill(t, dir, "run", "--now", "2024-01-05T06:00:00Z")
	if got := query(t, dir, `SELECT count(*) FROM main.daily`); got != int64(4) {
		t.Fatalf("day 1 built %v partitions, want 2024-01-01 .. 2024-01-04", got)
	}
	// Late events for the 3rd arrive on the 5th; the next run's lookback
	// (the 5th, 4th and 3rd) picks them up.
	addLate(t, dir, 1001, "2024-01-03", "2024-01-05 10:00:00")
	reasons := planReasons(t, dir, "--now", "2024-01-06T06:00:00Z")
	want := map[string]string{"2024-01-05": "missing", "2024-01-04": "lookback", "2024-01-03": "lookback"}
	if fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Errorf("plan on the 6th: %v, want %v", reasons, want)
	}
	if text := mustRefill(t, dir, "plan", "--now", "2024-01-06T06:00:00Z"); !strings.Contains(text.stdout, "lookback: inside the late-data lookback window") {
		t.Errorf("the text plan does not show the lookback reason:\n%s", text.stdout)
	}
	mustRefill(t, dir, "run", "--now", "2024-01-06T06:00:00Z")
	if got := events(t, dir, "2024-01-03"); got != int64(4) {
		t.Errorf("2024-01-03 has %v events after the late one, want 4", got)
	}
	// Events for the 2nd arrive on the 7th: the 2nd left the window.
	addLate(t, dir, 1002, "2024-01-02", "2024-01-07 10:00:00")
	mustRefill(t, dir, "run", "--now", "2024-01-07T06:00:00Z")
	if got := events(t, dir, "2024-01-02"); got != int64(3) {
		t.Errorf("2024-01-02 has %v events: a partition outside the lookback was rerun", got)
	}
	// --lookback overrides the model for one run.
	mustRefill(t, dir, "run", "--now", "2024-01-07T06:00:00Z", "--lookback", "6")
	if got := events(t, dir, "2024-01-02"); got != int64(4) {
		t.Errorf("--lookback 6 did not rerun 2024-01-02: %v events", got)
	}
	// An explicit range is not scheduled: no lookback.
	if r := planReasons(t, dir, "--now", "2024-01-07T06:00:00Z", "--from", "2024-01-01"); len(r) != 0 {
		t.Errorf("an explicit range planned %v", r)
	}
}

func TestSparseLookbackAndDelay(t *testing.T) {
	t.Parallel()
	dir := lateProject(t, "lookback: [0, 1, 7]\ndelay: 2h")
	mustRefill(t, dir, "run", "--now", "2024-01-15T03:00:00Z")
	// At 01:00 on the 16th the 15th is not complete yet: its data is
	// only trusted two hours after midnight.
	reasons := planReasons(t, dir, "--now", "2024-01-16T01:00:00Z")
	want := map[string]string{"2024-01-14": "lookback", "2024-01-13": "lookback", "2024-01-07": "lookback"}
	if fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Errorf("at 01:00: %v, want %v", reasons, want)
	}
	reasons = planReasons(t, dir, "--now", "2024-01-16T02:00:00Z")
	want = map[string]string{"2024-01-15": "missing", "2024-01-14": "lookback", "2024-01-08": "lookback"}
	if fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Errorf("at 02:00: %v, want %v", reasons, want)
	}
}

func TestWatermarkRerunsOnlyFreshPartitions(t *testing.T) {
	t.Parallel()
	dir := lateProject(t, `lookback: 3
watermark: SELECT max(loaded_at) FROM {{ source("src.events") }} WHERE d >= {{ start }} AND d < {{ end }}`)
	mustRefill(t, dir, "run", "--now", "2024-01-10T06:00:00Z")
	if r := planReasons(t, dir, "--now", "2024-01-10T06:00:00Z"); len(r) != 0 {
		t.Errorf("with no new data the plan is %v, want nothing", r)
	}
	addLate(t, dir, 1001, "2024-01-08", "2024-01-10 07:00:00")
	reasons := planReasons(t, dir, "--now", "2024-01-10T08:00:00Z")
	if fmt.Sprint(reasons) != "map[2024-01-08:watermark]" {
		t.Errorf("after a late row for the 8th: %v, want only 2024-01-08 (watermark)", reasons)
	}
	mustRefill(t, dir, "run", "--now", "2024-01-10T08:00:00Z")
	if got := events(t, dir, "2024-01-08"); got != int64(4) {
		t.Errorf("2024-01-08 has %v events, want 4", got)
	}
	if wm := query(t, dir, `SELECT watermark FROM refill.partitions WHERE partition_key = '2024-01-08'`); wm != "2024-01-10T07:00:00Z" {
		t.Errorf("recorded watermark %v", wm)
	}
	if r := planReasons(t, dir, "--now", "2024-01-10T08:00:00Z"); len(r) != 0 {
		t.Errorf("after the rerun the plan is %v", r)
	}
}

// TestLocalDaysAcrossDST partitions UTC timestamps by Berlin days.
func TestLocalDaysAcrossDST(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\n")
	write(t, dir, "models/local.sql", `/* refill
partition_by: ts
grain: day
start: 2024-03-29
timezone: Europe/Berlin
*/
SELECT ts, id FROM {{ source("src.hours") }} WHERE ts >= {{ start }} AND ts < {{ end }}`)
	var b strings.Builder
	b.WriteString("id,ts\n")
	// One row per UTC hour around both 2024 DST changes.
	for _, span := range [][2]string{{"2024-03-28", "2024-04-02"}, {"2024-10-25", "2024-10-30"}} {
		for i, day := 0, span[0]; day < span[1]; i++ {
			for h := 0; h < 24; h++ {
				fmt.Fprintf(&b, "%d,%s %02d:00:00\n", len(b.String()), day, h)
			}
			day = nextDay(day)
		}
	}
	write(t, dir, "seeds/src/hours.csv", b.String())
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-03-29", "--to", "2024-04-01", "--now", "2024-11-01")
	mustRefill(t, dir, "run", "--from", "2024-10-26", "--to", "2024-10-28", "--now", "2024-11-01")
	got := map[string]string{}
	for _, r := range queryRows(t, dir, `SELECT partition_key, row_count, strftime(window_start, '%Y-%m-%d %H:%M'), strftime(window_end, '%Y-%m-%d %H:%M') FROM refill.partitions`) {
		got[r[0].(string)] = fmt.Sprintf("%v rows [%v, %v)", r[1], r[2], r[3])
	}
	want := map[string]string{
		"2024-03-29": "24 rows [2024-03-28 23:00, 2024-03-29 23:00)",
		"2024-03-30": "24 rows [2024-03-29 23:00, 2024-03-30 23:00)",
		"2024-03-31": "23 rows [2024-03-30 23:00, 2024-03-31 22:00)", // spring forward
		"2024-04-01": "24 rows [2024-03-31 22:00, 2024-04-01 22:00)",
		"2024-10-26": "24 rows [2024-10-25 22:00, 2024-10-26 22:00)",
		"2024-10-27": "25 rows [2024-10-26 22:00, 2024-10-27 23:00)", // fall back
		"2024-10-28": "24 rows [2024-10-27 23:00, 2024-10-28 23:00)",
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: %s, want %s", k, got[k], want[k])
		}
	}
	if n := query(t, dir, `SELECT count(*) FROM main.local`); n != int64(24*5+23+25) {
		t.Errorf("%v rows in all, want %d", n, 24*5+23+25)
	}
}

func nextDay(day string) string {
	var y, m, d int
	fmt.Sscanf(day, "%d-%d-%d", &y, &m, &d)
	days := []int{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if d++; d > days[m-1] {
		d, m = 1, m+1
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}
