package adaptertest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/models"
)

// The fixed schemas of Script's golden files: the schemas of a run are
// masked as these.
var scriptSchemas = Schemas{Default: "shop", Ledger: "refill", Stage: "refill_stage"}

// Script makes the calls a backfill makes of an adapter, one of each
// kind, on an adapter open opens with its connections recorded by rec,
// and returns rec's log, masked of what changes between runs (schemas,
// stage names), for a golden file (see Golden). Every statement in it is
// one the adapter really issued, and with a real warehouse behind rec, one
// the warehouse ran without an error: Script fails on the first error.
//
// The calls: open; set up the ledger; load a seed; take a lease; create a
// table of declared columns; stage,
// check and publish a day into a new table, a batch of days, an hour, list
// values and a whole table, each with a query that fits its model; when the
// adapter can, publish two tables together through an overlay, publish a
// day directly, summarize a stage, diff a query with a day of a table;
// change a table's columns; rebuild a
// table; write and read every kind of ledger record; renew and release the
// lease; clean up stages.
func Script(t *testing.T, rec *recorder.Recorder, open Opener) string {
	s := Schemas{Default: "rs_" + randomSuffix(), Ledger: "rs_ledger_" + randomSuffix(), Stage: "rs_stage_" + randomSuffix()}
	rec.Note("open")
	h := &Harness{t: t, A: open(t, s), S: s, Ctx: t.Context()}
	sc := &script{Harness: h, rec: rec}
	sc.run()
	var b strings.Builder
	rec.Write(&b, maskScript(s, h.A.Dialect()))
	return b.String()
}

type script struct {
	*Harness
	rec *recorder.Recorder
	// failed, when set, receives the first error of a call instead of
	// failing the test, and the script stops (see ScriptFaults).
	failed func(call string, err error)
}

// stopScript unwinds a script that failed (see script.failed).
type stopScript struct{}

// The script's clock and run.
var (
	scriptAt  = time.Date(2024, 1, 5, 6, 7, 8, 0, time.UTC)
	scriptRun = "20240105T060708Z-abcdef"
)

// must fails the test when err is not nil.
func (sc *script) must(what string, err error) {
	sc.t.Helper()
	if err != nil && sc.failed != nil {
		sc.failed(what, err)
		panic(stopScript{})
	}
	if err != nil {
		sc.t.Fatalf("%s: %v\nthe statements so far:\n%s", what, err, sc.rec)
	}
}

func (sc *script) note(format string, args ...any) { sc.rec.Note(format, args...) }

// record is a done record of partition key, whose window starts at start
// and lasts span (none for a zero span).
func (sc *script) record(model, key string, start time.Time, span time.Duration, rows int64) adapters.Record {
	r := adapters.Record{Model: model, Partition: key, State: adapters.RecordDone, Fingerprint: "0123456789abcdef", Rows: rows,
		RunID: scriptRun, Attempts: 1, StartedAt: scriptAt, FinishedAt: scriptAt.Add(time.Second), PublishedAt: scriptAt.Add(time.Second)}
	if span > 0 {
		r.WindowStart, r.WindowEnd = start, start.Add(span)
	}
	return r
}

func (sc *script) stage(m *models.Model, target models.Relation, query string, w adapters.Window) *adapters.Stage {
	sc.t.Helper()
	st, err := sc.A.Stage(sc.Ctx, adapters.StageRequest{Model: m, Target: target, Query: query, Window: w,
		Tag: adapters.Tag{RunID: scriptRun, Model: m.Name, Partition: "p", Step: "stage"}})
	sc.must("Stage", err)
	return st
}

