package runner_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// Regression tests for the ways a run used to leave wrong data behind
// while exiting 0. Each names the hole it closes.

// +m selects exactly the upstream partitions m's selected
// partitions read, through every dependency span.
func TestUpstreamSelectionFollowsSpans(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily", "rolling", "ny_daily", "by_region", "share"}, nil)
	pl := e.plan(plan.Selection{Select: []string{"+rolling"}, From: "2024-01-20", To: "2024-01-20", Now: apr2024})
	got := keySet(pl.Steps())
	var want []string
	for d := 14; d <= 20; d++ {
		want = append(want, fmt.Sprintf("daily 2024-01-%02d", d))
	}
	want = append(want, hours(mustTime("2024-01-14T00:00:00Z"), mustTime("2024-01-21T00:00:00Z"))...)
	want = append(want, "rolling 2024-01-20")
	if len(got) != len(want) || len(pl.Blocked()) != 0 {
		t.Errorf("+rolling for one day plans %d steps and blocks %d, want %d (seven days of daily and their hours)", len(got), len(pl.Blocked()), len(want))
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("+rolling for 2024-01-20 does not plan %s", k)
		}
	}
	s := e.run(plan.Selection{Select: []string{"+rolling"}, From: "2024-01-20", To: "2024-01-20", Now: apr2024}, runner.RunOptions{})
	if s.Failed+s.Blocked+s.Skipped != 0 {
		t.Fatalf("run: %+v", s)
	}
	m, _ := e.project.Model("rolling")
	p, _ := m.Partition("2024-01-20")
	if want, got := e.recompute("rolling", []models.Partition{p}); fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("rolling 2024-01-20 = %v, want %v (a full week)", got, want)
	}

	// A New York day reads the UTC hours from 05:00 to 05:00 the next day
	// (04:00 in summer).
	pl = e.plan(plan.Selection{Select: []string{"+ny_daily"}, From: "2024-03-10", To: "2024-03-10", Now: apr2024})
	wantHours := hours(mustTime("2024-03-10T05:00:00Z"), mustTime("2024-03-11T04:00:00Z")) // the 23-hour day of the change
	var gotHours []string
	for _, k := range stepKeys(pl.Steps()) {
		if strings.HasPrefix(k, "hourly ") {
			gotHours = append(gotHours, k)
		}
	}
	if !slices.Equal(gotHours, wantHours) {
		t.Errorf("+ny_daily for 2024-03-10 plans hours\n  %v\nwant\n  %v", gotHours, wantHours)
	}

	// A daily model reading a list model reads every one of its values.
	pl = e.plan(plan.Selection{Select: []string{"+share"}, From: "2024-01-05", To: "2024-01-05", Now: apr2024})
	got = keySet(pl.Steps())
	for _, k := range []string{"by_region eu", "by_region us", "daily 2024-01-05", "share 2024-01-05", "hourly 2024-01-05T23"} {
		if !got[k] {
			t.Errorf("+share for 2024-01-05 does not plan %s: %v", k, stepKeys(pl.Steps()))
		}
	}
	if got["daily 2024-01-04"] || got["hourly 2024-01-06T00"] {
		t.Errorf("+share for 2024-01-05 plans partitions it does not read: %v", stepKeys(pl.Steps()))
	}
}

