// Package adaptertest is the conformance suite every refill adapter must
// pass: create, swap, idempotent rerun, empty window, refused out-of-window
// rows, ledger, leases, seeds, and a failure mid-swap that leaves the target
// as it was. Adapter packages call Run from their tests against a real
// warehouse.
package adaptertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
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

// Run runs the suite.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"CreateTargetFromStage", testCreate},
		{"SwapReplacesOnlyTheWindow", testSwap},
		{"RepublishIsIdempotent", testIdempotent},
		{"EmptyWindowEndsEmpty", testEmptyWindow},
		{"ListAndWholeTableWindows", testListAndWhole},
		{"FailedSwapLeavesTargetAsItWas", testFailedSwap},
		{"OutOfWindowRowsAreRefused", testRefused},
		{"RunnerBackfillsAndResumes", testRunner},
		{"Ledger", testLedger},
		{"Leases", testLeases},
		{"Seeds", testSeeds},
		{"CleanStages", testCleanStages},
		{"SchemaChanges", testSchemaChanges},
		{"DeclaredColumns", testDeclaredColumns},
		{"FullRefresh", testFullRefresh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suffix := randomSuffix()
			s := Schemas{Default: "rt_" + suffix, Ledger: "rt_ledger_" + suffix, Stage: "rt_stage_" + suffix}
			h := &harness{t: t, a: open(t, s), s: s, ctx: context.Background()}
			tc.fn(t, h)
		})
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// harness holds one subtest's adapter and helpers.
type harness struct {
	t   *testing.T
	a   adapters.Adapter
	s   Schemas
	ctx context.Context
}

func (h *harness) d() models.Dialect { return h.a.Dialect() }

func (h *harness) rel(name string) models.Relation {
	return models.Relation{Schema: h.s.Default, Name: name}
}

// seed loads rows (d as "2006-01-02", v) into table name.
func (h *harness) seed(name string, rows ...row) {
	h.t.Helper()
	s := &models.Seed{Relation: h.rel(name), Columns: []models.Column{{Name: "d", Type: models.TypeDate}, {Name: "v", Type: models.TypeInt}}}
	for _, r := range rows {
		s.Rows = append(s.Rows, []any{day(r.d), r.v})
	}
	if err := h.a.LoadSeed(h.ctx, s, s.Relation); err != nil {
		h.t.Fatalf("LoadSeed: %v", err)
	}
}

type row struct {
	d string
	v int64
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// rows returns the (d, v) rows of table, sorted.
func (h *harness) rows(table models.Relation) []row {
	h.t.Helper()
	d := h.d()
	res, err := h.a.Query(h.ctx, fmt.Sprintf("SELECT %s, %s FROM %s", d.QuoteIdent("d"), d.QuoteIdent("v"), table.Quote(d)), adapters.Tag{})
	if err != nil {
		h.t.Fatalf("reading %s: %v", table, err)
	}
	var out []row
	for _, r := range res.Rows {
		t, ok := r[0].(time.Time)
		if !ok {
			h.t.Fatalf("column d of %s is a %T, want time.Time", table, r[0])
		}
		out = append(out, row{t.Format("2006-01-02"), adapters.Int(r[1])})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		return out[i].v < out[j].v
	})
	return out
}

func (h *harness) wantRows(table models.Relation, want ...row) {
	h.t.Helper()
	got := h.rows(table)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("%s holds\n  %v\nwant\n  %v", table, got, want)
	}
}

// dayModel returns a daily model over column d reading nothing (the suite
// stages queries directly).
func dayModel(name string) *models.Model {
	return &models.Model{Name: name, Config: models.Config{PartitionBy: "d", Grain: models.Day, Location: time.UTC, Start: day("2024-01-01")}}
}

func window(from, to string) adapters.Window {
	return adapters.Window{Column: "d", Start: day(from), End: day(to), Location: time.UTC}
}

// selectFrom renders a query of rows of src within [from, to), plus extra
// literal rows.
func (h *harness) selectFrom(src models.Relation, from, to string) string {
	d := h.d()
	return fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s >= %s AND %s < %s", d.QuoteIdent("d"), d.QuoteIdent("v"), src.Quote(d),
		d.QuoteIdent("d"), d.Date(day(from)), d.QuoteIdent("d"), d.Date(day(to)))
}