// ScriptFaults runs Script's calls once for each operation they make
// (Open's included), failing that operation with ErrInjected, on adapters
// open opens with their connections recorded by rec. The call that made the failed
// operation must return an error wrapping ErrInjected: an adapter that
// swallows a failure could report a write that never happened. Failures
// an adapter may outlive are the exceptions: tolerate says which (it
// receives the failed operation), and dropping a table is always one, as
// CleanStages drops what is left. Under -short it fails a sample of the
// operations, every kind at least once (see faultPoints).
func ScriptFaults(t *testing.T, rec *recorder.Recorder, open func(t *testing.T, s Schemas) (adapters.Adapter, error), tolerate func(recorder.Entry) bool) {
	// runOnce runs the script with operation n failing (none for 0) and
	// returns the call that failed, its error and the operations made.
	runOnce := func(t *testing.T, n int) (call string, callErr error, entries []recorder.Entry) {
		s := Schemas{Default: "rs_" + randomSuffix(), Ledger: "rs_ledger_" + randomSuffix(), Stage: "rs_stage_" + randomSuffix()}
		rec.Reset()
		rec.FailAt(n, ErrInjected)
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(stopScript); !ok {
						panic(r)
					}
				}
			}()
			a, err := open(t, s)
			if err != nil {
				call, callErr = "Open", err
				return
			}
			h := &Harness{t: t, A: a, S: s, Ctx: t.Context()}
			sc := &script{Harness: h, rec: rec, failed: func(c string, err error) { call, callErr = c, err }}
			sc.run()
		}()
		entries = rec.Entries()
		rec.FailWhen(nil)
		return call, callErr, entries
	}
	dry := func() []recorder.Entry {
		call, err, entries := runOnce(t, 0)
		if err != nil {
			t.Fatalf("%s failed with no failure injected: %v", call, err)
		}
		return entries
	}
	for n := range faultPoints(dry) {
		done := false
		t.Run(fmt.Sprintf("op%03d", n), func(t *testing.T) {
			call, callErr, entries := runOnce(t, n)
			if n > len(entries) {
				done = true
				if callErr != nil {
					t.Fatalf("%s failed with no failure injected: %v", call, callErr)
				}
				return
			}
			failed := entries[n-1]
			switch {
			case callErr == nil && (strings.HasPrefix(strings.ToUpper(failed.SQL), "DROP ") || tolerate != nil && tolerate(failed)):
				// An operation the adapter may outlive.
			case callErr == nil:
				t.Errorf("operation %d (%s %s) failed, and every call succeeded", n, failed.Op, firstLine(failed.SQL))
			case !errors.Is(callErr, ErrInjected):
				t.Errorf("operation %d (%s %s) failed, and %s returned %v, not the failure", n, failed.Op, firstLine(failed.SQL), call, callErr)
			}
		})
		if done || t.Failed() {
			return
		}
	}
}

// check reads a stage as verification does: its rows per partition value.
func (sc *script) check(st *adapters.Stage) {
	sc.t.Helper()
	d := sc.D()
	col := "1"
	if !st.Window.Whole() {
		col = d.QuoteIdent(st.Window.Column)
	}
	_, err := sc.A.Query(sc.Ctx, fmt.Sprintf("SELECT %s AS k, count(*) AS n FROM %s GROUP BY %s", col, st.Relation.Quote(d), col),
		adapters.Tag{RunID: scriptRun, Step: "verify"})
	sc.must("Query", err)
}

func (sc *script) publish(swaps ...adapters.Swap) {
	sc.t.Helper()
	sc.must("Publish", publish(sc.Ctx, sc.A, swaps))
}

