package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestExitCode checks the one place that turns errors into exit codes, for
// the errors commands return as they are.
func TestExitCode(t *testing.T) {
	t.Parallel()
	held := fmt.Errorf("%w\nNothing was run. Wait for that run to finish, or pass --wait DURATION", &adapters.LeaseHeldError{})
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"a declared outcome", &exitError{code: exitFailed, err: errors.New("tests failed")}, exitFailed},
		{"a declared outcome wins", exitf(exitWarehouse, "reading the ledger: %v", context.Canceled), exitWarehouse},
		{"a lease another run holds", held, exitLocked},
		{"a locked file", &adapters.LockedError{What: "warehouse.duckdb", Holder: "refill run"}, exitLocked},
		{"a flag", usagef("--output %q: want text or json", "xml"), exitUsage},
		{"a selection", fmt.Errorf("%w: --from after --to", plan.ErrUsage), exitUsage},
		{"publish together", runner.RunOptions{Together: true}.Validate(adapters.Info{Name: "clickhouse"}), exitUsage},
		{"a model", models.ErrorList{{File: "models/a.sql", Msg: "bad"}}, exitUsage},
		{"an unknown model", fmt.Errorf("%w %q", models.ErrUnknownModel, "x"), exitUsage},
		{"an interruption", fmt.Errorf("setting up the ledger: %w", context.Canceled), exitInterrupted},
		{"the warehouse", errors.New("dial tcp: connection refused"), exitWarehouse},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestRunRefusalsExitTwo checks that what the runner refuses before it
// runs anything exits 2, as a usage error.
func TestRunRefusalsExitTwo(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	r := refill(t, dir, "run", "marts.daily_revenue", "--full-refresh", "--publish", "together", "--yes", now)
	if r.code != exitUsage || !strings.Contains(r.stderr, "marts.daily_revenue is rebuilt (a full refresh)") {
		t.Errorf("exit %d, want %d:\n%s", r.code, exitUsage, r.stderr)
	}
}
