// Package adaptertest is the conformance suite every refill adapter must
// pass: create, swap, idempotent rerun, empty window, refused out-of-window
// rows, ledger, leases, seeds, and a failure mid-swap that leaves the target
// as it was. Adapter packages call Run from their tests against a real
// warehouse.
package adaptertest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Schemas names the schemas one subtest uses; they are unique per subtest
// so that a shared warehouse can run the suite concurrently.
type Schemas struct {
	Default string // where the test's models and sources live
	Ledger  string
	Stage   string
}

// Opener opens an adapter for one subtest, using the given schemas. It
// should register t.Cleanup to close it (and drop the schemas, on a shared
// warehouse).
type Opener func(t *testing.T, s Schemas) adapters.Adapter

// Test is one check of the suite.
type Test struct {
	Name string
	Fn   func(t *testing.T, h *Harness)
}

// Tests are the checks Run runs: what every adapter must do on its own,
// without the runner.
var Tests = []Test{
	{"CreateTargetFromStage", testCreate},
	{"SwapReplacesOnlyTheWindow", testSwap},
	{"RepublishIsIdempotent", testIdempotent},
	{"EmptyWindowEndsEmpty", testEmptyWindow},
	{"ListAndWholeTableWindows", testListAndWhole},
	{"FailedSwapLeavesTargetAsItWas", testFailedSwap},
	{"Ledger", testLedger},
	{"LedgerSummaries", testSummaries},
	{"Leases", testLeases},
	{"Seeds", testSeeds},
	{"CleanStages", testCleanStages},
	{"OverlayShowsTheTableAsItWillRead", testOverlay},
}

// Run runs the suite.
func Run(t *testing.T, open Opener) { RunTests(t, open, Tests) }

// RunTests runs tests, each as a subtest on an adapter open opens on
// fresh schemas.
func RunTests(t *testing.T, open Opener, tests []Test) {
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			suffix := randomSuffix()
			s := Schemas{Default: "rt_" + suffix, Ledger: "rt_ledger_" + suffix, Stage: "rt_stage_" + suffix}
			tc.Fn(t, &Harness{t: t, A: open(t, s), S: s, Ctx: t.Context()})
		})
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Harness is one subtest's adapter, with helpers that fail the test on
// error.
type Harness struct {
	t   *testing.T
	A   adapters.Adapter
	S   Schemas
	Ctx context.Context
	// runID tags the stages Stage makes; "test" when empty.
	runID string
}

// D returns the adapter's dialect.
func (h *Harness) D() models.Dialect { return h.A.Dialect() }

// Rel names table name in the subtest's default schema.
func (h *Harness) Rel(name string) models.Relation {
	return models.Relation{Schema: h.S.Default, Name: name}
}

// Seed loads rows into table name, whose columns are d (a date) and v (an
// integer).
func (h *Harness) Seed(name string, rows ...Row) {
	h.t.Helper()
	s := &models.Seed{Relation: h.Rel(name), Columns: []models.Column{{Name: "d", Type: models.TypeDate}, {Name: "v", Type: models.TypeInt}}}
	for _, r := range rows {
		s.Rows = append(s.Rows, []any{Day(r.D), r.V})
	}
	if err := adapters.LoadSeed(h.Ctx, h.A, s, s.Relation); err != nil {
		h.t.Fatalf("LoadSeed: %v", err)
	}
}

// Row is a row of the suite's tables: a day as "2006-01-02" and a value.
type Row struct {
	D string
	V int64
}