func (sc *script) run() {
	d := sc.D()
	q := d.QuoteIdent
	src := sc.Rel("events")
	daily := &models.Model{Name: "daily", Config: models.Config{PartitionBy: "d", Grain: models.Day, Location: time.UTC, Start: Day("2024-01-01")}}
	hourly := &models.Model{Name: "hourly", Config: models.Config{PartitionBy: "ts", Grain: models.Hour, Location: time.UTC,
		Start: Day("2024-01-01"), TimestampWindow: true}}
	regions := &models.Model{Name: "by_region", Config: models.Config{PartitionBy: "region", Values: []any{"eu", "us"}, Location: time.UTC}}
	totals := &models.Model{Name: "totals", Config: models.Config{Location: time.UTC}}
	dayWindow := func(from, to string) adapters.Window {
		return adapters.Window{Column: "d", Start: Day(from), End: Day(to), Location: time.UTC}
	}
	perDay := func(from, to string) string {
		return fmt.Sprintf("SELECT %s, sum(%s) AS %s FROM %s WHERE %s >= %s AND %s < %s GROUP BY %s", q("d"), q("v"), q("v"), src.Quote(d),
			q("d"), d.Date(Day(from)), q("d"), d.Date(Day(to)), q("d"))
	}

	sc.note("set up the ledger")
	sc.must("SetupLedger", sc.A.SetupLedger(sc.Ctx))

	sc.note("load a seed")
	at := Day("2024-01-02").Add(3 * time.Hour)
	seed := &models.Seed{Relation: src, Columns: []models.Column{{Name: "d", Type: models.TypeDate}, {Name: "ts", Type: models.TypeTimestamp},
		{Name: "region", Type: models.TypeString}, {Name: "v", Type: models.TypeInt}},
		Rows: [][]any{{Day("2024-01-02"), at, "eu", int64(1)}, {Day("2024-01-03"), at.Add(25 * time.Hour), "us", int64(2)},
			{Day("2024-01-04"), at.Add(49 * time.Hour), "it's", int64(3)}}}
	sc.must("LoadSeed", adapters.LoadSeed(sc.Ctx, sc.A, seed, src))

	sc.note("take the lease of a table")
	lease := adapters.Lease{Table: sc.Rel("daily").String(), RunID: scriptRun, Host: "host", PID: 42,
		AcquiredAt: scriptAt, HeartbeatAt: scriptAt, ExpiresAt: scriptAt.Add(time.Minute)}
	sc.must("AcquireLease", sc.A.AcquireLease(sc.Ctx, lease))

	sc.note("describe a query and a table that does not exist")
	_, err := sc.A.Describe(sc.Ctx, perDay("2024-01-02", "2024-01-03"), adapters.Tag{RunID: scriptRun, Step: "describe"})
	sc.must("Describe", err)
	_, err = sc.A.Columns(sc.Ctx, sc.Rel("daily"))
	sc.must("Columns", err)

	sc.note("create a table with declared columns")
	sc.must("CreateTable", sc.A.CreateTable(sc.Ctx, sc.Rel("declared"), daily,
		[]adapters.TableColumn{{Name: "d", Type: d.ColumnType(models.TypeDate)}, {Name: "v", Type: d.ColumnType(models.TypeInt)}}))

	sc.note("stage, check and publish a day into a new table")
	day := sc.stage(daily, sc.Rel("daily"), perDay("2024-01-02", "2024-01-03"), dayWindow("2024-01-02", "2024-01-03"))
	sc.check(day)
	sc.publish(adapters.Swap{Stage: day, Records: []adapters.Record{sc.record("daily", "2024-01-02", Day("2024-01-02"), 24*time.Hour, 1)}})
	sc.must("DropStage", sc.A.DropStage(sc.Ctx, day))

	sc.note("stage and publish a batch of three days")
	batch := sc.stage(daily, sc.Rel("daily"), perDay("2024-01-02", "2024-01-05"), dayWindow("2024-01-02", "2024-01-05"))
	sc.check(batch)
	var records []adapters.Record
	for i, key := range []string{"2024-01-02", "2024-01-03", "2024-01-04"} {
		records = append(records, sc.record("daily", key, Day(key), 24*time.Hour, int64(i+1)))
	}
	sc.publish(adapters.Swap{Stage: batch, Records: records})
	sc.must("DropStage", sc.A.DropStage(sc.Ctx, batch))

	sc.note("stage and publish an hour")
	hour := adapters.Window{Column: "ts", Start: at, End: at.Add(time.Hour), Timestamp: true}
	hq := fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s >= %s AND %s < %s", q("ts"), q("v"), src.Quote(d), q("ts"), d.Timestamp(hour.Start),
		q("ts"), d.Timestamp(hour.End))
	st := sc.stage(hourly, sc.Rel("hourly"), hq, hour)
	sc.check(st)
	sc.publish(adapters.Swap{Stage: st, Records: []adapters.Record{sc.record("hourly", "2024-01-02T03", hour.Start, time.Hour, 1)}})
	sc.must("DropStage", sc.A.DropStage(sc.Ctx, st))

	sc.note("stage and publish list values")
	list := adapters.Window{Column: "region", Values: []any{"eu", "it's"}}
	lq := fmt.Sprintf("SELECT %s, sum(%s) AS %s FROM %s WHERE %s IN (%s, %s) GROUP BY %s", q("region"), q("v"), q("v"), src.Quote(d),
		q("region"), d.QuoteString("eu"), d.QuoteString("it's"), q("region"))
	st = sc.stage(regions, sc.Rel("by_region"), lq, list)
	sc.check(st)
	sc.publish(adapters.Swap{Stage: st, Records: []adapters.Record{sc.record("by_region", "eu", time.Time{}, 0, 1),
		sc.record("by_region", "it's", time.Time{}, 0, 1)}})
	sc.must("DropStage", sc.A.DropStage(sc.Ctx, st))

	sc.note("stage and publish a whole table")
	wq := fmt.Sprintf("SELECT count(*) AS %s, sum(%s) AS %s FROM %s", q("events"), q("v"), q("v"), src.Quote(d))
	whole := sc.stage(totals, sc.Rel("totals"), wq, adapters.Window{})
	sc.check(whole)
	sc.publish(adapters.Swap{Stage: whole, Records: []adapters.Record{sc.record("totals", "all", time.Time{}, 0, 1)}})

	if o, ok := sc.A.(adapters.Overlayer); ok && sc.A.Info().MultiTable {
		sc.note("publish two tables together, the second reading the first through an overlay")
		day := sc.stage(daily, sc.Rel("daily"), perDay("2024-01-03", "2024-01-04"), dayWindow("2024-01-03", "2024-01-04"))
		view, err := o.Overlay(sc.Ctx, sc.Rel("daily"), []*adapters.Stage{day}, false)
		sc.must("Overlay", err)
		tq := fmt.Sprintf("SELECT count(*) AS %s, sum(%s) AS %s FROM %s", q("events"), q("v"), q("v"), view.Quote(d))
		tot := sc.stage(totals, sc.Rel("totals"), tq, adapters.Window{})
		sc.must("DropOverlay", o.DropOverlay(sc.Ctx, view))
		sc.publish(adapters.Swap{Stage: day, Records: []adapters.Record{sc.record("daily", "2024-01-03", Day("2024-01-03"), 24*time.Hour, 1)}},
			adapters.Swap{Stage: tot, Records: []adapters.Record{sc.record("totals", "all", time.Time{}, 0, 1)}})
		sc.must("DropStage", sc.A.DropStage(sc.Ctx, day))
		sc.must("DropStage", sc.A.DropStage(sc.Ctx, tot))
	}

	if dp, ok := sc.A.(adapters.DirectPublisher); ok {
		sc.note("publish a day directly, without a stage")
		req := adapters.StageRequest{Model: daily, Target: sc.Rel("daily"), Query: perDay("2024-01-04", "2024-01-05"),
			Window: dayWindow("2024-01-04", "2024-01-05"), Tag: adapters.Tag{RunID: scriptRun, Model: "daily", Partition: "2024-01-04", Step: "publish"}}
		sc.must("PublishQuery", dp.PublishQuery(sc.Ctx, req, 1, func(groups []adapters.RowGroup) ([]adapters.Record, error) {
			var rows int64
			for _, g := range groups {
				rows += g.Rows
			}
			return []adapters.Record{sc.record("daily", "2024-01-04", Day("2024-01-04"), 24*time.Hour, rows)}, nil
		}))

		sc.note("publish twelve days directly, in one batch counted per day")
		query := perDay("2024-01-01", "2024-01-13")
		cols, err := sc.A.Describe(sc.Ctx, query, adapters.Tag{RunID: scriptRun, Step: "describe"})
		sc.must("Describe", err)
		req = adapters.StageRequest{Model: daily, Target: sc.Rel("daily"), Query: query, Window: dayWindow("2024-01-01", "2024-01-13"), Columns: cols,
			Tag: adapters.Tag{RunID: scriptRun, Model: "daily", Partition: "2024-01-01..2024-01-12", Step: "publish"}}
		sc.must("PublishQuery", dp.PublishQuery(sc.Ctx, req, 12, func(groups []adapters.RowGroup) ([]adapters.Record, error) {
			var recs []adapters.Record
			for day := Day("2024-01-01"); day.Before(Day("2024-01-13")); day = day.AddDate(0, 0, 1) {
				var rows int64
				for _, g := range groups {
					if lo, ok := g.Lo.(time.Time); ok && lo.Equal(day) {
						rows += g.Rows
					}
				}
				recs = append(recs, sc.record("daily", day.Format(time.DateOnly), day, 24*time.Hour, rows))
			}
			return recs, nil
		}))
	}

	if ss, ok := sc.A.(adapters.StageSummarizer); ok {
		sc.note("summarize a stage from the warehouse's metadata")
		st := sc.stage(daily, sc.Rel("daily"), perDay("2024-01-02", "2024-01-05"), dayWindow("2024-01-02", "2024-01-05"))
		_, _, err := ss.SummarizeStage(sc.Ctx, st)
		sc.must("SummarizeStage", err)
		sc.must("DropStage", sc.A.DropStage(sc.Ctx, st))
	}

	if df, ok := sc.A.(adapters.Differ); ok {
		sc.note("diff a query with a day of a table, by key and whole")
		cols, err := sc.A.Columns(sc.Ctx, sc.Rel("daily"))
		sc.must("Columns", err)
		for _, key := range [][]string{{"d"}, nil} {
			_, err := df.Diff(sc.Ctx, adapters.DiffRequest{Table: sc.Rel("daily"), Window: dayWindow("2024-01-02", "2024-01-03"),
				Query: perDay("2024-01-02", "2024-01-03"), Columns: cols, Key: key, Examples: 2,
				Tag: adapters.Tag{Model: "daily", Partition: "2024-01-02", Step: "diff"}})
			sc.must("Diff", err)
		}
	}

	sc.note("publish a day that adds a column")
	cq := fmt.Sprintf("SELECT %s, sum(%s) AS %s, count(*) AS %s FROM %s WHERE %s >= %s AND %s < %s GROUP BY %s", q("d"), q("v"), q("v"), q("n"),
		src.Quote(d), q("d"), d.Date(Day("2024-01-02")), q("d"), d.Date(Day("2024-01-03")), q("d"))
	// The new column as the runner finds it: the last of the query's.
	cols, err := sc.A.Describe(sc.Ctx, cq, adapters.Tag{RunID: scriptRun, Step: "describe"})
	sc.must("Describe", err)
	change := &adapters.SchemaChange{Add: cols[len(cols)-1:]}
	st, err = sc.A.Stage(sc.Ctx, adapters.StageRequest{Model: daily, Target: sc.Rel("daily"), Query: cq, Window: dayWindow("2024-01-02", "2024-01-03"),
		Tag: adapters.Tag{RunID: scriptRun, Model: "daily", Partition: "2024-01-02", Step: "stage"}, Change: change})
	sc.must("Stage", err)
	sc.publish(adapters.Swap{Stage: st, Change: change, Records: []adapters.Record{sc.record("daily", "2024-01-02", Day("2024-01-02"), 24*time.Hour, 1)}})
	sc.must("DropStage", sc.A.DropStage(sc.Ctx, st))

	if rb, ok := sc.A.(adapters.Rebuilder); ok {
		sc.note("rebuild a table (a full refresh)")
		st, err = sc.A.Stage(sc.Ctx, adapters.StageRequest{Model: daily, Target: sc.Rel("daily"), Query: perDay("2024-01-01", "2024-01-05"),
			Window: dayWindow("2024-01-01", "2024-01-05"), Tag: adapters.Tag{RunID: scriptRun, Model: "daily", Step: "stage"}, Rebuild: true})
		sc.must("Stage", err)
		sc.must("Rebuild", rb.Rebuild(sc.Ctx, sc.Rel("daily"), []*adapters.Stage{st}, records, nil))
	}

	sc.note("count the rows of tables")
	if rc, ok := sc.A.(adapters.RowCounter); ok {
		_, err := rc.CountRows(sc.Ctx, []models.Relation{sc.Rel("daily"), sc.Rel("totals"), sc.Rel("missing")})
		sc.must("CountRows", err)
	}

	sc.note("record a failed partition")
	failed := sc.record("hourly", "2024-01-02T04", at.Add(time.Hour), time.Hour, 0)
	failed.State, failed.Error, failed.PublishedAt = adapters.RecordFailed, "it's broken: 'quotes' and \\backslashes\\", time.Time{}
	sc.must("RecordPartitions", sc.A.RecordPartitions(sc.Ctx, []adapters.Record{failed}))

	sc.note("save and read a run")
	run := &adapters.Run{ID: scriptRun, Target: "dev", Status: adapters.RunRunning, Selection: `{"from":"2024-01-02"}`, Host: "host", PID: 42, StartedAt: scriptAt}
	sc.must("SaveRun", sc.A.SaveRun(sc.Ctx, run))
	run.Status, run.FinishedAt, run.Succeeded = adapters.RunSucceeded, scriptAt.Add(time.Minute), 9
	sc.must("SaveRun", sc.A.SaveRun(sc.Ctx, run))
	if _, err := sc.A.LoadRun(sc.Ctx, scriptRun); err != nil && !errors.Is(err, adapters.ErrRunNotFound) {
		sc.must("LoadRun", err)
	}
	_, err = sc.A.Runs(sc.Ctx, 10)
	sc.must("Runs", err)

	sc.note("save and read model versions")
	sc.must("SaveVersions", sc.A.SaveVersions(sc.Ctx, []adapters.Version{{Model: "daily", Fingerprint: "0123456789abcdef",
		Text: "SELECT 'it''s'", CreatedAt: scriptAt}}))
	_, err = sc.A.Versions(sc.Ctx, []string{"daily"})
	sc.must("Versions", err)

	sc.note("read the ledger")
	_, err = sc.A.Partitions(sc.Ctx, []string{"daily", "hourly", "by_region", "totals"})
	sc.must("Partitions", err)
	_, err = sc.A.Leases(sc.Ctx)
	sc.must("Leases", err)
	if ls, ok := sc.A.(adapters.LedgerSummarizer); ok {
		_, err := ls.SummarizePartitions(sc.Ctx, adapters.SummaryQuery{Models: []string{"daily", "totals"}, Yearly: Day("2023-01-01"),
			Edges: []adapters.Edge{{Down: "daily", Up: "hourly", Grain: models.Day}}})
		sc.must("SummarizePartitions", err)
		_, err = ls.QueryPartitions(sc.Ctx, adapters.RecordQuery{All: []string{"totals"}, Since: map[string]time.Time{"daily": Day("2024-01-03")}})
		sc.must("QueryPartitions", err)
	}

	sc.note("renew and release the lease")
	sc.must("RenewLeases", sc.A.RenewLeases(sc.Ctx, scriptRun, scriptAt.Add(30*time.Second), scriptAt.Add(90*time.Second)))
	sc.must("ReleaseLeases", sc.A.ReleaseLeases(sc.Ctx, scriptRun))

	sc.note("clean up the stages of dead runs")
	if df, ok := sc.A.(adapters.Deferrer); ok {
		_, err := df.Unrecorded(sc.Ctx, func(string) bool { return true })
		sc.must("Unrecorded", err)
	}
	if c, ok := sc.A.(adapters.StageCleaner); ok {
		sc.must("CleanStages", c.CleanStages(sc.Ctx, func(token string) bool { return token == adapters.RunToken(scriptRun) }))
	}
}

