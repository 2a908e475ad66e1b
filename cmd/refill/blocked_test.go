package main

import (
	"strings"
	"testing"
)

// A list model reads the whole of its hourly upstream, whose table holds
// hours past the range that a killed run left unfinished. A run over the
// range does not rebuild them, so the model waits for them (exit 5); plan
// and run name every such hour it waits for and the one command that
// builds them all, and after that command the same run builds the model.
// (Found by the oracle on ClickHouse 26, seed 1796512855383747797: the
// command named only the first hour, so it had to be run once an hour.)
func TestABlockedModelGetsOneCommandForAllItWaitsFor(t *testing.T) {
	t.Parallel()
	dir := hoursAndRegions(t)
	const now = "--now=2024-01-04T00:30:00Z"
	mustRefill(t, dir, "run", "hourly", "--from", "2024-01-01", "--to", "2024-01-03", now, "--yes")
	// Two hours of 2 January whose publication a killed run left
	// unfinished, with a done one between them.
	execSQL(t, dir, `UPDATE refill.partitions SET state = 'pending' WHERE model = 'hourly' AND partition_key IN ('2024-01-02T20', '2024-01-02T22')`)

	rng := []string{"--from", "2024-01-01", "--to", "2024-01-01", now}
	const waits = "by_region (2 partitions): waits for hourly 2024-01-02T20 through 2024-01-02T22 (their last publications may not have finished)\n" +
		"    to build it: refill run hourly --from 2024-01-02T20 --to 2024-01-02T22\n"
	if pl := refill(t, dir, append([]string{"plan"}, rng...)...); pl.code != 0 || !strings.Contains(pl.stdout, waits) {
		t.Errorf("plan over 1 January: exit %d, want 0 and\n%s\n%s%s", pl.code, waits, pl.stdout, pl.stderr)
	}
	r := refill(t, dir, append([]string{"run", "--yes", "--output", "json"}, rng...)...)
	var out runOutput
	if err := jsonUnmarshal(r.stdout, &out); err != nil || r.code != exitIncomplete {
		t.Fatalf("run over 1 January: exit %d (%v), want %d\n%s%s", r.code, err, exitIncomplete, r.stdout, r.stderr)
	}
	want := blockedModelJSON{Model: "by_region", Partitions: 2, WaitsFor: "hourly 2024-01-02T20", WaitsThrough: "2024-01-02T22", State: "pending",
		Command: "refill run hourly --from 2024-01-02T20 --to 2024-01-02T22"}
	if len(out.BlockedModels) != 1 || out.BlockedModels[0] != want {
		t.Fatalf("blocked models %+v, want [%+v]", out.BlockedModels, want)
	}
	if got := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'by_region'`); got != int64(0) {
		t.Errorf("the blocked run recorded %v partitions of by_region", got)
	}
	mustRefill(t, dir, "run", "hourly", "--from", "2024-01-02T20", "--to", "2024-01-02T22", now, "--yes")
	mustRefill(t, dir, append([]string{"run", "--yes"}, rng...)...)
	checkRegions(t, dir, 30)
}

// The same model, when the hourly table holds 3 January but not 2
// January: the range of 1 January does not build the hole, so the command
// builds it (and what it reads), not the range again.
func TestABlockedModelGetsACommandForAHolePastTheRange(t *testing.T) {
	t.Parallel()
	dir := hoursAndRegions(t)
	const now = "--now=2024-01-04T00:30:00Z"
	for _, day := range []string{"2024-01-01", "2024-01-03"} {
		mustRefill(t, dir, "run", "hourly", "--from", day, "--to", day, now, "--yes")
	}
	rng := []string{"--from", "2024-01-01", "--to", "2024-01-01", now}
	r := refill(t, dir, append([]string{"run", "--yes"}, rng...)...)
	const waits = "by_region (2 partitions): waits for hourly 2024-01-02T00 through 2024-01-02T23 (never built)\n" +
		"    to build it: refill run +hourly --from 2024-01-02T00 --to 2024-01-02T23\n"
	if r.code != exitIncomplete || !strings.Contains(r.stdout, waits) {
		t.Fatalf("run over 1 January: exit %d, want %d and\n%s\n%s%s", r.code, exitIncomplete, waits, r.stdout, r.stderr)
	}
	mustRefill(t, dir, "run", "+hourly", "--from", "2024-01-02T00", "--to", "2024-01-02T23", now, "--yes")
	mustRefill(t, dir, append([]string{"run", "--yes"}, rng...)...)
	checkRegions(t, dir, 30)
}

// checkRegions checks that by_region counts every event of the hourly
// table, events in all, and that every partition is done.
func checkRegions(t *testing.T, dir string, events int64) {
	t.Helper()
	if got := query(t, dir, `SELECT CAST(sum(n) AS BIGINT) FROM by_region`); got != events {
		t.Errorf("by_region counts %v events, want %d (every hour the hourly table holds)", got, events)
	}
	if got := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE state <> 'done'`); got != int64(0) {
		t.Errorf("%v partitions are not done", got)
	}
}

// hoursAndRegions is a project of an hourly model over a seeded source of
// ten events a day from 1 to 3 January 2024, and a list model by_region
// reading the whole hourly table; seeded.
func hoursAndRegions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\n")
	write(t, dir, "models/hourly.sql", `/* refill
partition_by: h
grain: hour
start: 2024-01-01
*/
SELECT date_trunc('hour', ts) AS h, region, count(*) AS n FROM {{ source("raw.events") }}
WHERE ts >= {{ start }} AND ts < {{ end }} GROUP BY ALL`)
	write(t, dir, "models/by_region.sql", `/* refill
partition_by: region
values: [eu, us]
*/
SELECT region, sum(n) AS n FROM {{ ref("hourly") }} WHERE region = {{ partition }} GROUP BY region`)
	var csv strings.Builder
	csv.WriteString("ts,region\n")
	for _, day := range []string{"2024-01-01", "2024-01-02", "2024-01-03"} {
		for _, hm := range []string{"01:15", "07:30", "20:45", "21:10", "22:05"} {
			csv.WriteString(day + " " + hm + ":00,eu\n" + day + " " + hm + ":00,us\n")
		}
	}
	write(t, dir, "seeds/raw/events.csv", csv.String())
	mustRefill(t, dir, "seed")
	return dir
}