func (h *harness) stage(m *models.Model, target models.Relation, query string, w adapters.Window) *adapters.Stage {
	h.t.Helper()
	st, err := h.a.Stage(h.ctx, adapters.StageRequest{Model: m, Target: target, Query: query, Window: w,
		Tag: adapters.Tag{RunID: "test", Model: m.Name, Partition: "p", Step: "stage"}})
	if err != nil {
		h.t.Fatalf("Stage: %v\n%s", err, query)
	}
	h.t.Cleanup(func() { h.a.DropStage(context.Background(), st) })
	return st
}

func (h *harness) publish(swaps ...adapters.Swap) {
	h.t.Helper()
	if err := h.a.Publish(h.ctx, swaps); err != nil {
		h.t.Fatalf("Publish: %v", err)
	}
	// An adapter that writes its records after the swaps has written them
	// once Flush returns.
	if d, ok := h.a.(adapters.Deferrer); ok {
		if err := d.Flush(h.ctx); err != nil {
			h.t.Fatalf("Flush: %v", err)
		}
	}
}

func record(m, key string, rows int64) adapters.Record {
	now := time.Now().UTC().Truncate(time.Second)
	return adapters.Record{Model: m, Partition: key, State: adapters.StateDone, Fingerprint: "fp-" + key, Rows: rows,
		RunID: "run-1", Attempts: 1, StartedAt: now, FinishedAt: now, PublishedAt: now}
}

func (h *harness) setupLedger() {
	h.t.Helper()
	if err := h.a.SetupLedger(h.ctx); err != nil {
		h.t.Fatalf("SetupLedger: %v", err)
	}
}

func testCreate(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-02", 3})
	m := dayModel("m")
	target := h.rel("created")
	st := h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-02", "2024-01-03"), window("2024-01-02", "2024-01-03"))
	h.publish(adapters.Swap{Stage: st, Records: []adapters.Record{record("m", "2024-01-02", 2)}})
	h.wantRows(target, row{"2024-01-02", 2}, row{"2024-01-02", 3})
	recs, err := h.a.Partitions(h.ctx, []string{"m"})
	if err != nil || len(recs) != 1 || recs[0].Rows != 2 || recs[0].State != adapters.StateDone {
		t.Errorf("ledger after create = %+v, %v", recs, err)
	}
}

func testSwap(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3})
	h.seed("src2", row{"2024-01-02", 20}, row{"2024-01-02", 21})
	m := dayModel("m")
	target := h.rel("t")
	all := h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-04"), window("2024-01-01", "2024-01-04"))
	h.publish(adapters.Swap{Stage: all})
	st := h.stage(m, target, h.selectFrom(h.rel("src2"), "2024-01-02", "2024-01-03"), window("2024-01-02", "2024-01-03"))
	h.publish(adapters.Swap{Stage: st, Records: []adapters.Record{record("m", "2024-01-02", 2)}})
	h.wantRows(target, row{"2024-01-01", 1}, row{"2024-01-02", 20}, row{"2024-01-02", 21}, row{"2024-01-03", 3})
}

func testIdempotent(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2})
	m := dayModel("m")
	target := h.rel("t")
	st := h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-03"), window("2024-01-01", "2024-01-03"))
	recs := []adapters.Record{record("m", "2024-01-01", 1), record("m", "2024-01-02", 1)}
	h.publish(adapters.Swap{Stage: st, Records: recs})
	h.publish(adapters.Swap{Stage: st, Records: recs})
	h.wantRows(target, row{"2024-01-01", 1}, row{"2024-01-02", 2})
	got, err := h.a.Partitions(h.ctx, []string{"m"})
	if err != nil || len(got) != 2 {
		t.Errorf("ledger has %d records after republishing, want 2 (%v)", len(got), err)
	}
}