// Day parses a day as "2006-01-02", in UTC.
func Day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Rows returns the (d, v) rows of table, sorted.
func (h *Harness) Rows(table models.Relation) []Row {
	h.t.Helper()
	d := h.D()
	res, err := h.A.Query(h.Ctx, fmt.Sprintf("SELECT %s, %s FROM %s", d.QuoteIdent("d"), d.QuoteIdent("v"), table.Quote(d)), adapters.Tag{})
	if err != nil {
		h.t.Fatalf("reading %s: %v", table, err)
	}
	var out []Row
	for _, r := range res.Rows {
		t, ok := r[0].(time.Time)
		if !ok {
			h.t.Fatalf("column d of %s is a %T, want time.Time", table, r[0])
		}
		out = append(out, Row{t.Format("2006-01-02"), adapters.Int(r[1])})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].D != out[j].D {
			return out[i].D < out[j].D
		}
		return out[i].V < out[j].V
	})
	return out
}

// WantRows fails the test unless table holds exactly want.
func (h *Harness) WantRows(table models.Relation, want ...Row) {
	h.t.Helper()
	got := h.Rows(table)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("%s holds\n  %v\nwant\n  %v", table, got, want)
	}
}

// DayModel returns a daily model over column d reading nothing (the suite
// stages queries directly).
func DayModel(name string) *models.Model {
	return &models.Model{Name: name, Config: models.Config{PartitionBy: "d", Grain: models.Day, Location: time.UTC, Start: Day("2024-01-01")}}
}

// Window returns the window of days [from, to) of column d.
func Window(from, to string) adapters.Window {
	return adapters.Window{Column: "d", Start: Day(from), End: Day(to), Location: time.UTC}
}

// SelectFrom renders a query of the rows of src within [from, to).
func (h *Harness) SelectFrom(src models.Relation, from, to string) string {
	d := h.D()
	return fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s >= %s AND %s < %s", d.QuoteIdent("d"), d.QuoteIdent("v"), src.Quote(d),
		d.QuoteIdent("d"), d.Date(Day(from)), d.QuoteIdent("d"), d.Date(Day(to)))
}

// Stage stages query for m's target, dropped when the test ends.
func (h *Harness) Stage(m *models.Model, target models.Relation, query string, w adapters.Window) *adapters.Stage {
	h.t.Helper()
	st, err := h.A.Stage(h.Ctx, adapters.StageRequest{Model: m, Target: target, Query: query, Window: w,
		Tag: adapters.Tag{RunID: cmp.Or(h.runID, "test"), Model: m.Name, Partition: "p", Step: "stage"}})
	if err != nil {
		h.t.Fatalf("Stage: %v\n%s", err, query)
	}
	h.t.Cleanup(func() { h.A.DropStage(context.Background(), st) })
	return st
}

// Publish publishes swaps and, on adapters that defer them, their records.
func (h *Harness) Publish(swaps ...adapters.Swap) {
	h.t.Helper()
	if err := publish(h.Ctx, h.A, swaps); err != nil {
		h.t.Fatalf("Publish: %v", err)
	}
}

// publish publishes swaps and, on an adapter that writes its records
// after the swaps (adapters.Deferrer), writes them: once it returns, the
// ledger holds them.
func publish(ctx context.Context, a adapters.Adapter, swaps []adapters.Swap) error {
	err := a.Publish(ctx, swaps)
	if d, ok := a.(adapters.Deferrer); ok && err == nil {
		err = d.Flush(ctx)
	}
	return err
}

// Record returns a done record of partition key of model m.
func Record(m, key string, rows int64) adapters.Record {
	now := time.Now().UTC().Truncate(time.Second)
	return adapters.Record{Model: m, Partition: key, State: adapters.RecordDone, Fingerprint: "fp-" + key, Rows: rows,
		RunID: "run-1", Attempts: 1, StartedAt: now, FinishedAt: now, PublishedAt: now}
}

// SetupLedger creates the ledger.
func (h *Harness) SetupLedger() {
	h.t.Helper()
	if err := h.A.SetupLedger(h.Ctx); err != nil {
		h.t.Fatalf("SetupLedger: %v", err)
	}
}

