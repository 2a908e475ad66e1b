package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/models"
)

// ErrInjected is the failure Faults injects.
var ErrInjected = errors.New("injected failure")

// Fault is what one failed publication left behind (see Faults).
type Fault struct {
	*Harness
	// N is the operation that failed, counted from the publication's
	// first; Failed is that operation and Log all of the publication's.
	N      int
	Failed recorder.Entry
	Log    []recorder.Entry
	// Err is what Publish (or, on adapters that defer records, Flush)
	// returned.
	Err error

	Target models.Relation
	// Swaps are the publication's swaps: the first replaces days
	// 2024-01-31 and 2024-02-01 of Target, whose partition column is d;
	// on adapters that publish several tables together a second replaces
	// the whole of another table.
	Swaps []adapters.Swap
	// Before are Target's rows before the publication, Want those a
	// successful one leaves; After are those it holds now.
	Before, Want, After []Row
	// LedgerBefore and LedgerAfter are the records of the publication's
	// models before it and now.
	LedgerBefore, LedgerAfter []adapters.Record
}

// FaultRun is the run ID of the stages Faults publishes.
const FaultRun = "20240105T060708Z-fa0175"

// Faults publishes into an existing table once for each operation of the
// publication (with, on adapters that defer records, its Flush), failing
// that operation with ErrInjected, on an adapter open opens with its
// connections recorded by rec; then it calls check with what the failure
// left behind. Whatever the adapter, every failed publication must return
// an error wrapping ErrInjected (but for the DROP or TRUNCATE of a table
// it made for itself, after it succeeded), and one that failed inside a transaction
// must roll it back and commit nothing after the failure; check asserts
// what the adapter's guarantee promises beyond that (see Fault's
// methods). After each check the publication is retried without a
// failure: it must succeed and leave the new rows. Under -short it fails
// a sample of the operations, every kind at least once (see faultPoints).
func Faults(t *testing.T, rec *recorder.Recorder, open Opener, check func(t *testing.T, f *Fault)) {
	dry := func() []recorder.Entry {
		s := Schemas{Default: "rf_" + randomSuffix(), Ledger: "rf_ledger_" + randomSuffix(), Stage: "rf_stage_" + randomSuffix()}
		f := &Fault{Harness: &Harness{t: t, A: open(t, s), S: s, Ctx: t.Context(), runID: FaultRun}}
		f.prepare()
		rec.Reset()
		if err := publish(f.Ctx, f.A, f.Swaps); err != nil {
			t.Fatalf("the publication failed with no failure injected: %v", err)
		}
		return rec.Entries()
	}
	for n := range faultPoints(dry) {
		done := false
		t.Run(fmt.Sprintf("op%02d", n), func(t *testing.T) {
			s := Schemas{Default: "rf_" + randomSuffix(), Ledger: "rf_ledger_" + randomSuffix(), Stage: "rf_stage_" + randomSuffix()}
			f := &Fault{Harness: &Harness{t: t, A: open(t, s), S: s, Ctx: t.Context(), runID: FaultRun}, N: n}
			f.prepare()
			rec.Reset()
			rec.FailAt(n, ErrInjected)
			f.Err = publish(f.Ctx, f.A, f.Swaps)
			f.Log = rec.Entries()
			rec.FailWhen(nil)
			if n > len(f.Log) {
				done = true
				if f.Err != nil {
					t.Fatalf("the publication failed with no failure injected: %v", f.Err)
				}
				return
			}
			f.Failed = f.Log[n-1]
			t.Logf("failing %s %s", f.Failed.Op, firstLine(f.Failed.SQL))
			up := strings.ToUpper(f.Failed.SQL)
			cleanup := strings.HasPrefix(up, "DROP ") || strings.HasPrefix(up, "TRUNCATE ")
			if f.Err == nil && cleanup {
				// Dropping or emptying what the publication made for
				// itself, after it succeeded: what is left is
				// CleanStages' to drop.
				if rows := f.Rows(f.Target); len(f.Before) > 0 && fmt.Sprint(rows) != fmt.Sprint(f.Want) {
					t.Errorf("the publication succeeded despite a failed %s, but %s holds %v, want %v", firstLine(f.Failed.SQL), f.Target, rows, f.Want)
				}
				return
			}
			if !errors.Is(f.Err, ErrInjected) {
				t.Fatalf("failing operation %d (%s %s): the publication returned %v, want the injected failure", n, f.Failed.Op, firstLine(f.Failed.SQL), f.Err)
			}
			// The error names the step and the statement that failed.
			var ee *adapters.ExecError
			switch {
			case !errors.As(f.Err, &ee) || ee.Step == "":
				t.Errorf("failing operation %d (%s %s): the publication returned %q, which does not name its step and statement (an adapters.ExecError)",
					n, f.Failed.Op, firstLine(f.Failed.SQL), f.Err)
			case f.Failed.SQL != "" && strings.TrimSpace(ee.Statement) != strings.TrimSpace(f.Failed.SQL):
				t.Errorf("failing %s: the error names the statement %q", firstLine(f.Failed.SQL), firstLine(ee.Statement))
			}
			f.checkTransaction()
			f.After = f.Rows(f.Target)
			f.LedgerAfter = f.ledger()
			check(t, f)
			if t.Failed() {
				t.Logf("the publication:\n%s", rec)
			}
			f.retry()
			if len(f.Before) > 0 { // a warehouse that keeps rows (not a fake)
				f.WantRows(f.Target, f.Want...)
			}
		})
		if done || t.Failed() {
			return
		}
	}
}