// A partition is never computed from missing or failed upstream
// partitions; it is blocked, naming them, unless the run allows it.
func TestMissingUpstreamBlocks(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily", "total"}, nil)
	sel := plan.Selection{Select: []string{"daily"}, From: "2024-01-01", To: "2024-02-29", Now: apr2024}
	pl := e.plan(sel)
	if len(pl.Steps()) != 0 || len(pl.Blocked()) != 60 {
		t.Fatalf("daily alone over unbuilt hours: %d steps, %d blocked; want 0 and 60", len(pl.Steps()), len(pl.Blocked()))
	}
	if b := pl.Blocked()[0]; b.Reason != plan.ReasonBlocked || !strings.Contains(b.Detail, "hourly 2024-01-01T00, which was never built") {
		t.Errorf("blocked step %+v does not name the missing upstream partition", b)
	}
	s := e.run(sel, runner.RunOptions{})
	if s.Blocked != 60 || s.Succeeded != 0 {
		t.Errorf("run: %d succeeded, %d blocked; want 0 and 60", s.Succeeded, s.Blocked)
	}
	if n := e.count(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'daily'`); n != 0 {
		t.Error("a blocked run created the table")
	}

	// Half the hours of one day fail: that day is blocked, the others run.
	e.run(plan.Selection{Select: []string{"hourly"}, From: "2024-01-01", To: "2024-01-03", Now: apr2024}, runner.RunOptions{})
	rec := e.records("hourly")["2024-01-02T05"]
	rec.State, rec.Error = adapters.RecordFailed, "boom"
	if err := e.db.RecordPartitions(context.Background(), []adapters.Record{rec}); err != nil {
		t.Fatal(err)
	}
	pl = e.plan(plan.Selection{Select: []string{"daily"}, From: "2024-01-01", To: "2024-01-03", Now: apr2024})
	if fmt.Sprint(stepKeys(pl.Steps())) != "[daily 2024-01-01 daily 2024-01-03]" || len(pl.Blocked()) != 1 ||
		!strings.Contains(pl.Blocked()[0].Detail, "hourly 2024-01-02T05, which failed: boom") {
		t.Errorf("steps %v, blocked %+v; want the 1st and 3rd, and the 2nd blocked on the failed hour", stepKeys(pl.Steps()), pl.Blocked())
	}
	// The whole-table model reads every day: blocked while any is missing.
	pl = e.plan(plan.Selection{Select: []string{"daily", "total"}, From: "2024-01-01", To: "2024-01-03", Now: apr2024})
	if k := stepKeys(pl.Blocked()); !slices.Contains(k, "total all") {
		t.Errorf("total is not blocked while days are missing: %v", k)
	}
	// Opting in runs the blocked partition, on what is there.
	allow := plan.Selection{Select: []string{"daily"}, From: "2024-01-01", To: "2024-01-03", Now: apr2024, AllowMissingUpstream: true}
	pl = e.plan(allow)
	if len(pl.Steps()) != 3 || len(pl.Blocked()) != 0 || !strings.Contains(pl.Steps()[1].Detail, "--allow-missing-upstream") {
		t.Errorf("--allow-missing-upstream: steps %+v, blocked %d", pl.Steps(), len(pl.Blocked()))
	}
}

// A time-zone model with date windows holds local dates: the
// rendered, verified, replaced and recorded windows are one local day.
func TestLocalDateWindows(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "ny_local"}, nil)
	sel := plan.Selection{Select: []string{"+ny_local"}, From: "2024-03-09", To: "2024-03-11", Now: apr2024}
	if s := e.run(sel, runner.RunOptions{}); s.Failed+s.Blocked != 0 || s.Succeeded == 0 {
		t.Fatalf("run: %+v", s)
	}
	// The day of the change has 23 hours, each with one event.
	rows := e.query(`SELECT strftime(local_date, '%Y-%m-%d'), n FROM ny_local ORDER BY 1`)
	if fmt.Sprint(rows) != "[[2024-03-09 24] [2024-03-10 23] [2024-03-11 24]]" {
		t.Errorf("ny_local = %v", rows)
	}
	rec := e.records("ny_local")["2024-03-10"]
	if !rec.WindowStart.Equal(mustTime("2024-03-10T05:00:00Z")) || !rec.WindowEnd.Equal(mustTime("2024-03-11T04:00:00Z")) || rec.Rows != 1 {
		t.Errorf("ledger window [%s, %s), %d rows; want the local day [05:00Z, 04:00Z), 1 row", rec.WindowStart, rec.WindowEnd, rec.Rows)
	}
	m, _ := e.project.Model("ny_local")
	p, _ := m.Partition("2024-03-10")
	sql, _ := m.Render(e.runner.Scope, p)
	if !strings.Contains(sql, "TIMESTAMP '2024-03-10 05:00:00'") {
		t.Errorf("cast_timestamp(start) does not render the local midnight in UTC:\n%s", sql)
	}
	// Republishing a UTC hour makes stale the local days whose rows it can
	// hold: 02:00Z on the 10th is 21:00 on the 9th in New York.
	e.run(plan.Selection{Select: []string{"hourly"}, Partitions: []string{"2024-03-10T02"}, Mode: plan.ModeAll, Now: apr2024}, runner.RunOptions{})
	pl := e.plan(plan.Selection{Select: []string{"ny_local"}, From: "2024-03-09", To: "2024-03-11", Now: apr2024})
	if got := stepKeys(pl.Steps()); !slices.Contains(got, "ny_local 2024-03-09") {
		t.Errorf("after republishing hour 2024-03-10T02, ny_local plans %v; want 2024-03-09", got)
	}
	// A timestamp in a local-date column would be compared as UTC days:
	// refused before the swap.
	bad := eventsEnv(t, []string{"hourly"}, map[string]string{"models/ny_local.sql": strings.Replace(eventModels["models/ny_local.sql"],
		"CAST(timezone('America/New_York', CAST(h AS TIMESTAMPTZ)) AS DATE) AS local_date", "h AS local_date", 1)})
	s := bad.run(plan.Selection{Select: []string{"+ny_local"}, From: "2024-03-09", To: "2024-03-09", Now: apr2024}, runner.RunOptions{})
	var failed []string
	for _, p := range s.Partitions {
		if p.Status == runner.Failed {
			failed = append(failed, p.Err.Error())
		}
	}
	if len(failed) == 0 || !strings.Contains(failed[0], "must be a DATE") {
		t.Errorf("a timestamp in a local-date partition column: %v", failed)
	}
}

// A table dropped, or rows deleted, outside refill is noticed.
func TestDriftIsPlanned(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily"}, nil)
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-10", Now: apr2024}
	e.run(sel, runner.RunOptions{})
	if p := e.plan(sel); len(p.Steps()) != 0 {
		t.Fatalf("plan after a run: %v", stepKeys(p.Steps()))
	}
	e.query(`DELETE FROM daily WHERE d = DATE '2024-01-04'`)
	pl := e.plan(sel)
	if fmt.Sprint(stepKeys(pl.Steps())) != "[daily 2024-01-04]" || pl.Steps()[0].Reason != plan.ReasonDrift ||
		!strings.Contains(pl.Steps()[0].Detail, "holds 0 rows in this partition; the ledger recorded 1") {
		t.Errorf("after deleting a day's rows: %+v", pl.Steps())
	}
	st, err := plan.NewStatusFacts(e.project, e.runner.Scope, *e.facts(sel), sel)
	if err != nil {
		t.Fatal(err)
	}
	if st[1].Counts[plan.StateDrift] != 1 {
		t.Errorf("status counts %v, want one drift", st[1].Counts)
	}
	e.query(`DROP TABLE daily`)
	pl = e.plan(sel)
	if len(pl.Steps()) != 10 || pl.Steps()[0].Reason != plan.ReasonDrift || !strings.Contains(pl.Steps()[0].Detail, "main.daily does not exist") {
		t.Errorf("after dropping the table: %+v", pl.Steps())
	}
	e.run(sel, runner.RunOptions{})
	if p := e.plan(sel); len(p.Steps()) != 0 {
		t.Errorf("the rebuild left work: %v", stepKeys(p.Steps()))
	}
}

// A partition whose rows were deleted outside refill is noticed in a
// table with a pending publication too, whose total row count proves
// nothing: here the deleted day's row and the pending day's make the
// table's total equal to the ledger's (found by the oracle on ClickHouse
// 26, seed 1796598379097413858, after a killed run).
func TestDriftIsPlannedBesidePending(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily"}, nil)
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-10", Now: apr2024}
	e.run(sel, runner.RunOptions{})
	e.query(`DELETE FROM daily WHERE d = DATE '2024-01-04'`)
	pending := e.records("daily")["2024-01-05"]
	pending.State = adapters.RecordPending
	if err := e.db.RecordPartitions(context.Background(), []adapters.Record{pending}); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]plan.Reason{}
	for _, st := range e.plan(sel).Steps() {
		reasons[st.Model.Name+" "+st.Partition.Key] = st.Reason
	}
	if reasons["daily 2024-01-04"] != plan.ReasonDrift {
		t.Errorf("with 2024-01-05 pending, the deleted 2024-01-04 is planned %q; want drift (plan: %v)", reasons["daily 2024-01-04"], reasons)
	}
}

func (e *env) facts(sel plan.Selection) *plan.Facts {
	e.t.Helper()
	f, err := e.runner.Facts(context.Background(), sel)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// A partition published before its window closed is recorded as
// partial and redone once the window is complete.
func TestAllowPartialIsRedone(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly"}, map[string]string{"models/today.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
allow_partial: true
*/
SELECT CAST(h AS DATE) AS d, sum(n) AS n FROM {{ ref("hourly") }} WHERE h >= {{ start }} AND h < {{ end }} GROUP BY 1`})
	at := func(s string) time.Time { return mustTime(s) }
	noon := plan.Selection{From: "2024-01-01", Now: at("2024-01-02T12:30:00Z")}
	if s := e.run(noon, runner.RunOptions{}); s.Failed+s.Blocked != 0 {
		t.Fatalf("run at noon: %+v", s)
	}
	rec := e.records("today")["2024-01-02"]
	if rec.State != adapters.RecordPartial || rec.Rows != 1 {
		t.Fatalf("the open day is recorded %s with %d rows; want partial", rec.State, rec.Rows)
	}
	if e.records("today")["2024-01-01"].State != adapters.RecordDone {
		t.Error("a complete day is not recorded done")
	}
	// Later that day it is refreshed; once the day is over, redone.
	for _, now := range []string{"2024-01-02T18:30:00Z", "2024-01-03T00:30:00Z"} {
		pl := e.plan(plan.Selection{From: "2024-01-01", To: "2024-01-02", Now: at(now)})
		var today []plan.Step
		for _, st := range pl.Steps() {
			if st.Model.Name == "today" {
				today = append(today, st)
			}
		}
		if fmt.Sprint(stepKeys(today)) != "[today 2024-01-02]" || today[0].Reason != plan.ReasonPartial {
			t.Errorf("at %s: %+v", now, today)
		}
	}
	e.run(plan.Selection{From: "2024-01-01", To: "2024-01-02", Now: at("2024-01-03T00:30:00Z")}, runner.RunOptions{})
	if rec := e.records("today")["2024-01-02"]; rec.State != adapters.RecordDone || rec.Rows != 1 {
		t.Errorf("after the day: %s, %d rows", rec.State, rec.Rows)
	}
	if n := e.count(`SELECT n FROM today WHERE d = DATE '2024-01-02'`); n != 24 {
		t.Errorf("the redone day has n = %d, want 24", n)
	}
}

