package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// A model file that is a named pipe is refused at once, by every
// command, instead of hanging.
func TestNamedPipeModelIsRefused(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "models", "marts", "pipe.sql"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, cmd := range [][]string{{"validate"}, {"plan", now}, {"status", now}, {"run", now}} {
		done := make(chan result, 1)
		go func() { done <- refill(t, dir, cmd...) }()
		select {
		case r := <-done:
			if r.code != exitUsage || !strings.Contains(r.stderr, "models/marts/pipe.sql: not a regular file (a named pipe)") {
				t.Errorf("%s: exit %d\n%s", cmd[0], r.code, r.stderr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s hangs on a named pipe", cmd[0])
		}
	}
}

// A DuckDB file named like a schema makes names ambiguous: refused
// at validate, pointing at the path.
func TestDuckDBFileNamedLikeASchema(t *testing.T) {
	t.Parallel()
	dir := shop(t, map[string]string{"refill.yml": "targets:\n  dev:\n    adapter: duckdb\n    path: refill.duckdb\nvars: {min_amount: 10}\n"})
	r := refill(t, dir, "validate")
	if r.code != exitUsage || !strings.Contains(r.stderr, "refill.yml:4:11: DuckDB names the database in refill.duckdb \"refill\", like the schema refill") {
		t.Errorf("validate: exit %d\n%s", r.code, r.stderr)
	}
	if r := refill(t, dir, "run", now); r.code != exitUsage {
		t.Errorf("run: exit %d\n%s", r.code, r.stderr)
	}
}

// A model that would overwrite a seed is refused by validate and
// by run, and the warehouse stays untouched.
func TestModelOverASeedIsRefused(t *testing.T) {
	t.Parallel()
	dir := shop(t, map[string]string{"models/raw/orders.sql": "SELECT * FROM {{ source(\"raw.orders\") }}"})
	r := refill(t, dir, "validate")
	if r.code != exitUsage || !strings.Contains(r.stderr, "models/raw/orders.sql: model raw.orders would overwrite table raw.orders") {
		t.Errorf("validate: exit %d\n%s", r.code, r.stderr)
	}
	if r := refill(t, dir, "run", now); r.code != exitUsage {
		t.Errorf("run: exit %d", r.code)
	}
}

// A resumed run repeats the publish mode of the run it resumes.
func TestResumeRepeatsTheShape(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	// An interrupted together-run of three days, as the ledger keeps it.
	sel := plan.Selection{Select: []string{"staging.orders+"}, From: "2024-01-03", To: "2024-01-05", Mode: plan.ModeAll,
		Now: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), Shape: &plan.Shape{Together: true, SplitFailed: true, Retries: 2, Concurrency: 2}}
	db, err := duckdb.Open(context.Background(), duckdb.Config{Path: filepath.Join(dir, "warehouse.duckdb")})
	if err != nil {
		t.Fatal(err)
	}
	const id = "20240201T000000Z-c0ffee"
	err = db.SaveRun(context.Background(), &adapters.Run{ID: id, Target: "dev", Status: adapters.RunInterrupted, Selection: sel.JSON(),
		Host: "h", PID: 1, StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC()})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRefill(t, dir, "run", "--resume", id, "--output", "json")
	ran, out := ranPartitions(t, r.stdout)
	// Three days of orders and daily revenue, nine of rolling revenue, the
	// monthly, list and table models, and the cumulative model from the
	// third to the end of the month: every later day carries the first.
	if len(ran) != 3+3+9+1+3+1+29 {
		t.Errorf("the resumed run ran %d partitions: %v", len(ran), ran)
	}
	checkRunningTotals(t, dir, "after the resumed together-run")
	published := query(t, dir, fmt.Sprintf(`SELECT count(DISTINCT published_at) FROM refill.partitions WHERE run_id = '%s'`, out.RunID))
	if published != int64(1) {
		t.Errorf("the resumed run published at %v moments; a together-run publishes at one", published)
	}
	stored := query(t, dir, fmt.Sprintf(`SELECT selection FROM refill.runs WHERE run_id = '%s'`, out.RunID))
	if !strings.Contains(fmt.Sprint(stored), `"together":true`) || !strings.Contains(fmt.Sprint(stored), `"resume_of":"`+id+`"`) {
		t.Errorf("the resumed run stored %v", stored)
	}
	if r := refill(t, dir, "run", "--resume", id, "--batch", "3"); r.code != exitUsage {
		t.Errorf("--resume with --batch: exit %d", r.code)
	}
}

// An interrupt that arrives after the last partition started lets
// the run finish: exit 0, run succeeded, and the summary says so.
func TestLateInterruptLetsTheRunFinish(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	stop := make(chan struct{})
	var out, errb bytes.Buffer
	// The progress log prints a line per finished partition: the first
	// line means every partition of this one-partition run has started.
	w := &closeOnWrite{w: &out, stop: stop}
	code := Do(context.Background(), stop, []string{"--project", dir, "run", "staging.orders", "--partitions", "2024-01-02", janNow}, strings.NewReader(""), w, &errb)
	if code != 0 || !strings.Contains(out.String(), "1 succeeded") || !strings.Contains(out.String(), "the run finished its work") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if s := query(t, dir, `SELECT status FROM refill.runs`); s != "succeeded" {
		t.Errorf("the run is %v", s)
	}
}

// closeOnWrite closes stop on the first write that ends a partition line.
type closeOnWrite struct {
	w    *bytes.Buffer
	stop chan struct{}
	done bool
}

func (c *closeOnWrite) Write(p []byte) (int, error) {
	if !c.done && bytes.HasPrefix(p, []byte("ok ")) {
		c.done = true
		close(c.stop)
	}
	return c.w.Write(p)
}

// Status and plan show a dropped table's partitions as drift.
func TestDroppedTableShowsAsDrift(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	execSQL(t, dir, `DROP TABLE marts.daily_revenue`)
	st := mustRefill(t, dir, "status", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow, "--no-color")
	if !strings.Contains(st.stdout, "DRIFT") || !strings.Contains(st.stdout, "xxxxxxxx") {
		t.Errorf("status after DROP TABLE:\n%s", st.stdout)
	}
	pl := mustRefill(t, dir, "plan", "--from", "2024-01", "--to", "2024-01", janNow)
	if !strings.Contains(pl.stdout, "31 drift") {
		t.Errorf("plan after DROP TABLE:\n%s", pl.stdout)
	}
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	if pl := mustRefill(t, dir, "plan", "--from", "2024-01", "--to", "2024-01", janNow); !strings.Contains(pl.stdout, "Nothing to do") {
		t.Errorf("after the rebuild:\n%s", pl.stdout)
	}
}

// A run with nothing to build still drops the staging tables that dead
// runs left (as after a node was down while its run went on); a dry run
// does not.
func TestNothingToDoDropsDeadStages(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	// The stage of the ledger's run, as after a node was down.
	left := adapters.StageName(models.Relation{Schema: "marts", Name: "daily_revenue"}, adapters.KindStage, fmt.Sprint(query(t, dir, `SELECT max(run_id) FROM refill.runs`)), "x1")
	execSQL(t, dir, `CREATE SCHEMA IF NOT EXISTS refill_stage`)
	execSQL(t, dir, fmt.Sprintf(`CREATE TABLE refill_stage."%s" AS SELECT 1 AS x`, left))
	stages := func() any {
		return query(t, dir, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill_stage'`)
	}
	for _, args := range [][]string{{"run", "--dry-run"}, {"plan"}} {
		mustRefill(t, dir, append(args, "--from", "2024-01", "--to", "2024-01", janNow)...)
		if n := stages(); n != int64(1) {
			t.Fatalf("%s dropped a stage (%v left)", strings.Join(args, " "), n)
		}
	}
	if r := mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow); !strings.Contains(r.stdout, "Nothing to do") {
		t.Fatalf("the second run has something to do:\n%s", r.stdout)
	}
	if n := stages(); n != int64(0) {
		t.Errorf("a run with nothing to do left %v staging tables of a dead run", n)
	}
}
