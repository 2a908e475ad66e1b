package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/models"
)

// The jaffle project (testdata/jaffle) has the shape of dbt's jaffle_shop:
// whole-table marts over daily staging models, a daily mart reading a
// whole-table one, a list model over a daily one, and source data that
// ends in April 2018, years before the clock. Backfilled by ranges, in
// every mode, every model must be built, equal to its recomputation
// through the range's end.

const jaffleNow = "--now=2026-12-03T00:00:00Z"

// jaffleCheck checks the jaffle project in dir after a run over from..to
// (dates): every time partition of every model from its start through to
// is done, and every whole-table and list partition; a plan over the range
// has nothing to do; and every table equals its recomputation through to.
func jaffleCheck(t *testing.T, dir, from, to string) {
	t.Helper()
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	end, err := time.Parse("2006-01-02", to)
	if err != nil {
		t.Fatal(err)
	}
	through := end.AddDate(0, 0, 1)
	st := map[string]string{}
	for _, r := range queryRows(t, dir, `SELECT model, partition_key, state FROM refill.partitions`) {
		st[r[0].(string)+" "+r[1].(string)] = r[2].(string)
	}
	held := map[string]bool{}
	for k, s := range st {
		held[k] = s == "done"
	}
	for _, m := range p.Models {
		parts := m.Partitions(time.Time{}, time.Time{})
		if m.Kind() == models.TimePartitioned {
			parts = m.Partitions(m.Config.Start, through.Add(-time.Nanosecond))
		}
		for _, part := range parts {
			if s := st[m.Name+" "+part.Key]; s != "done" {
				t.Errorf("%s %s is %q, not done", m.Name, part.Key, s)
			}
		}
	}
	plan := mustRefill(t, dir, "plan", "--from", from, "--to", to, jaffleNow, "--output", "json")
	var pl planOutput
	if err := json.Unmarshal([]byte(plan.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps)+len(pl.Blocked) != 0 {
		t.Errorf("the plan over %s..%s still has %d steps and %d blocked:\n%s", from, to, len(pl.Steps), len(pl.Blocked), plan.stdout)
	}
	now, _ := time.Parse(time.RFC3339, strings.TrimPrefix(jaffleNow, "--now="))
	for _, diff := range recompute(t, dir, p, now, through, held, nil) {
		t.Error(diff)
	}
}

func TestJaffleRangedBackfills(t *testing.T) {
	t.Parallel()
	const from, to = "2018-01-01", "2018-02-28"
	rng := []string{"--from", from, "--to", to, jaffleNow, "--yes"}
	run := func(t *testing.T, dir string, args ...string) result {
		t.Helper()
		return mustRefill(t, dir, append([]string{"run"}, args...)...)
	}
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, dir string)
	}{
		{"plain", func(t *testing.T, dir string) { run(t, dir, rng...) }},
		{"batched", func(t *testing.T, dir string) { run(t, dir, append(rng, "--batch", "14")...) }},
		{"published together", func(t *testing.T, dir string) { run(t, dir, append(rng, "--publish", "together")...) }},
		{"one at a time", func(t *testing.T, dir string) { run(t, dir, append(rng, "--concurrency", "1")...) }},
		{"staging, then downstream only", func(t *testing.T, dir string) {
			run(t, dir, append(rng, "staging/*")...)
			run(t, dir, append(rng, "staging.stg_orders+", "--mode", "all")...)
		}},
		{"upstream through the marts", func(t *testing.T, dir string) {
			run(t, dir, append(rng, "+marts.orders", "+marts.orders_by_status")...)
		}},
		{"late rows, then that day and what reads it", func(t *testing.T, dir string) {
			run(t, dir, rng...)
			execSQL(t, dir, `INSERT INTO raw.orders VALUES (1000, 7, DATE '2018-02-10', 'placed')`)
			execSQL(t, dir, `INSERT INTO raw.payments VALUES (1000, 1000, 'coupon', 1500, DATE '2018-02-10')`)
			run(t, dir, "staging.stg_orders+", "staging.stg_payments+", "--partitions", "2018-02-10", "--mode", "all", jaffleNow, "--yes")
		}},
		{"logic change", func(t *testing.T, dir string) {
			run(t, dir, rng...)
			edit(t, dir, "models/staging/stg_payments.sql", "/ 100 AS amount", "/ 100 + 1 AS amount")
			if r := run(t, dir, rng...); !strings.Contains(r.stdout, "stale") {
				t.Errorf("the changed model is not rebuilt as stale:\n%s", r.stdout)
			}
		}},
	} {
		if testing.Short() && tc.name != "plain" && tc.name != "staging, then downstream only" {
			continue // two modes in the fast loop
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, "jaffle", nil)
			mustRefill(t, dir, "seed")
			tc.do(t, dir)
			jaffleCheck(t, dir, from, to)
		})
	}
}

