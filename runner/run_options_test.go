package runner_test

import (
	"errors"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestRunConcurrency checks the one place that settles a run's
// concurrency: the adapter's default unless given, capped by
// MaxConcurrency, as the run records it for --resume.
func TestRunConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	def := e.db.Info().DefaultConcurrency
	for _, tc := range []struct {
		name          string
		given, capped int
		want          int
	}{
		{"the adapter's default", 0, 0, def},
		{"given", 5, 0, 5},
		{"the default, capped", 0, 1, 1},
		{"given, capped", 8, 3, 3},
		{"a cap above", 2, 6, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := e.run(plan.Selection{From: "2024-01-01", To: "2024-01-02", Mode: plan.ModeAll},
				runner.RunOptions{Concurrency: tc.given, MaxConcurrency: tc.capped})
			run, err := e.db.LoadRun(t.Context(), s.RunID)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := plan.ParseSelection(run.Selection)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Shape == nil || sel.Shape.Concurrency != tc.want {
				t.Errorf("recorded shape %+v, want concurrency %d", sel.Shape, tc.want)
			}
		})
	}
}

// singleTable is an adapter that cannot publish several tables at once.
type singleTable struct{ adapters.Adapter }

func (s singleTable) Info() adapters.Info {
	info := s.Adapter.Info()
	info.Name, info.MultiTable = "single", false
	return info
}

func TestPublishTogetherIsCheckedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	together := runner.RunOptions{Together: true}
	if err := together.Validate(e.db.Info()); err != nil {
		t.Errorf("DuckDB publishes together: %v", err)
	}
	single := singleTable{e.db}
	if err := (runner.RunOptions{}).Validate(single.Info()); err != nil {
		t.Errorf("publishing per partition: %v", err)
	}
	err := together.Validate(single.Info())
	const want = "--publish together is not supported on single: it cannot commit several tables in one transaction (run without it to swap partition by partition)"
	if !errors.Is(err, runner.ErrTogetherUnsupported) || err.Error() != want {
		t.Errorf("Validate: %v, want %s", err, want)
	}
	// Run refuses with the same error, before it touches the warehouse.
	pl := e.plan(plan.Selection{From: "2024-01-01", To: "2024-01-02"})
	_, runErr := e.with(single).Run(t.Context(), pl, together)
	if runErr == nil || runErr.Error() != err.Error() {
		t.Errorf("Run: %v, want %v", runErr, err)
	}
	if n := e.count(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'daily_revenue'`); n != 0 {
		t.Errorf("a refused run created %d tables", n)
	}
}