// Modes mean what they say; a resumed run repeats its run.
func TestModesTakeOnlyWhatTheySay(t *testing.T) {
	t.Parallel()
	// Hours from 18 March only: what is checked happens in the last days.
	e := eventsEnv(t, nil, map[string]string{"models/hourly.sql": strings.Replace(eventModels["models/hourly.sql"], "start: 2024-01-01", "start: 2024-03-18", 1),
		"models/late.sql": `/* refill
partition_by: d
grain: day
start: 2024-03-20
lookback: 3
*/
SELECT CAST(h AS DATE) AS d, sum(n) AS n FROM {{ ref("hourly") }} WHERE h >= {{ start }} AND h < {{ end }} GROUP BY 1`})
	e.run(plan.Selection{Now: apr2024}, runner.RunOptions{})
	for _, mode := range []plan.Mode{plan.ModeFailed, plan.ModeMissing} {
		if p := e.plan(plan.Selection{Mode: mode, Now: apr2024}); len(p.Steps()) != 0 {
			t.Errorf("--mode %s plans %v", mode, stepKeys(p.Steps()))
		}
	}
	if p := e.plan(plan.Selection{Now: apr2024}); len(p.Steps()) != 3 || p.Steps()[0].Reason != plan.ReasonLookback {
		t.Errorf("the scheduled form plans %+v, want the three lookback days", p.Steps())
	}
	// A run that finished its lookback days and was then resumed does not
	// redo them.
	first := e.run(plan.Selection{Select: []string{"late"}, Now: apr2024}, runner.RunOptions{RunID: "20240401T000000Z-aaaaaa"})
	if first.Succeeded != 3 {
		t.Fatalf("lookback run: %+v", first)
	}
	resumed := plan.Selection{Select: []string{"late"}, Now: apr2024, Since: first.Started, ResumeOf: first.RunID}
	if p := e.plan(resumed); len(p.Steps()) != 0 {
		t.Errorf("the resumed run redoes %v", stepKeys(p.Steps()))
	}
}