// maskScript returns a function that masks what changes between two runs
// of Script: the schemas' names (as the dialect stores them) and the
// unique part of the names of stages.
func maskScript(s Schemas, d models.Dialect) func(string) string {
	var pairs []string
	for _, p := range [][2]string{{s.Default, scriptSchemas.Default}, {s.Ledger, scriptSchemas.Ledger}, {s.Stage, scriptSchemas.Stage}} {
		pairs = append(pairs, p[0], p[1], strings.ToUpper(p[0]), strings.ToUpper(p[1]))
	}
	names := strings.NewReplacer(pairs...)
	// StageName's unique part: the adapter's random suffix, then a
	// sequence number (and a window tag).
	unique := regexp.MustCompile(`(?i)(__[swv]_` + adapters.RunToken(scriptRun) + `_)[0-9a-f]{6}`)
	return func(line string) string {
		return MaskVolatile(unique.ReplaceAllString(names.Replace(line), "${1}XXXXXX"))
	}
}

var (
	// The tables a seed is loaded into before it replaces the old one:
	// ClickHouse's <table>__refill_seed_<unix time>_<unique><seq> and
	// Snowflake's stage <...>__SEED_SEED_<unique>.
	seedTableRE = regexp.MustCompile(`(?i)(__refill_seed_)[0-9]{10}_[0-9a-f]{6}|(__seed_seed_)[0-9a-f]{6}`)
	// Clocks in microseconds (ClickHouse's ledger row versions).
	microsRE = regexp.MustCompile(`\b1[0-9]{15}\b`)
	// The state of ClickHouse's ledger that kept summaries are stamped
	// with: a hash of the rows' versions among others.
	ledgerStateRE = regexp.MustCompile(`'[0-9]+:[0-9]+:[0-9]+:[0-9]+:[0-9 :-]+'`)
	// Their query's key, a SHA-256 of statements that hold the clock.
	queryKeyRE = regexp.MustCompile(`'[0-9a-f]{64}'`)
	// A date with a time, which MaskVolatile masks when it is near the clock.
	timeRE = regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?`)
)

// MaskVolatile masks, in a line of a statement log, what the clock and
// chance put there rather than the caller: times within a day of the clock
// (as NOW: a lease's expiry may fall on tomorrow's date), clocks in
// microseconds (as MICROS), the ledger's state and the query's key kept
// summaries are stamped with (as 'STATE' and 'KEY'), and the unique parts
// of the tables seeds are loaded into.
func MaskVolatile(line string) string {
	line = ledgerStateRE.ReplaceAllString(line, "'STATE'")
	line = queryKeyRE.ReplaceAllString(line, "'KEY'")
	now := time.Now().UTC()
	line = timeRE.ReplaceAllStringFunc(line, func(t string) string {
		at, err := time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(t, "T", " ", 1))
		if err == nil && at.Sub(now).Abs() < 24*time.Hour {
			return "NOW"
		}
		return t
	})
	line = seedTableRE.ReplaceAllString(line, "${1}${2}XXXXXX")
	return microsRE.ReplaceAllString(line, "MICROS")
}