// prepare creates Target with days 2024-01-30 to 2024-02-02, then stages
// the publication.
func (f *Fault) prepare() {
	f.SetupLedger()
	f.Seed("src", Row{"2024-01-30", 1}, Row{"2024-01-31", 2}, Row{"2024-02-01", 3}, Row{"2024-02-02", 4})
	f.Seed("src2", Row{"2024-01-31", 20}, Row{"2024-01-31", 21}, Row{"2024-02-01", 30})
	m := DayModel("m")
	f.Target = f.Rel("t")
	first := f.Stage(m, f.Target, f.SelectFrom(f.Rel("src"), "2024-01-30", "2024-02-03"), Window("2024-01-30", "2024-02-03"))
	var records []adapters.Record
	for _, d := range []string{"2024-01-30", "2024-01-31", "2024-02-01", "2024-02-02"} {
		records = append(records, Record("m", d, 1))
	}
	f.Publish(adapters.Swap{Stage: first, Records: records})
	f.Before, f.LedgerBefore = f.Rows(f.Target), f.ledger()
	f.Want = []Row{{"2024-01-30", 1}, {"2024-01-31", 20}, {"2024-01-31", 21}, {"2024-02-01", 30}, {"2024-02-02", 4}}

	st := f.Stage(m, f.Target, f.SelectFrom(f.Rel("src2"), "2024-01-31", "2024-02-02"), Window("2024-01-31", "2024-02-02"))
	f.Swaps = []adapters.Swap{{Stage: st, Records: []adapters.Record{Record("m", "2024-01-31", 2), Record("m", "2024-02-01", 1)}}}
	if f.A.Info().MultiTable {
		whole := &models.Model{Name: "w", Config: models.Config{Location: time.UTC}}
		ws := f.Stage(whole, f.Rel("w"), f.SelectFrom(f.Rel("src2"), "2024-01-01", "2024-03-01"), adapters.Window{})
		f.Swaps = append(f.Swaps, adapters.Swap{Stage: ws, Records: []adapters.Record{Record("w", "all", 3)}})
	}
}

func (f *Fault) ledger() []adapters.Record {
	f.t.Helper()
	recs, err := f.A.Partitions(f.Ctx, []string{"m", "w"})
	if err != nil {
		f.t.Fatalf("Partitions: %v", err)
	}
	return recs
}