// TestJaffleLiveness: a range that starts after the models' start leaves
// the whole-table marts blocked, and says so with exit 5, what they wait
// for and the command that builds it; that command builds everything.
// A later range extends the marts' horizon, and the scheduled run keeps
// them current.
func TestJaffleLiveness(t *testing.T) {
	t.Parallel()
	dir := project(t, "jaffle", nil)
	mustRefill(t, dir, "seed")
	r := refill(t, dir, "run", "--from", "2018-02-01", "--to", "2018-02-28", jaffleNow, "--yes", "--output", "json")
	if r.code != exitIncomplete {
		t.Fatalf("a range after the start: exit %d, want %d\n%s%s", r.code, exitIncomplete, r.stdout, r.stderr)
	}
	var out runOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	var customers *blockedModelJSON
	for i, b := range out.BlockedModels {
		if b.Model == "marts.customers" {
			customers = &out.BlockedModels[i]
		}
	}
	if customers == nil || customers.WaitsFor != "staging.stg_orders 2018-01-01" || customers.WaitsThrough != "2018-01-31" || customers.State != "missing" ||
		customers.Command != "refill run +marts.customers --from 2018-02-01 --to 2018-02-28" || out.BlockedReasons["missing"] == 0 {
		t.Fatalf("the blocked customers mart: %+v, reasons %v", out.BlockedModels, out.BlockedReasons)
	}
	text := refill(t, dir, "run", "--from", "2018-02-01", "--to", "2018-02-28", jaffleNow, "--yes")
	if text.code != exitIncomplete || !strings.Contains(text.stdout, "marts.customers (1 partition): waits for staging.stg_orders 2018-01-01 through 2018-01-31 (never built)") ||
		!strings.Contains(text.stdout, "to build it: refill run +marts.customers --from 2018-02-01 --to 2018-02-28") {
		t.Errorf("the text summary of a blocked run: exit %d\n%s", text.code, text.stdout)
	}
	if r := refill(t, dir, "run", "--from", "2018-02-01", "--to", "2018-02-28", jaffleNow, "--yes", "--allow-blocked"); r.code != 0 {
		t.Errorf("--allow-blocked: exit %d\n%s", r.code, r.stdout)
	}
	// The suggested command, then the rest of what reads January.
	mustRefill(t, dir, "run", "+marts.customers", "--from", "2018-02-01", "--to", "2018-02-28", jaffleNow, "--yes")
	mustRefill(t, dir, "run", "--from", "2018-01-01", "--to", "2018-02-28", jaffleNow, "--yes")
	jaffleCheck(t, dir, "2018-01-01", "2018-02-28")

	// A later range extends the marts' horizon.
	mustRefill(t, dir, "run", "--from", "2018-03-01", "--to", "2018-04-30", jaffleNow, "--yes")
	jaffleCheck(t, dir, "2018-01-01", "2018-04-30")
	st := mustRefill(t, dir, "status", "--from", "2018-01-01", "--to", "2018-04-30", jaffleNow)
	if !strings.Contains(st.stdout, "all as of 2018-04-30") {
		t.Errorf("status does not give the marts' horizon:\n%s", st.stdout)
	}
	// A rerun of January keeps the horizon.
	mustRefill(t, dir, "run", "--from", "2018-01-01", "--to", "2018-01-31", jaffleNow, "--yes", "--mode", "all")
	jaffleCheck(t, dir, "2018-01-01", "2018-04-30")
	if h := query(t, dir, `SELECT window_end FROM refill.partitions WHERE model = 'marts.customers'`); fmt.Sprint(h) != "2018-05-01 00:00:00 +0000 UTC" {
		t.Errorf("a rerun of January left the horizon of customers at %v, want 2018-05-01", h)
	}
}

