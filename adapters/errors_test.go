package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
)

func TestKnownTransience(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err              error
		transient, known bool
	}{
		{nil, false, true},
		{context.Canceled, false, true},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), false, true},
		{&adapters.TransientError{Err: errors.New("overloaded")}, true, true},
		{fmt.Errorf("stage: %w", &adapters.TransientError{Err: errors.New("conflict")}), true, true},
		{errors.New("Binder Error: column x not found"), false, false},
	} {
		if transient, known := adapters.KnownTransience(c.err); transient != c.transient || known != c.known {
			t.Errorf("KnownTransience(%v) = %v, %v; want %v, %v", c.err, transient, known, c.transient, c.known)
		}
	}
}

// An engine's error names the step and the statement's first line, cut
// when long, and still reaches what it wraps.
func TestExecError(t *testing.T) {
	t.Parallel()
	driverErr := &adapters.TransientError{Err: errors.New("Conflict on tuple deletion")}
	located := &adapters.StatementError{Statement: "SELECT x", Offset: 7, Err: driverErr}
	long := "CREATE TABLE " + strings.Repeat("x", 200) + " AS"
	for _, c := range []struct {
		step, stmt string
		err        error
		want       string
	}{
		{"publish", "DELETE FROM t WHERE d = '2024-01-02'", driverErr, "publish: DELETE FROM t WHERE d = '2024-01-02': Conflict on tuple deletion"},
		{"stage", "  CREATE TABLE s AS\nSELECT 1\n", located, "stage: CREATE TABLE s AS …: Conflict on tuple deletion"},
		{"", "COMMIT", driverErr, "COMMIT: Conflict on tuple deletion"},
		{"stage", long, driverErr, "stage: " + long[:160] + " …: Conflict on tuple deletion"},
	} {
		err := adapters.ExecFailed(c.step, c.stmt, c.err)
		if err.Error() != c.want {
			t.Errorf("ExecFailed(%q, %q) = %q\nwant %q", c.step, c.stmt, err, c.want)
		}
		if !errors.Is(err, driverErr) || !adapters.IsTransient(err) {
			t.Errorf("%q does not reach the driver's error", err)
		}
		var se *adapters.StatementError
		if c.err == error(located) && (!errors.As(err, &se) || se != located) {
			t.Errorf("%q does not reach the statement's location", err)
		}
	}
	if adapters.ExecFailed("stage", "SELECT 1", nil) != nil {
		t.Error("ExecFailed of no error is an error")
	}

	// An error that names its statement keeps it.
	inner := adapters.ExecFailed("ledger", "INSERT INTO t SELECT 1", driverErr)
	outer := adapters.ExecFailed("publish", "COMMIT", fmt.Errorf("writing records: %w", inner))
	if want := "writing records: ledger: INSERT INTO t SELECT 1: Conflict on tuple deletion"; outer.Error() != want {
		t.Errorf("got %q, want %q", outer, want)
	}
}
