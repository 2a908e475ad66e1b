package runner_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// A run that defers its records and dies shows what it published
// unrecorded only when its leases expire. A plan made before that, run
// after it, is made again, whether it had partitions to build or none:
// the run redoes what the dead run may have published, rather than exit 0
// while status says pending.
func TestARunPlansAgainWhenARunItDidNotWaitForStopped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		to   string // the plan's range; what the first run built ends on 01-03
	}{
		{"nothing to build", "2024-01-03"},
		{"a day to build", "2024-01-04"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			ctx := context.Background()
			first := plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-03", Now: jan2024}
			e.run(first, runner.RunOptions{})

			// A run that started after, and died after swapping 01-02 in,
			// its lease live when the plan is made.
			dead := runner.NewRunID(time.Now().Add(time.Second))
			m, _ := e.project.Model("staging.orders")
			table := e.runner.Scope.Relation(m)
			day := adapters.Window{Column: "d", Start: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)}
			d := &adaptertest.Deferring{Adapter: e.db, Stages: []string{adapters.StageName(table, adapters.KindStage, dead, "1"+adapters.WindowTag(day))}}
			r := e.with(d)
			r.Clock = func() time.Time { return time.Now() }
			host, _ := os.Hostname()
			now := time.Now()
			if err := e.db.SaveRun(ctx, &adapters.Run{ID: dead, Target: "dev", Status: adapters.RunRunning, StartedAt: now}); err != nil {
				t.Fatal(err)
			}
			if err := e.db.AcquireLease(ctx, adapters.Lease{Table: table.String(), RunID: dead, Host: host + "-elsewhere",
				AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			sel := first
			sel.To = tc.to
			pl, err := r.Plan(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"2024-01-03": 0, "2024-01-04": 1}[tc.to]; len(pl.Steps()) != want {
				t.Fatalf("while the dead run looks alive the plan has %d steps, want %d", len(pl.Steps()), want)
			}
			// Its lease expires before the run takes its own.
			if err := e.db.ReleaseLeases(ctx, dead); err != nil {
				t.Fatal(err)
			}
			var said []string
			s, err := r.Run(ctx, pl, runner.RunOptions{Observe: func(ev runner.Event) {
				if ev.Kind == runner.EventWaiting {
					said = append(said, ev.Message)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(said, "\n"), "planned again, with what stopped runs may have published without recording it") {
				t.Errorf("the run does not say it planned again: %q", said)
			}
			built := map[string]bool{}
			for _, p := range s.Partitions {
				if p.Status == runner.Succeeded {
					built[p.Partition] = true
				}
			}
			if !built["2024-01-02"] || tc.to == "2024-01-04" && !built["2024-01-04"] || s.Plan == pl {
				t.Errorf("the run built %v from a plan made again (%v); want 2024-01-02, which the dead run may have published, redone", built, s.Plan != pl)
			}
			// What status reads: every day done, by this run.
			d.Stages = nil
			after, err := r.Plan(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Steps()) != 0 {
				t.Errorf("after the run the plan still has %d steps: %v", len(after.Steps()), after.Steps())
			}
		})
	}
}