// checkTransaction asserts that a failure inside a transaction rolled it
// back and that nothing was committed after it.
func (f *Fault) checkTransaction() {
	f.t.Helper()
	open := false
	for _, e := range f.Log[:f.N-1] {
		switch {
		case begins(e):
			open = true
		case ends(e):
			open = false
		}
	}
	if begins(f.Failed) {
		open = false // nothing began
	}
	// A driver's commit that fails has ended its transaction (the
	// recorder rolls it back, as the warehouse would).
	driverCommit := f.Failed.Op == recorder.Commit
	rolledBack := false
	for _, e := range f.Log[f.N:] {
		if commits(e) {
			f.t.Errorf("operation %d (%s) failed, and %s ran after it", f.N, f.Failed.Op, describe(e))
		}
		if rollsBack(e) {
			rolledBack = true
		}
	}
	if open && !driverCommit && !rolledBack {
		f.t.Errorf("operation %d (%s %s) failed inside a transaction that was never rolled back", f.N, f.Failed.Op, firstLine(f.Failed.SQL))
	}
}

func begins(e recorder.Entry) bool {
	return e.Op == recorder.Begin || e.Op == recorder.Exec && strings.HasPrefix(strings.ToUpper(e.SQL), "BEGIN")
}

func commits(e recorder.Entry) bool {
	return e.Op == recorder.Commit || e.Op == recorder.Exec && strings.ToUpper(strings.TrimSpace(e.SQL)) == "COMMIT"
}

func rollsBack(e recorder.Entry) bool {
	return e.Op == recorder.Rollback || e.Op == recorder.Exec && strings.ToUpper(strings.TrimSpace(e.SQL)) == "ROLLBACK"
}

func ends(e recorder.Entry) bool { return commits(e) || rollsBack(e) }

func describe(e recorder.Entry) string {
	if e.SQL != "" {
		return firstLine(e.SQL)
	}
	return string(e.Op)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// retry publishes the same stages again, without a failure: it must
// succeed.
func (f *Fault) retry() {
	f.t.Helper()
	if err := publish(f.Ctx, f.A, f.Swaps); err != nil {
		f.t.Fatalf("publishing again after the failure: %v", err)
	}
}

// WantUnchanged asserts that Target and the ledger are as they were
// before the publication.
func (f *Fault) WantUnchanged() {
	f.t.Helper()
	if fmt.Sprint(f.After) != fmt.Sprint(f.Before) {
		f.t.Errorf("after the failure %s holds\n  %v\nwant it unchanged\n  %v", f.Target, f.After, f.Before)
	}
	if fmt.Sprint(f.LedgerAfter) != fmt.Sprint(f.LedgerBefore) {
		f.t.Errorf("after the failure the ledger holds\n  %v\nwant it unchanged\n  %v", f.LedgerAfter, f.LedgerBefore)
	}
}

// WantEachPartition asserts that each group of Target's rows (the days
// group maps to one key) is entirely old or entirely new.
func (f *Fault) WantEachPartition(group func(day string) string) {
	f.t.Helper()
	f.WantEachGroup(func(r Row) string { return group(r.D) })
}

// WantEachGroup asserts that each group of Target's rows (the rows group
// maps to one key, such as a partition of one shard) is entirely old or
// entirely new.
func (f *Fault) WantEachGroup(group func(Row) string) {
	f.t.Helper()
	by := func(rows []Row) map[string]string {
		m := map[string]string{}
		for _, r := range rows {
			m[group(r)] += fmt.Sprint(r, " ")
		}
		return m
	}
	before, want, after := by(f.Before), by(f.Want), by(f.After)
	for k, got := range after {
		if got != before[k] && got != want[k] {
			f.t.Errorf("after the failure partition %s holds %s: neither its old rows (%s) nor its new ones (%s)", k, got, before[k], want[k])
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok && want[k] != "" {
			f.t.Errorf("after the failure partition %s is empty: neither its old rows (%s) nor its new ones (%s)", k, before[k], want[k])
		}
	}
}

// Deferring is an adapter that behaves as one whose ledger records follow
// its swaps (adapters.Deferrer, as ClickHouse's do): it lists Stages as
// the staging tables dead runs kept, and has nothing of its own to flush.
type Deferring struct {
	adapters.Adapter
	Stages []string
}

// Flush writes nothing.
func (d *Deferring) Flush(context.Context) error { return nil }

// Unrecorded lists the Stages of the runs dead reports.
func (d *Deferring) Unrecorded(_ context.Context, dead func(string) bool) ([]string, error) {
	var out []string
	for _, s := range d.Stages {
		if token, ok := adapters.StageRun(s); ok && dead(token) {
			out = append(out, s)
		}
	}
	return out, nil
}