func testCreate(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-02", 3})
	m := DayModel("m")
	target := h.Rel("created")
	st := h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-02", "2024-01-03"), Window("2024-01-02", "2024-01-03"))
	h.Publish(adapters.Swap{Stage: st, Records: []adapters.Record{Record("m", "2024-01-02", 2)}})
	h.WantRows(target, Row{"2024-01-02", 2}, Row{"2024-01-02", 3})
	recs, err := h.A.Partitions(h.Ctx, []string{"m"})
	if err != nil || len(recs) != 1 || recs[0].Rows != 2 || recs[0].State != adapters.RecordDone {
		t.Errorf("ledger after create = %+v, %v", recs, err)
	}
}

func testSwap(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-03", 3})
	h.Seed("src2", Row{"2024-01-02", 20}, Row{"2024-01-02", 21})
	m := DayModel("m")
	target := h.Rel("t")
	all := h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-04"), Window("2024-01-01", "2024-01-04"))
	h.Publish(adapters.Swap{Stage: all})
	st := h.Stage(m, target, h.SelectFrom(h.Rel("src2"), "2024-01-02", "2024-01-03"), Window("2024-01-02", "2024-01-03"))
	h.Publish(adapters.Swap{Stage: st, Records: []adapters.Record{Record("m", "2024-01-02", 2)}})
	h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-02", 20}, Row{"2024-01-02", 21}, Row{"2024-01-03", 3})
}

func testIdempotent(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2})
	m := DayModel("m")
	target := h.Rel("t")
	st := h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-03"), Window("2024-01-01", "2024-01-03"))
	recs := []adapters.Record{Record("m", "2024-01-01", 1), Record("m", "2024-01-02", 1)}
	h.Publish(adapters.Swap{Stage: st, Records: recs})
	h.Publish(adapters.Swap{Stage: st, Records: recs})
	h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-02", 2})
	got, err := h.A.Partitions(h.Ctx, []string{"m"})
	if err != nil || len(got) != 2 {
		t.Errorf("ledger has %d records after republishing, want 2 (%v)", len(got), err)
	}
}