func testEmptyWindow(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3})
	m := dayModel("m")
	target := h.rel("t")
	h.publish(adapters.Swap{Stage: h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-04"), window("2024-01-01", "2024-01-04"))})
	// The source no longer has rows for 2024-01-02: the window must end empty.
	empty := h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-02", "2024-01-02"), window("2024-01-02", "2024-01-03"))
	h.publish(adapters.Swap{Stage: empty, Records: []adapters.Record{record("m", "2024-01-02", 0)}})
	h.wantRows(target, row{"2024-01-01", 1}, row{"2024-01-03", 3})
}

func testListAndWhole(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3})
	d := h.d()
	listModel := &models.Model{Name: "l", Config: models.Config{PartitionBy: "v", Values: []any{1, 2, 3}, Location: time.UTC}}
	target := h.rel("lt")
	h.publish(adapters.Swap{Stage: h.stage(listModel, target, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-04"),
		adapters.Window{Column: "v", Values: []any{1, 2, 3}})})
	q := fmt.Sprintf("SELECT %s + 1 AS %s, %s FROM %s WHERE %s = 2", d.CastDate(d.QuoteIdent("d")), d.QuoteIdent("d"),
		d.QuoteIdent("v"), h.rel("src").Quote(d), d.QuoteIdent("v"))
	h.publish(adapters.Swap{Stage: h.stage(listModel, target, q, adapters.Window{Column: "v", Values: []any{2}})})
	h.wantRows(target, row{"2024-01-01", 1}, row{"2024-01-03", 2}, row{"2024-01-03", 3})

	whole := &models.Model{Name: "w", Config: models.Config{Location: time.UTC}}
	wt := h.rel("wt")
	h.publish(adapters.Swap{Stage: h.stage(whole, wt, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-04"), adapters.Window{})})
	h.publish(adapters.Swap{Stage: h.stage(whole, wt, h.selectFrom(h.rel("src"), "2024-01-03", "2024-01-04"), adapters.Window{})})
	h.wantRows(wt, row{"2024-01-03", 3})
}

func testFailedSwap(t *testing.T, h *harness) {
	h.setupLedger()
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2})
	h.seed("src2", row{"2024-01-01", 10}, row{"2024-01-02", 20})
	m := dayModel("m")
	target := h.rel("t")
	h.publish(adapters.Swap{Stage: h.stage(m, target, h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-03"), window("2024-01-01", "2024-01-03")),
		Records: []adapters.Record{record("m", "2024-01-01", 1), record("m", "2024-01-02", 1)}})
	before, _ := h.a.Partitions(h.ctx, []string{"m"})

	good := h.stage(m, target, h.selectFrom(h.rel("src2"), "2024-01-01", "2024-01-02"), window("2024-01-01", "2024-01-02"))
	gone := h.stage(m, target, h.selectFrom(h.rel("src2"), "2024-01-02", "2024-01-03"), window("2024-01-02", "2024-01-03"))
	if err := h.a.DropStage(h.ctx, gone); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		h.wantRows(target, row{"2024-01-01", 1}, row{"2024-01-02", 2})
		after, _ := h.a.Partitions(h.ctx, []string{"m"})
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("ledger changed by %s:\n  %v\n  %v", what, before, after)
		}
	}
	if err := h.a.Publish(h.ctx, []adapters.Swap{{Stage: gone, Records: []adapters.Record{record("m", "2024-01-02", 9)}}}); err == nil {
		t.Fatal("publishing a dropped stage succeeded")
	}
	check("publishing a dropped stage")
	if !h.a.Info().MultiTable {
		return
	}
	// Two swaps in one transaction; the second's insert fails after the
	// first swap and the second's delete already ran: all must roll back.
	d := h.d()
	extra := h.stage(m, target, fmt.Sprintf("SELECT %s, %s, 1 AS %s FROM %s WHERE %s = %s", d.QuoteIdent("d"), d.QuoteIdent("v"),
		d.QuoteIdent("not_in_target"), h.rel("src2").Quote(d), d.QuoteIdent("d"), d.Date(day("2024-01-02"))), window("2024-01-02", "2024-01-03"))
	err := h.a.Publish(h.ctx, []adapters.Swap{
		{Stage: good, Records: []adapters.Record{record("m", "2024-01-01", 9)}},
		{Stage: extra, Records: []adapters.Record{record("m", "2024-01-02", 9)}},
	})
	if err == nil {
		t.Fatal("publishing a stage with a column the target lacks succeeded")
	}
	check("a transaction that failed midway")
}

