package plan_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/runner/plan"
)

// Crash recovery, as the planner decides it: a resumed run repeats its
// run without redoing what it finished, and the stages a dead run kept
// are read as the publications it may have made without recording them.

// A run of dim+ over 2024-01-02 rewrote the whole table dim, which every
// day of w reads, so it planned w's other days too; it died after dim and
// w's 2024-01-02. Resumed, it skips both and still builds w's other days,
// outside its range, because its own rewrite of dim made them stale.
func TestAResumedRunRedoesWhatItsRewritesMadeStale(t *testing.T) {
	t.Parallel()
	pr := projectOf(t, map[string]string{
		"dim.sql": "SELECT 2 AS weight",
		"w.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT d, v * (SELECT weight FROM {{ ref(\"dim\") }}) AS w FROM {{ source(\"raw.e\") }} WHERE d >= {{ start }} AND d < {{ end }}",
	})
	started := pr.built.Add(10 * time.Minute)
	const resumed = "20240104T004000Z-a1b2c3"
	records := append(pr.done("dim", "", "all"), pr.done("w", "", "2024-01-01", "2024-01-02", "2024-01-03")...)
	for i, r := range records {
		if r.Partition == "all" || r.Partition == "2024-01-02" {
			at := started.Add(time.Duration(i+1) * time.Minute)
			records[i].RunID, records[i].StartedAt, records[i].FinishedAt, records[i].PublishedAt = resumed, at, at, at
		}
	}
	sel := plan.Selection{Select: []string{"dim+"}, From: "2024-01-02", To: "2024-01-02", Mode: plan.ModeAll}
	_, got := pr.plan(records, sel)
	if len(got) != 4 || got["w 2024-01-01"] != plan.ReasonUpstream {
		t.Fatalf("the run itself plans %v; want dim, w's 2024-01-02 and, as dependents of dim, w's other days", sortedMap(got))
	}

	sel.Since, sel.ResumeOf = started, resumed
	pl, got := pr.plan(records, sel)
	want := "[w 2024-01-01=upstream w 2024-01-03=upstream]"
	if fmt.Sprint(sortedMap(got)) != want {
		t.Fatalf("the resumed run plans %v; want %s", sortedMap(got), want)
	}
	if d := pl.Steps()[0].Detail; d != "reads dim, which this run rewrites" {
		t.Errorf("w 2024-01-01 is planned because %q", d)
	}
}

