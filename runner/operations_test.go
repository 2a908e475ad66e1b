package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// The planner and the runner on their own (without the CLI): a full
// refresh rebuilds a table to the same rows, a logic change is explained
// and accepted forward-only, status follows the ledger, and a model
// removed from the project is found and pruned.
func TestOperationsWithoutTheCLI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	all := plan.Selection{Now: jan2024}
	if s := e.run(all, runner.RunOptions{}); s.Failed+s.Skipped+s.Blocked != 0 || s.Succeeded == 0 {
		t.Fatalf("the first run: %+v", s)
	}
	const daily = "SELECT count(*), sum(revenue) FROM marts.daily_revenue"
	before := e.query(daily)

	// A full refresh rebuilds the whole table: every partition of the
	// model, to the same rows, and nothing is left to do.
	full := e.plan(plan.Selection{Select: []string{"marts.daily_revenue"}, FullRefresh: true, Now: jan2024})
	if len(full.Steps()) == 0 {
		t.Fatal("a full refresh plans nothing")
	}
	for _, st := range full.Steps() {
		if st.Model.Name == "marts.daily_revenue" && st.Reason != plan.ReasonRebuild {
			t.Errorf("a full refresh plans %s %s as %s", st.Model.Name, st.Partition.Key, st.Reason)
		}
	}
	if s, err := e.runner.Run(ctx, full, runner.RunOptions{}); err != nil || s.Failed+s.Skipped != 0 {
		t.Fatalf("the full refresh: %+v, %v", s, err)
	}
	if after := e.query(daily); !equalRows(before, after) {
		t.Errorf("a full refresh changed the table: %v, then %v", before, after)
	}
	// What reads it is redone (it was republished), or refreshed as a
	// scheduled run would; the model itself is done.
	if p := e.plan(plan.Selection{Select: []string{"marts.daily_revenue"}, Now: jan2024}); len(p.Steps()) != 0 {
		t.Errorf("after the full refresh, %d steps of it are left", len(p.Steps()))
	}
	for _, st := range e.plan(all).Steps() {
		if st.Reason != plan.ReasonUpstream && st.Reason != plan.ReasonRefresh || st.Model.Name == "marts.daily_revenue" {
			t.Errorf("after the full refresh, %s %s runs as %s", st.Model.Name, st.Partition.Key, st.Reason)
			break
		}
	}

	// A logic change: stale, explained, then accepted forward-only.
	edit(t, e, "models/marts/daily_revenue.sql", "status = 'returned'", "status IN ('returned')")
	sel := plan.Selection{Select: []string{"marts.daily_revenue"}, From: "2024-01", To: "2024-01", Now: jan2024}
	stale := e.plan(sel)
	if len(stale.Steps()) != 31 || stale.Steps()[0].Reason != plan.ReasonStale {
		t.Fatalf("after a logic change: %d steps, the first %s", len(stale.Steps()), stale.Steps()[0].Reason)
	}
	changes, err := e.runner.Explain(ctx, stale)
	if err != nil || len(changes) != 1 || changes[0].Partitions != 31 ||
		!strings.Contains(changes[0].Diff, "-       sum(CASE WHEN status = 'returned'") || !strings.Contains(changes[0].Diff, "+       sum(CASE WHEN status IN ('returned')") {
		t.Fatalf("explain: %+v, %v", changes, err)
	}
	st, err := plan.NewStatusFacts(e.project, e.runner.Scope, mustFacts(t, e, sel), sel)
	if err != nil || st[0].Counts[plan.StateStale] != 31 {
		t.Fatalf("status after the change: %v, %v", st, err)
	}
	accepted, err := e.runner.Accept(ctx, sel, "accept-1", 0, func(runner.Event) {})
	if err != nil || len(accepted) != 1 || accepted[0].Partitions != 31 {
		t.Fatalf("accept: %+v, %v", accepted, err)
	}
	if p := e.plan(sel); len(p.Steps()) != 0 {
		t.Errorf("after accept, %d steps are left", len(p.Steps()))
	}
	st, err = plan.NewStatusFacts(e.project, e.runner.Scope, mustFacts(t, e, sel), sel)
	if err != nil || st[0].Counts[plan.StateDone] != 31 {
		t.Errorf("status after accept: %v, %v", st, err)
	}

	// A model gone from the project: an orphan, pruned: its table dropped,
	// its records kept as removed.
	delete(e.fsys, "models/marts/customer_lifetime.sql")
	e.load()
	orphans, err := e.runner.Orphans(ctx)
	if err != nil || len(orphans) != 1 || orphans[0].Name != "marts.customer_lifetime" || orphans[0].Partitions == 0 {
		t.Fatalf("orphans: %+v, %v", orphans, err)
	}
	if _, err := e.runner.Prune(ctx, []string{"marts.customer_lifetime"}, "prune-1", func(runner.Event) {}); err != nil {
		t.Fatal(err)
	}
	if orphans, err := e.runner.Orphans(ctx); err != nil || len(orphans) != 0 {
		t.Errorf("orphans after prune: %+v, %v", orphans, err)
	}
	if n := e.count("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'marts' AND table_name = 'customer_lifetime'"); n != 0 {
		t.Errorf("prune left the table")
	}
	for key, rec := range e.records("marts.customer_lifetime") {
		if rec.State != adapters.RecordRemoved || rec.RunID != "prune-1" {
			t.Errorf("after prune, marts.customer_lifetime %s is %s by %s", key, rec.State, rec.RunID)
		}
	}
}

// edit replaces old with new in a file of e's project and reloads it.
func edit(t *testing.T, e *env, path, old, new string) {
	t.Helper()
	f := e.fsys[path]
	if f == nil || !strings.Contains(string(f.Data), old) {
		t.Fatalf("%s does not hold %q", path, old)
	}
	f.Data = []byte(strings.Replace(string(f.Data), old, new, 1))
	e.load()
}

func mustFacts(t *testing.T, e *env, sel plan.Selection) plan.Facts {
	t.Helper()
	f, err := e.runner.Facts(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	return *f
}

func equalRows(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