// project builds an in-memory project whose models read the suite's source
// table, and a runner for it.
func (h *harness) project(files map[string]string) *runner.Runner {
	h.t.Helper()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  t: {adapter: test}\n")}}
	for k, v := range files {
		fsys["models/"+k] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(v, "SCHEMA", h.s.Default))}
	}
	p, err := models.Load(fsys, models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		h.t.Fatal(err)
	}
	return &runner.Runner{Project: p, Target: "t", Adapter: h.a, Scope: &models.Scope{Dialect: h.d(), Schema: h.s.Default, Vars: p.Vars}}
}

const dailyModel = `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT d, v FROM {{ source("SCHEMA.src") }} WHERE d >= {{ start }} AND d < {{ end }}`

func testRefused(t *testing.T, h *harness) {
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3})
	r := h.project(map[string]string{"m.sql": dailyModel})
	sel := runner.Selection{From: "2024-01-01", To: "2024-01-03", Now: day("2024-02-01")}
	plan, err := r.Plan(h.ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := r.Run(h.ctx, plan, runner.RunOptions{}); err != nil || s.Failed != 0 {
		t.Fatalf("first run: %+v, %v", s, err)
	}
	// Off by one: every window also takes the next day.
	bad := h.project(map[string]string{"m.sql": strings.Replace(dailyModel, "d < {{ end }}", "d <= {{ end }}", 1)})
	sel.Mode = runner.ModeAll
	plan, _ = bad.Plan(h.ctx, sel)
	s, err := bad.Run(h.ctx, plan, runner.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var verr *runner.VerifyError
	if s.Failed != 2 || !errors.As(s.Partitions[0].Err, &verr) {
		t.Errorf("want 2 partitions refused by verification (the last window has no next day), got %+v", s.Partitions)
	}
	h.wantRows(h.rel("m"), row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3})
}

func testRunner(t *testing.T, h *harness) {
	h.seed("src", row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3}, row{"2024-01-05", 5})
	r := h.project(map[string]string{
		"m.sql": dailyModel,
		"agg.sql": `/* refill
partition_by: month
grain: month
start: 2024-01-01
*/
SELECT {{ cast_date(date_trunc("month", ident("d"))) }} AS month, sum(v) AS total, count(*) AS n
FROM {{ ref("m") }} WHERE d >= {{ start }} AND d < {{ end }}
GROUP BY {{ cast_date(date_trunc("month", ident("d"))) }}`,
	})
	// Five days do not make a month: the month is blocked until every day
	// of it is built.
	partial, err := r.Plan(h.ctx, runner.Selection{From: "2024-01-01", To: "2024-01-05", Now: day("2024-02-01")})
	if err != nil {
		t.Fatal(err)
	}
	if len(partial.Steps) != 5 || len(partial.Blocked) != 1 || !strings.Contains(partial.Blocked[0].Detail, "m 2024-01-06") {
		t.Fatalf("plan of five days has %d steps and blocked %+v; want the five days, and the month blocked on 2024-01-06", len(partial.Steps), partial.Blocked)
	}
	sel := runner.Selection{From: "2024-01-01", To: "2024-01-31", Now: day("2024-02-01")}
	plan, err := r.Plan(h.ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 32 || len(plan.Blocked) != 0 {
		t.Fatalf("plan has %d steps and %d blocked, want 31 days and a month", len(plan.Steps), len(plan.Blocked))
	}
	s, err := r.Run(h.ctx, plan, runner.RunOptions{Batch: 2})
	if err != nil || s.Failed != 0 || s.Succeeded != 32 {
		t.Fatalf("run: %+v, %v", s, err)
	}
	h.wantRows(h.rel("m"), row{"2024-01-01", 1}, row{"2024-01-02", 2}, row{"2024-01-03", 3}, row{"2024-01-05", 5})
	res, err := h.a.Query(h.ctx, "SELECT total, n FROM "+h.rel("agg").Quote(h.d()), adapters.Tag{})
	if err != nil || len(res.Rows) != 1 || adapters.Int(res.Rows[0][0]) != 11 || adapters.Int(res.Rows[0][1]) != 4 {
		t.Errorf("agg = %v, %v", res, err)
	}
	recs, _ := h.a.Partitions(h.ctx, []string{"m"})
	rows := map[string]int64{}
	for _, rec := range recs {
		rows[rec.Partition] = rec.Rows
	}
	if rows["2024-01-04"] != 0 || rows["2024-01-05"] != 1 || len(rows) != 31 {
		t.Errorf("ledger rows per partition = %v", rows)
	}
	again, _ := r.Plan(h.ctx, sel)
	if len(again.Steps) != 0 {
		t.Errorf("a rerun plans %d steps, want none", len(again.Steps))
	}
}

