package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// core is an adapter with nothing beyond the contract: the optional
// methods of the one it wraps are hidden.
type core struct{ adapters.Adapter }

// TestAdapterWithoutOptions: on an adapter that can do only what the
// contract requires, a run that needs a rebuild is refused before it
// starts, seeds are refused, and the rest runs: stages are left for a
// cleaner adapter, and only errors marked transient are retried.
func TestAdapterWithoutOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.with(core{e.db})
	ctx := context.Background()
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-03", Now: jan2024}
	pl, err := r.Plan(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Run(ctx, pl, runner.RunOptions{})
	if err != nil || s.Failed != 0 || s.Succeeded == 0 {
		t.Fatalf("a run on the bare contract: %+v, %v", s, err)
	}
	pl, err = r.Plan(ctx, plan.Selection{FullRefresh: true, Select: []string{"marts.daily_revenue"}, Now: jan2024})
	if err != nil {
		t.Fatal(err)
	}
	before := e.count(`SELECT count(*) FROM marts.daily_revenue`)
	if _, err := r.Run(ctx, pl, runner.RunOptions{}); err == nil || !strings.Contains(err.Error(), "cannot rebuild") {
		t.Errorf("a full refresh on an adapter that cannot rebuild: %v, want a refusal", err)
	}
	if after := e.count(`SELECT count(*) FROM marts.daily_revenue`); after != before {
		t.Errorf("the refused full refresh changed marts.daily_revenue: %d rows, were %d", after, before)
	}
	seeds, _ := e.project.LoadSeeds(e.fsys)
	if err := adapters.LoadSeed(ctx, core{e.db}, seeds[0], seeds[0].Relation); !errors.Is(err, adapters.ErrNotSupported) {
		t.Errorf("a seed on an adapter that cannot load seeds: %v, want ErrNotSupported", err)
	}
	if adapters.Transient(core{e.db}, errors.New("lost")) || !adapters.Transient(core{e.db}, &adapters.TransientError{Err: errors.New("lost")}) {
		t.Error("without a Classifier, only TransientError should be retried")
	}
}