// TestJaffleScheduled: the scheduled form builds every day to the clock,
// and the next one refreshes the whole table over a source: unchanged, it
// publishes nothing and nothing downstream runs; changed, what reads it is
// rebuilt.
func TestJaffleScheduled(t *testing.T) {
	t.Parallel()
	dir := project(t, "jaffle", nil)
	mustRefill(t, dir, "seed")
	now := "--now=2018-06-01T00:00:00Z"
	mustRefill(t, dir, "run", now, "--yes")
	jaffleCheckAt(t, dir, now, "2018-05-31")
	published := query(t, dir, `SELECT max(published_at) FROM refill.partitions`)
	r := mustRefill(t, dir, "run", now, "--yes", "--output", "json")
	var out runOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Succeeded == 0 || out.Unchanged != out.Succeeded {
		t.Errorf("a scheduled run over an unchanged source: %d succeeded, %d unchanged; want every one unchanged", out.Succeeded, out.Unchanged)
	}
	if again := query(t, dir, `SELECT max(published_at) FROM refill.partitions`); fmt.Sprint(again) != fmt.Sprint(published) {
		t.Errorf("an unchanged refresh published something: %v, then %v", published, again)
	}
	execSQL(t, dir, `UPDATE raw.customers SET first_name = 'Renamed' WHERE id = 7`)
	r = mustRefill(t, dir, "run", now, "--yes", "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Unchanged != 0 || out.Succeeded < 3 {
		t.Errorf("a scheduled run after a customer was renamed: %d succeeded, %d unchanged", out.Succeeded, out.Unchanged)
	}
	jaffleCheckAt(t, dir, now, "2018-05-31")
	if n := query(t, dir, `SELECT count(*) FROM marts.customers WHERE first_name = 'Renamed'`); n != int64(1) {
		t.Errorf("the renamed customer is in customers %v times", n)
	}
}

// jaffleCheckAt is jaffleCheck for a clock other than jaffleNow.
func jaffleCheckAt(t *testing.T, dir, now, to string) {
	t.Helper()
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	end, _ := time.Parse("2006-01-02", to)
	clock, _ := time.Parse(time.RFC3339, strings.TrimPrefix(now, "--now="))
	held := map[string]bool{}
	for _, r := range queryRows(t, dir, `SELECT model, partition_key FROM refill.partitions WHERE state = 'done'`) {
		held[r[0].(string)+" "+r[1].(string)] = true
	}
	for _, diff := range recompute(t, dir, p, clock, end.AddDate(0, 0, 1), held, nil) {
		t.Error(diff)
	}
}

// TestJaffleKilledAndResumed: a ranged backfill SIGKILLed midway and
// resumed builds everything, equal to the recomputation.
func TestJaffleKilledAndResumed(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := project(t, "jaffle", nil)
	mustRefill(t, dir, "seed")
	p := startRun(t, bin, "--project", dir, "run", "--from", "2018-01-01", "--to", "2018-02-28", jaffleNow, "--yes", "--concurrency", "1")
	waitFor(t, p.lines, "ok", 40)
	p.signal(syscall.SIGKILL)
	p.wait()
	id := query(t, dir, `SELECT run_id FROM refill.runs ORDER BY started_at DESC LIMIT 1`)
	mustRefill(t, dir, "run", "--resume", fmt.Sprint(id), "--yes")
	jaffleCheck(t, dir, "2018-01-01", "2018-02-28")
}