func testEmptyWindow(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-03", 3})
	m := DayModel("m")
	target := h.Rel("t")
	h.Publish(adapters.Swap{Stage: h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-04"), Window("2024-01-01", "2024-01-04"))})
	// The source no longer has rows for 2024-01-02: the window must end empty.
	empty := h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-02", "2024-01-02"), Window("2024-01-02", "2024-01-03"))
	h.Publish(adapters.Swap{Stage: empty, Records: []adapters.Record{Record("m", "2024-01-02", 0)}})
	h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-03", 3})
}

func testListAndWhole(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-03", 3})
	d := h.D()
	listModel := &models.Model{Name: "l", Config: models.Config{PartitionBy: "v", Values: []any{1, 2, 3}, Location: time.UTC}}
	target := h.Rel("lt")
	h.Publish(adapters.Swap{Stage: h.Stage(listModel, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-04"),
		adapters.Window{Column: "v", Values: []any{1, 2, 3}})})
	q := fmt.Sprintf("SELECT %s + 1 AS %s, %s FROM %s WHERE %s = 2", d.CastDate(d.QuoteIdent("d")), d.QuoteIdent("d"),
		d.QuoteIdent("v"), h.Rel("src").Quote(d), d.QuoteIdent("v"))
	h.Publish(adapters.Swap{Stage: h.Stage(listModel, target, q, adapters.Window{Column: "v", Values: []any{2}})})
	h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-03", 2}, Row{"2024-01-03", 3})

	whole := &models.Model{Name: "w", Config: models.Config{Location: time.UTC}}
	wt := h.Rel("wt")
	h.Publish(adapters.Swap{Stage: h.Stage(whole, wt, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-04"), adapters.Window{})})
	h.Publish(adapters.Swap{Stage: h.Stage(whole, wt, h.SelectFrom(h.Rel("src"), "2024-01-03", "2024-01-04"), adapters.Window{})})
	h.WantRows(wt, Row{"2024-01-03", 3})
}

// testOverlay: an Overlayer's view reads the target with the stages'
// windows replaced by their rows, or, with replace, the stages alone; the
// target is untouched, and the view is gone once dropped.
func testOverlay(t *testing.T, h *Harness) {
	o, ok := h.A.(adapters.Overlayer)
	if !ok {
		t.Skipf("the %s adapter has no overlays", h.A.Info().Name)
	}
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-03", 3})
	h.Seed("src2", Row{"2024-01-02", 20}, Row{"2024-01-03", 30})
	m := DayModel("m")
	target := h.Rel("t")
	h.Publish(adapters.Swap{Stage: h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-04"), Window("2024-01-01", "2024-01-04"))})
	day2 := h.Stage(m, target, h.SelectFrom(h.Rel("src2"), "2024-01-02", "2024-01-03"), Window("2024-01-02", "2024-01-03"))
	day3 := h.Stage(m, target, h.SelectFrom(h.Rel("src2"), "2024-01-03", "2024-01-04"), Window("2024-01-03", "2024-01-04"))
	for _, tc := range []struct {
		replace bool
		want    []Row
	}{
		{false, []Row{{"2024-01-01", 1}, {"2024-01-02", 20}, {"2024-01-03", 30}}},
		{true, []Row{{"2024-01-02", 20}, {"2024-01-03", 30}}},
	} {
		view, err := o.Overlay(h.Ctx, target, []*adapters.Stage{day2, day3}, tc.replace)
		if err != nil {
			t.Fatalf("Overlay(replace %v): %v", tc.replace, err)
		}
		h.WantRows(view, tc.want...)
		if err := o.DropOverlay(h.Ctx, view); err != nil {
			t.Fatalf("DropOverlay: %v", err)
		}
		if _, err := h.A.Query(h.Ctx, "SELECT * FROM "+view.Quote(h.D()), adapters.Tag{}); err == nil {
			t.Errorf("the overlay %s is still there after DropOverlay", view)
		}
	}
	h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-02", 2}, Row{"2024-01-03", 3})
}

func testFailedSwap(t *testing.T, h *Harness) {
	h.SetupLedger()
	h.Seed("src", Row{"2024-01-01", 1}, Row{"2024-01-02", 2})
	h.Seed("src2", Row{"2024-01-01", 10}, Row{"2024-01-02", 20})
	m := DayModel("m")
	target := h.Rel("t")
	h.Publish(adapters.Swap{Stage: h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-03"), Window("2024-01-01", "2024-01-03")),
		Records: []adapters.Record{Record("m", "2024-01-01", 1), Record("m", "2024-01-02", 1)}})
	before, _ := h.A.Partitions(h.Ctx, []string{"m"})

	good := h.Stage(m, target, h.SelectFrom(h.Rel("src2"), "2024-01-01", "2024-01-02"), Window("2024-01-01", "2024-01-02"))
	gone := h.Stage(m, target, h.SelectFrom(h.Rel("src2"), "2024-01-02", "2024-01-03"), Window("2024-01-02", "2024-01-03"))
	if err := h.A.DropStage(h.Ctx, gone); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		h.WantRows(target, Row{"2024-01-01", 1}, Row{"2024-01-02", 2})
		after, _ := h.A.Partitions(h.Ctx, []string{"m"})
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("ledger changed by %s:\n  %v\n  %v", what, before, after)
		}
	}
	if err := h.A.Publish(h.Ctx, []adapters.Swap{{Stage: gone, Records: []adapters.Record{Record("m", "2024-01-02", 9)}}}); err == nil {
		t.Fatal("publishing a dropped stage succeeded")
	}
	check("publishing a dropped stage")
	if !h.A.Info().MultiTable {
		return
	}
	// Two swaps in one transaction; the second's insert fails after the
	// first swap and the second's delete already ran: all must roll back.
	d := h.D()
	extra := h.Stage(m, target, fmt.Sprintf("SELECT %s, %s, 1 AS %s FROM %s WHERE %s = %s", d.QuoteIdent("d"), d.QuoteIdent("v"),
		d.QuoteIdent("not_in_target"), h.Rel("src2").Quote(d), d.QuoteIdent("d"), d.Date(Day("2024-01-02"))), Window("2024-01-02", "2024-01-03"))
	err := h.A.Publish(h.Ctx, []adapters.Swap{
		{Stage: good, Records: []adapters.Record{Record("m", "2024-01-01", 9)}},
		{Stage: extra, Records: []adapters.Record{Record("m", "2024-01-02", 9)}},
	})
	if err == nil {
		t.Fatal("publishing a stage with a column the target lacks succeeded")
	}
	check("a transaction that failed midway")
}

func testLedger(t *testing.T, h *Harness) {
	if recs, err := h.A.Partitions(h.Ctx, []string{"m"}); err != nil || len(recs) != 0 {
		t.Fatalf("a ledger that does not exist yet: %v, %v", recs, err)
	}
	if _, err := h.A.LoadRun(h.Ctx, "nope"); !errors.Is(err, adapters.ErrRunNotFound) {
		t.Errorf("LoadRun before setup: %v, want ErrRunNotFound", err)
	}
	h.SetupLedger()
	h.SetupLedger() // idempotent
	start := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	failed := adapters.Record{Model: "m", Partition: "2024-01-02", State: adapters.RecordFailed, Fingerprint: "abc", Rows: 7,
		RunID: "r1", Attempts: 3, WindowStart: start, WindowEnd: start.Add(24 * time.Hour), StartedAt: start, FinishedAt: start.Add(time.Second),
		PublishedAt: start.Add(-time.Hour), Error: "it's broken: 'quotes' and \\backslashes\\", Watermark: "w1"}
	if err := h.A.RecordPartitions(h.Ctx, []adapters.Record{failed}); err != nil {
		t.Fatal(err)
	}
	failed.Error = "second failure"
	if err := h.A.RecordPartitions(h.Ctx, []adapters.Record{failed, {Model: "other", Partition: "eu", State: adapters.RecordDone,
		Fingerprint: "x", RunID: "r1", StartedAt: start, FinishedAt: start}}); err != nil {
		t.Fatal(err)
	}
	recs, err := h.A.Partitions(h.Ctx, []string{"m"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("Partitions = %v, %v", recs, err)
	}
	if got := recs[0]; fmt.Sprint(got) != fmt.Sprint(failed) {
		t.Errorf("record round trip:\n got %+v\nwant %+v", got, failed)
	}
	// Many records at once, as a rebuild writes them (more than one
	// statement holds on ClickHouse), in every statement some with equal
	// values in two columns (one row and one attempt) and some with no
	// row count (NULL): ClickHouse 26 refused a statement whose first
	// row had no column names, as ambiguous columns of different types.
	// Some failed with an error of every kind of character, some with a
	// watermark, some of a list model (no window).
	var many []adapters.Record
	for i := range 700 {
		hour := start.Add(time.Duration(i) * time.Hour)
		r := adapters.Record{Model: "many", Partition: hour.Format("2006-01-02T15"), State: adapters.RecordPending,
			Fingerprint: "f", Rows: int64(1 - i%2), RunID: "r1", Attempts: 1, WindowStart: hour, WindowEnd: hour.Add(time.Hour),
			StartedAt: start, FinishedAt: start, PublishedAt: start}
		if i%7 == 3 {
			r.State, r.Error = adapters.RecordFailed, fmt.Sprintf("it's \"broken\" (%d):\n\t'quotes', \\backslashes\\, <html> & ünïcode ✓", i)
		}
		if i%5 == 1 {
			r.Watermark = fmt.Sprintf("2024-01-01 00:00:%02d.123456", i%60)
		}
		if i%11 == 2 {
			r.WindowStart, r.WindowEnd = time.Time{}, time.Time{}
			r.Partition = fmt.Sprintf("value '%d'", i)
		}
		many = append(many, r)
	}
	if err := h.A.RecordPartitions(h.Ctx, many); err != nil {
		t.Fatalf("recording %d records at once: %v", len(many), err)
	}
	if recs, err = h.A.Partitions(h.Ctx, []string{"many"}); err != nil || len(recs) != len(many) {
		t.Errorf("%d records written at once read back as %d (%v)", len(many), len(recs), err)
	} else {
		byKey := func(a, b adapters.Record) int { return strings.Compare(a.Partition, b.Partition) }
		slices.SortFunc(recs, byKey)
		slices.SortFunc(many, byKey)
		for i := range recs {
			if fmt.Sprint(recs[i]) != fmt.Sprint(many[i]) {
				t.Errorf("records written at once: %d of %d:\n got %+v\nwant %+v", i, len(many), recs[i], many[i])
				break
			}
		}
	}
	run := &adapters.Run{ID: "r1", Target: "t", Status: adapters.RunRunning, Selection: `{"from":"2024-01-01"}`, Host: "h", PID: 42, StartedAt: start}
	if err := h.A.SaveRun(h.Ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status, run.FinishedAt, run.Succeeded, run.Failed, run.Skipped = adapters.RunFailed, start.Add(time.Minute), 3, 1, 2
	if err := h.A.SaveRun(h.Ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := h.A.LoadRun(h.Ctx, "r1")
	if err != nil || fmt.Sprint(*got) != fmt.Sprint(*run) {
		t.Errorf("run round trip:\n got %+v, %v\nwant %+v", got, err, run)
	}
}

func testLeases(t *testing.T, h *Harness) {
	h.SetupLedger()
	now := time.Now().UTC().Truncate(time.Second)
	lease := func(run string, pid int, at time.Time) adapters.Lease {
		return adapters.Lease{Table: "s.t", RunID: run, Host: "elsewhere", PID: pid, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)}
	}
	if err := h.A.AcquireLease(h.Ctx, lease("r1", 1, now)); err != nil {
		t.Fatal(err)
	}
	if err := h.A.AcquireLease(h.Ctx, lease("r1", 1, now)); err != nil {
		t.Errorf("re-acquiring one's own lease: %v", err)
	}
	err := h.A.AcquireLease(h.Ctx, lease("r2", 2, now.Add(time.Second)))
	var held *adapters.LeaseHeldError
	exclusive := h.A.Info().Name == "duckdb" // one process per file: other holders are dead
	if !exclusive && (!errors.As(err, &held) || held.Held.RunID != "r1") {
		t.Errorf("second run's lease: %v, want LeaseHeldError naming r1", err)
	}
	// A claim in the holder's second, by a run whose ID sorts first, does
	// not take the table either (on ClickHouse, times are whole seconds).
	err = h.A.AcquireLease(h.Ctx, lease("r0", 3, now))
	if !exclusive && (!errors.As(err, &held) || held.Held.RunID != "r1") {
		t.Errorf("a run claiming in the holder's second: %v, want LeaseHeldError naming r1", err)
	}
	if err := h.A.RenewLeases(h.Ctx, "r1", now, now.Add(2*time.Minute)); err != nil {
		t.Errorf("RenewLeases: %v", err)
	}
	if err := h.A.ReleaseLeases(h.Ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := h.A.AcquireLease(h.Ctx, lease("r2", 2, now.Add(2*time.Second))); err != nil {
		t.Errorf("lease after release: %v", err)
	}
	// r2 stops heartbeating; after expiry r3 takes the table over.
	if err := h.A.AcquireLease(h.Ctx, lease("r3", 3, now.Add(2*time.Minute))); err != nil {
		t.Errorf("taking over an expired lease: %v", err)
	}
	h.A.ReleaseLeases(h.Ctx, "r3")
}

func testSeeds(t *testing.T, h *Harness) {
	seed := &models.Seed{Relation: h.Rel("people"), Columns: []models.Column{
		{Name: "id", Type: models.TypeInt}, {Name: "name", Type: models.TypeString, Nullable: true},
		{Name: "score", Type: models.TypeFloat}, {Name: "ok", Type: models.TypeBool},
		{Name: "born", Type: models.TypeDate}, {Name: "seen", Type: models.TypeTimestamp},
	}}
	seen := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	seed.Rows = [][]any{
		{int64(1), "O'Brien \\ \"x\"", 1.5, true, Day("2000-01-31"), seen},
		{int64(2), nil, -2.25, false, Day("1999-12-31"), seen.Add(time.Hour)},
	}
	if err := adapters.LoadSeed(h.Ctx, h.A, seed, seed.Relation); err != nil {
		t.Fatal(err)
	}
	d := h.D()
	q := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", sqlkit.ColumnNames(d, []sqlkit.Column{{Name: "id"}, {Name: "name"}, {Name: "score"}, {Name: "born"}, {Name: "seen"}}),
		seed.Relation.Quote(d), d.QuoteIdent("id"))
	res, err := h.A.Query(h.Ctx, q, adapters.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("seed has %d rows", len(res.Rows))
	}
	r := res.Rows[0]
	if adapters.Int(r[0]) != 1 || r[1] != "O'Brien \\ \"x\"" || r[2] != 1.5 || r[3].(time.Time).Format("2006-01-02") != "2000-01-31" || !r[4].(time.Time).Equal(seen) {
		t.Errorf("row 1 = %#v", r)
	}
	if res.Rows[1][1] != nil {
		t.Errorf("NULL came back as %#v", res.Rows[1][1])
	}
	seed.Rows = seed.Rows[:1]
	if err := adapters.LoadSeed(h.Ctx, h.A, seed, seed.Relation); err != nil {
		t.Fatal(err)
	}
	res, _ = h.A.Query(h.Ctx, "SELECT count(*) FROM "+seed.Relation.Quote(d), adapters.Tag{})
	if adapters.Int(res.Rows[0][0]) != 1 {
		t.Errorf("reloading a seed left %v rows, want 1", res.Rows[0][0])
	}
}

func testCleanStages(t *testing.T, h *Harness) {
	cleaner, ok := h.A.(adapters.StageCleaner)
	if !ok {
		t.Skipf("the %s adapter does not clean up stages", h.A.Info().Name)
	}
	h.Seed("src", Row{"2024-01-01", 1})
	m := DayModel("m")
	query := h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-02")
	w := Window("2024-01-01", "2024-01-02")
	stage := func(target, runID string) *adapters.Stage {
		t.Helper()
		st, err := h.A.Stage(h.Ctx, adapters.StageRequest{Model: m, Target: h.Rel(target), Query: query, Window: w,
			Tag: adapters.Tag{RunID: runID, Model: m.Name, Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.A.DropStage(context.Background(), st) })
		return st
	}
	const deadRun, liveRun = "20240101T000000Z-dead01", "20240101T000000Z-11fe02"
	dead := stage("t", deadRun)
	deadOther := stage("t__x", deadRun) // another table, whose name starts like t's stages
	live := stage("t", liveRun)
	manual := stage("t", "test") // not a run ID refill makes: never touched
	var asked []string
	if err := cleaner.CleanStages(h.Ctx, func(token string) bool {
		asked = append(asked, token)
		return token == adapters.RunToken(deadRun)
	}); err != nil {
		t.Fatal(err)
	}
	d := h.D()
	exists := func(st *adapters.Stage) bool {
		_, err := h.A.Query(h.Ctx, "SELECT count(*) FROM "+st.Relation.Quote(d), adapters.Tag{})
		return err == nil
	}
	if exists(dead) || exists(deadOther) {
		t.Error("CleanStages left a dead run's stages")
	}
	if !exists(live) || !exists(manual) {
		t.Error("CleanStages dropped the stage of a live run, or a table whose name refill did not make")
	}
	if len(asked) == 0 {
		t.Error("CleanStages never asked whether a run is dead")
	}
}

// T returns the subtest the harness belongs to.
func (h *Harness) T() *testing.T { return h.t }