func testLedger(t *testing.T, h *harness) {
	if recs, err := h.a.Partitions(h.ctx, []string{"m"}); err != nil || len(recs) != 0 {
		t.Fatalf("a ledger that does not exist yet: %v, %v", recs, err)
	}
	if _, err := h.a.LoadRun(h.ctx, "nope"); !errors.Is(err, adapters.ErrRunNotFound) {
		t.Errorf("LoadRun before setup: %v, want ErrRunNotFound", err)
	}
	h.setupLedger()
	h.setupLedger() // idempotent
	start := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	failed := adapters.Record{Model: "m", Partition: "2024-01-02", State: adapters.StateFailed, Fingerprint: "abc", Rows: 7,
		RunID: "r1", Attempts: 3, WindowStart: start, WindowEnd: start.Add(24 * time.Hour), StartedAt: start, FinishedAt: start.Add(time.Second),
		PublishedAt: start.Add(-time.Hour), Error: "it's broken: 'quotes' and \\backslashes\\", Watermark: "w1"}
	if err := h.a.RecordPartitions(h.ctx, []adapters.Record{failed}); err != nil {
		t.Fatal(err)
	}
	failed.Error = "second failure"
	if err := h.a.RecordPartitions(h.ctx, []adapters.Record{failed, {Model: "other", Partition: "eu", State: adapters.StateDone,
		Fingerprint: "x", RunID: "r1", StartedAt: start, FinishedAt: start}}); err != nil {
		t.Fatal(err)
	}
	recs, err := h.a.Partitions(h.ctx, []string{"m"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("Partitions = %v, %v", recs, err)
	}
	if got := recs[0]; fmt.Sprint(got) != fmt.Sprint(failed) {
		t.Errorf("record round trip:\n got %+v\nwant %+v", got, failed)
	}
	run := &adapters.Run{ID: "r1", Target: "t", Status: adapters.RunRunning, Selection: `{"from":"2024-01-01"}`, Host: "h", PID: 42, StartedAt: start}
	if err := h.a.SaveRun(h.ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status, run.FinishedAt, run.Succeeded, run.Failed, run.Skipped = adapters.RunFailed, start.Add(time.Minute), 3, 1, 2
	if err := h.a.SaveRun(h.ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := h.a.LoadRun(h.ctx, "r1")
	if err != nil || fmt.Sprint(*got) != fmt.Sprint(*run) {
		t.Errorf("run round trip:\n got %+v, %v\nwant %+v", got, err, run)
	}
}

func testLeases(t *testing.T, h *harness) {
	h.setupLedger()
	now := time.Now().UTC().Truncate(time.Second)
	lease := func(run string, pid int, at time.Time) adapters.Lease {
		return adapters.Lease{Table: "s.t", RunID: run, Host: "elsewhere", PID: pid, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)}
	}
	if err := h.a.AcquireLease(h.ctx, lease("r1", 1, now)); err != nil {
		t.Fatal(err)
	}
	if err := h.a.AcquireLease(h.ctx, lease("r1", 1, now)); err != nil {
		t.Errorf("re-acquiring one's own lease: %v", err)
	}
	err := h.a.AcquireLease(h.ctx, lease("r2", 2, now.Add(time.Second)))
	var held *adapters.LeaseHeldError
	exclusive := h.a.Info().Name == "duckdb" // one process per file: other holders are dead
	if !exclusive && (!errors.As(err, &held) || held.Held.RunID != "r1") {
		t.Errorf("second run's lease: %v, want LeaseHeldError naming r1", err)
	}
	if err := h.a.RenewLeases(h.ctx, "r1", now, now.Add(2*time.Minute)); err != nil {
		t.Errorf("RenewLeases: %v", err)
	}
	if err := h.a.ReleaseLeases(h.ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := h.a.AcquireLease(h.ctx, lease("r2", 2, now.Add(2*time.Second))); err != nil {
		t.Errorf("lease after release: %v", err)
	}
	// r2 stops heartbeating; after expiry r3 takes the table over.
	if err := h.a.AcquireLease(h.ctx, lease("r3", 3, now.Add(2*time.Minute))); err != nil {
		t.Errorf("taking over an expired lease: %v", err)
	}
	h.a.ReleaseLeases(h.ctx, "r3")
}

func testSeeds(t *testing.T, h *harness) {
	seed := &models.Seed{Relation: h.rel("people"), Columns: []models.Column{
		{Name: "id", Type: models.TypeInt}, {Name: "name", Type: models.TypeString, Nullable: true},
		{Name: "score", Type: models.TypeFloat}, {Name: "ok", Type: models.TypeBool},
		{Name: "born", Type: models.TypeDate}, {Name: "seen", Type: models.TypeTimestamp},
	}}
	seen := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	seed.Rows = [][]any{
		{int64(1), "O'Brien \\ \"x\"", 1.5, true, day("2000-01-31"), seen},
		{int64(2), nil, -2.25, false, day("1999-12-31"), seen.Add(time.Hour)},
	}
	if err := h.a.LoadSeed(h.ctx, seed, seed.Relation); err != nil {
		t.Fatal(err)
	}
	d := h.d()
	q := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", adapters.ColumnNames(d, []adapters.Column{{Name: "id"}, {Name: "name"}, {Name: "score"}, {Name: "born"}, {Name: "seen"}}),
		seed.Relation.Quote(d), d.QuoteIdent("id"))
	res, err := h.a.Query(h.ctx, q, adapters.Tag{})
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
	if err := h.a.LoadSeed(h.ctx, seed, seed.Relation); err != nil {
		t.Fatal(err)
	}
	res, _ = h.a.Query(h.ctx, "SELECT count(*) FROM "+seed.Relation.Quote(d), adapters.Tag{})
	if adapters.Int(res.Rows[0][0]) != 1 {
		t.Errorf("reloading a seed left %v rows, want 1", res.Rows[0][0])
	}
}

func testCleanStages(t *testing.T, h *harness) {
	h.seed("src", row{"2024-01-01", 1})
	m := dayModel("m")
	query := h.selectFrom(h.rel("src"), "2024-01-01", "2024-01-02")
	w := window("2024-01-01", "2024-01-02")
	stage := func(target, runID string) *adapters.Stage {
		t.Helper()
		st, err := h.a.Stage(h.ctx, adapters.StageRequest{Model: m, Target: h.rel(target), Query: query, Window: w,
			Tag: adapters.Tag{RunID: runID, Model: m.Name, Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.a.DropStage(context.Background(), st) })
		return st
	}
	const deadRun, liveRun = "20240101T000000Z-dead01", "20240101T000000Z-11fe02"
	dead := stage("t", deadRun)
	deadOther := stage("t__x", deadRun) // another table, whose name starts like t's stages
	live := stage("t", liveRun)
	manual := stage("t", "test") // not a run ID refill makes: never touched
	var asked []string
	if err := h.a.CleanStages(h.ctx, func(token string) bool {
		asked = append(asked, token)
		return token == adapters.RunToken(deadRun)
	}); err != nil {
		t.Fatal(err)
	}
	d := h.d()
	exists := func(st *adapters.Stage) bool {
		_, err := h.a.Query(h.ctx, "SELECT count(*) FROM "+st.Relation.Quote(d), adapters.Tag{})
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