// A resumed run plans what its original plan added outside the
// range because it rewrote a whole-table upstream.
func TestResumeKeepsWholeTableDependents(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, nil, map[string]string{
		"models/dim.sql": `SELECT 'eu' AS region, 2 AS weight`,
		"models/weighted.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT CAST(ts AS DATE) AS d, sum(v * (SELECT weight FROM {{ ref("dim") }})) AS w FROM {{ source("raw.events") }}
WHERE ts >= {{ start }} AND ts < {{ end }} GROUP BY 1`,
	})
	e.run(plan.Selection{From: "2024-01-01", To: "2024-01-31", Now: apr2024}, runner.RunOptions{})
	// dim+ over two days rewrites dim, so every day of weighted is planned.
	stop := make(chan struct{})
	sel := plan.Selection{Select: []string{"dim+"}, From: "2024-01-01", To: "2024-01-02", Mode: plan.ModeAll, Now: apr2024}
	pl := e.plan(sel)
	if len(pl.Steps()) != 32 {
		t.Fatalf("dim+ plans %d steps, want dim and 31 days", len(pl.Steps()))
	}
	done := 0
	s, err := e.runner.Run(context.Background(), pl, runner.RunOptions{Concurrency: 1, Stop: stop, RunID: "20240401T000000Z-bbbbbb",
		Observe: func(ev runner.Event) {
			if ev.Kind == runner.EventPartition && ev.Result.Status == runner.Succeeded {
				if done++; done == 5 {
					close(stop)
				}
			}
		}})
	if err != nil || !s.Interrupted {
		t.Fatalf("interrupted run: %+v, %v", s, err)
	}
	resumed := sel
	resumed.Since, resumed.ResumeOf = s.Started, s.RunID
	pl = e.plan(resumed)
	if n := len(pl.Steps()); n != 32-s.Succeeded {
		t.Errorf("the resumed plan has %d steps, want %d: %v", n, 32-s.Succeeded, stepKeys(pl.Steps()))
	}
	e.runner.Run(context.Background(), pl, runner.RunOptions{})
	if p := e.plan(plan.Selection{From: "2024-01-01", To: "2024-01-31", Now: apr2024}); len(p.Steps()) != 0 {
		t.Errorf("after the resume, %v are left stale", stepKeys(p.Steps()))
	}
}

// A killed run is recorded abandoned, and every stage a dead run of the
// ledger left is dropped, whatever table it was for; another ledger's
// runs' stages (a target that shares the stage schema) are left to it.
func TestHousekeeping(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily"}, nil)
	ctx := context.Background()
	if err := e.db.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	dead := &adapters.Run{ID: "20240101T000000Z-dead00", Target: "dev", Status: adapters.RunRunning, Selection: "{}", Host: "h", PID: 1,
		StartedAt: time.Now().Add(-time.Hour)}
	if err := e.db.SaveRun(ctx, dead); err != nil {
		t.Fatal(err)
	}
	e.query(`CREATE SCHEMA IF NOT EXISTS refill_stage`)
	left := adapters.StageName(models.Relation{Schema: "main", Name: "daily"}, adapters.KindStage, dead.ID, "x1")
	e.query(fmt.Sprintf(`CREATE TABLE refill_stage."%s" AS SELECT 1 AS x`, left))
	runs, _ := e.runner.RecentRuns(ctx, 5)
	if len(runs) != 1 || runs[0].Status != adapters.RunAbandoned {
		t.Errorf("status shows the killed run as %+v, want abandoned", runs)
	}
	// A run of another model records it and drops its stage.
	e.run(plan.Selection{Select: []string{"hourly"}, From: "2024-01-01", To: "2024-01-01", Now: apr2024}, runner.RunOptions{})
	got, err := e.db.LoadRun(ctx, dead.ID)
	if err != nil || got.Status != adapters.RunAbandoned || !strings.Contains(got.Error, "abandoned") {
		t.Errorf("the killed run is now %+v, %v", got, err)
	}
	if n := e.count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill_stage'`); n != 0 {
		t.Errorf("%d stages left after the run", n)
	}

	// A run that went on with a node down leaves its stage there; a run
	// with nothing to build still drops it (nothing later would). The
	// stage of a run that is not the ledger's stays, lease or none.
	runs, err = e.db.Runs(ctx, 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("the ledger's runs: %v, %v", runs, err)
	}
	left = adapters.StageName(models.Relation{Schema: "main", Name: "hourly"}, adapters.KindStage, runs[0].ID, "x2")
	e.query(fmt.Sprintf(`CREATE TABLE refill_stage."%s" AS SELECT 1 AS x`, left))
	foreign := adapters.StageName(models.Relation{Schema: "other", Name: "hourly"}, adapters.KindStage, "20240101T000001Z-0ff000", "x3")
	e.query(fmt.Sprintf(`CREATE TABLE refill_stage."%s" AS SELECT 1 AS x`, foreign))
	if s := e.run(plan.Selection{Select: []string{"hourly"}, From: "2024-01-01", To: "2024-01-01", Now: apr2024}, runner.RunOptions{}); len(s.Partitions) != 0 {
		t.Fatalf("the second run built %d partitions, want none", len(s.Partitions))
	}
	if got := e.count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill_stage'`); got != 1 {
		t.Errorf("%d stages left after a run with nothing to build; want 1, the other ledger's", got)
	}
	if got := e.count(fmt.Sprintf(`SELECT count(*) FROM information_schema.tables WHERE table_name = '%s'`, foreign)); got != 1 {
		t.Errorf("a run with nothing to build dropped the stage of another ledger's run")
	}
	e.run(plan.Selection{Select: []string{"hourly"}, From: "2024-01-02", To: "2024-01-02", Now: apr2024}, runner.RunOptions{})
	if got := e.count(fmt.Sprintf(`SELECT count(*) FROM information_schema.tables WHERE table_name = '%s'`, foreign)); got != 1 {
		t.Errorf("a run's housekeeping dropped the stage of another ledger's run")
	}
}