// Reader.Unrecorded, what a run records as pending before it drops a dead
// run's stages: the partitions of each kept stage's window, unless the
// run is alive (its stages are its work in progress), is another
// ledger's (a target that shares the stage schema), or a later record of
// the partition says what happened.
func TestUnrecordedReadsOnlyDeadRunsStages(t *testing.T) {
	t.Parallel()
	pr := newProject(t, "SELECT d")
	const dead, foreign = "20240104T004000Z-d1e2a3", "20240104T004000Z-0f0f0f"
	records := pr.everything()
	a := ledger(t, records, nil)
	src, _ := pr.p.Model("src")
	window := adapters.Window{Column: "d", Start: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)}
	stage := adapters.StageName(pr.scope.Relation(src), adapters.KindStage, dead, "1"+adapters.WindowTag(window))
	other := adapters.StageName(pr.scope.Relation(src), adapters.KindStage, foreign, "1"+adapters.WindowTag(window))
	k := &adaptertest.Deferring{Adapter: a, Stages: []string{stage, other}}
	clock := pr.built.Add(time.Hour)
	r := &plan.Reader{Project: pr.p, Adapter: k, Scope: pr.scope, Clock: func() time.Time { return clock }}
	ctx := t.Context()
	// The dead run recorded itself before it staged; the other ledger's
	// run is not in this one.
	if err := a.SaveRun(ctx, &adapters.Run{ID: dead, Target: "dev", Status: adapters.RunRunning, StartedAt: clock.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}

	got, err := r.Unrecorded(ctx, map[string]bool{adapters.RunToken(dead): true})
	if err != nil || len(got) != 0 {
		t.Errorf("a live run's stage reads as unrecorded: %v, %v", got, err)
	}
	got, err = r.Unrecorded(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Model != "src" || got[0].Partition != "2024-01-02" || got[0].State != adapters.RecordPending || got[0].RunID != dead {
		t.Fatalf("the dead run's stage reads as %+v; want src 2024-01-02 pending, by %s", got, dead)
	}
	if !strings.Contains(got[0].Error, "may have published it") || !strings.Contains(got[0].Error, stage) {
		t.Errorf("the pending record says %q", got[0].Error)
	}
	// A later run recorded the partition: the stage is no evidence any
	// more.
	later := pr.done("src", "", "2024-01-02")
	later[0].RunID = "20240104T011000Z-f0f0f0"
	later[0].StartedAt, later[0].FinishedAt, later[0].PublishedAt = clock, clock, clock
	if err := a.RecordPartitions(ctx, later); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Unrecorded(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("after a later run recorded it, the stage still reads as unrecorded: %+v, %v", got, err)
	}
}

// A removal (a partition outside its model's start..end, whose rows a
// run deletes) publishes an empty stage: a dead run's such stage makes
// the removed partition pending, though the model no longer has it, so
// that nothing reads the rows it deleted as still there.
func TestUnrecordedRemovalIsPending(t *testing.T) {
	t.Parallel()
	pr := projectOf(t, map[string]string{
		// Its end moved from 2024-01-03 to 2024-01-02 after it was built.
		"src.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nend: 2024-01-02\n*/\n" +
			"SELECT d FROM {{ source(\"raw.e\") }} WHERE d >= {{ start }} AND d < {{ end }}",
	})
	const dead = "20240104T004000Z-e1e2e3"
	records := pr.done("src", "", "2024-01-01", "2024-01-02")
	built := records[1]
	built.Partition, built.WindowStart, built.WindowEnd = "2024-01-03", built.WindowEnd, built.WindowEnd.AddDate(0, 0, 1)
	a := ledger(t, append(records, built), nil)
	ctx := t.Context()
	clock := pr.built.Add(time.Hour)
	if err := a.SaveRun(ctx, &adapters.Run{ID: dead, Target: "dev", Status: adapters.RunRunning, StartedAt: clock.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	src, _ := pr.p.Model("src")
	window := adapters.Window{Column: "d", Start: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC)}
	stage := adapters.StageName(pr.scope.Relation(src), adapters.KindStage, dead, "1"+adapters.WindowTag(window))
	r := &plan.Reader{Project: pr.p, Adapter: &adaptertest.Deferring{Adapter: a, Stages: []string{stage}}, Scope: pr.scope, Clock: func() time.Time { return clock }}
	got, err := r.Unrecorded(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Model != "src" || got[0].Partition != "2024-01-03" || got[0].State != adapters.RecordPending {
		t.Fatalf("the dead run's removal reads as %+v; want src 2024-01-03 pending", got)
	}
}

// A model with on_schema_change: rebuild whose query now returns other
// columns than its table holds is rebuilt, and the plan says how they
// differ; one whose query does not bind before the run (what it reads is
// missing) is rebuilt too, since its columns cannot be compared. The
// planner reads both from the warehouse (Reader.Plan).
func TestARebuildOnSchemaChangeIsDecidedFromTheTable(t *testing.T) {
	t.Parallel()
	pr := projectOf(t, map[string]string{
		"m.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\non_schema_change: rebuild\n*/\n" +
			"SELECT d, v FROM {{ source(\"raw.e\") }} WHERE d >= {{ start }} AND d < {{ end }}",
	})
	records := pr.done("m", "", "2024-01-01", "2024-01-02", "2024-01-03")
	for i := range records {
		records[i].Rows = 0 // as the empty table holds
	}
	a := ledger(t, records, nil)
	ctx := t.Context()
	r := &plan.Reader{Project: pr.p, Adapter: a, Scope: pr.scope, Clock: func() time.Time { return now }}
	reasons := func() map[string]string {
		t.Helper()
		pl, err := r.Plan(ctx, plan.Selection{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range pl.Steps() {
			out[s.Partition.Key] = string(s.Reason) + ": " + s.Detail
		}
		return out
	}
	if _, err := a.Query(ctx, "CREATE TABLE main.m (d DATE)", adapters.Tag{}); err != nil {
		t.Fatal(err)
	}
	got := reasons()
	if len(got) != 3 || !strings.HasPrefix(got["2024-01-02"], "rebuild: on_schema_change: rebuild: its columns cannot be compared before the run") {
		t.Errorf("with raw.e missing, the plan says %v; want every day rebuilt, its columns not comparable", got)
	}
	for _, q := range []string{"CREATE SCHEMA raw", "CREATE TABLE raw.e (d DATE, v BIGINT)"} {
		if _, err := a.Query(ctx, q, adapters.Tag{}); err != nil {
			t.Fatal(err)
		}
	}
	got = reasons()
	if len(got) != 3 || got["2024-01-01"] != "rebuild: on_schema_change: rebuild: + v BIGINT: new" {
		t.Errorf("with a column added to the query, the plan says %v; want every day rebuilt, + v BIGINT: new", got)
	}
	if _, err := a.Query(ctx, "ALTER TABLE main.m ADD COLUMN v BIGINT", adapters.Tag{}); err != nil {
		t.Fatal(err)
	}
	if got := reasons(); len(got) != 0 {
		t.Errorf("with the table's columns the query's, the plan has %v", got)
	}
}