// Row_count within compares with the previous partition as this
// run staged it, and with no rows too.
func TestWithinAuditInABackfill(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, nil, map[string]string{"models/spiky.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
audits:
  - row_count: {within: 50%}
*/
SELECT CAST(ts AS DATE) AS d, v FROM {{ source("raw.events") }}
WHERE ts >= {{ start }} AND ts < {{ end }}
  AND hour(ts) < CASE day(ts) WHEN 1 THEN 2 WHEN 2 THEN 6 WHEN 3 THEN 0 ELSE 5 END`})
	s := e.run(plan.Selection{From: "2024-01-01", To: "2024-01-03", Now: apr2024}, runner.RunOptions{Concurrency: 4})
	results := map[string]runner.PartitionResult{}
	for _, p := range s.Partitions {
		results[p.Partition] = p
	}
	if results["2024-01-01"].Status != runner.Succeeded {
		t.Errorf("the first day: %+v", results["2024-01-01"])
	}
	for key, want := range map[string]string{"2024-01-02": "2024-01-02 has 6 rows, 200% off the 2 of 2024-01-01", "2024-01-03": "2024-01-03 has 0 rows, 100% off the 6 of 2024-01-02"} {
		if r := results[key]; r.Status != runner.Failed || !strings.Contains(fmt.Sprint(r.Err), want) {
			t.Errorf("%s: %s %v; want failed: %s", key, r.Status, r.Err, want)
		}
	}
}

// Under --publish together, an SQL audit reads the same overlays
// as the model's query: this run's staged upstream rows.
func TestTogetherAuditsReadOverlays(t *testing.T) {
	t.Parallel()
	audited := strings.Replace(eventModels["models/daily.sql"], "start: 2024-01-01\n", `start: 2024-01-01
audits:
  - sql: |
      SELECT * FROM {{ this }} AS d
      WHERE d.n <> (SELECT count(*) FROM {{ ref("hourly") }} AS h WHERE CAST(h.h AS DATE) = d.d)
    name: hours_add_up
`, 1)
	e := eventsEnv(t, []string{"hourly"}, map[string]string{"models/daily.sql": audited})
	s := e.run(plan.Selection{From: "2024-01-01", To: "2024-01-02", Now: apr2024}, runner.RunOptions{Together: true})
	if s.Failed != 0 || s.Succeeded != 50 {
		for _, p := range s.Partitions {
			if p.Err != nil {
				t.Log(p.Model, p.Partition, p.Err)
			}
		}
		t.Fatalf("a together run on a fresh warehouse: %d succeeded, %d failed", s.Succeeded, s.Failed)
	}
}

// A pending record (a publication that may have happened) is
// redone, and what read the old rows is stale.
func TestPendingIsRedone(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t, []string{"hourly", "daily"}, nil)
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-02", Now: apr2024}
	e.run(sel, runner.RunOptions{})
	rec := e.records("hourly")["2024-01-02T03"]
	rec.State, rec.PublishedAt = adapters.RecordPending, time.Now().UTC()
	if err := e.db.RecordPartitions(context.Background(), []adapters.Record{rec}); err != nil {
		t.Fatal(err)
	}
	pl := e.plan(sel)
	reasons := map[string]plan.Reason{}
	for _, s := range pl.Steps() {
		reasons[s.Model.Name+" "+s.Partition.Key] = s.Reason
	}
	if reasons["hourly 2024-01-02T03"] != plan.ReasonPending || reasons["daily 2024-01-02"] != plan.ReasonUpstream || len(reasons) != 2 {
		t.Errorf("with a pending hour: %v", reasons)
	}
	// Alone, the daily model is blocked on it.
	if p := e.plan(plan.Selection{Select: []string{"daily"}, From: "2024-01-02", To: "2024-01-02", Now: apr2024, Mode: plan.ModeAll}); len(p.Blocked()) != 1 {
		t.Errorf("daily alone over a pending hour: %+v", p.Steps())
	}
}
