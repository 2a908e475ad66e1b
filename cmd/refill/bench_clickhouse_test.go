package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// benchModelCH is the ClickHouse form of benchModel; layout is the
// model's clickhouse: block.
func benchModelCH(layout string) string {
	return `/* refill
partition_by: d
grain: day
start: 2024-01-01
` + layout + `
*/
SELECT id, d, user_id, amount * 1.1 AS amount
FROM {{ source("src.events") }}
WHERE d >= {{ start }} AND d < {{ end }}`
}

// BenchmarkClickHouseBackfill compares, on the ClickHouse server in
// CLICKHOUSE_DSN, refill with the hand-written SQL a careful engineer would
// run instead, on a source of REFILL_BENCH_ROWS rows (default 10 million)
// over the 365 days of 2024. Every variant rewrites a table that already
// holds the range (a backfill over existing data); the variants run in
// interleaved rounds (REFILL_BENCH_ROUNDS, default 5) and the figures are
// medians:
//
//	(a) refill, per partition at its default concurrency (4 on
//	    ClickHouse: stages are computed side by side, swaps one at a
//	    time), into a table partitioned by day
//	(a1) the same, one partition at a time (--concurrency 1)
//	(d) by hand, into such a table: per day, INSERT INTO a stage SELECT,
//	    ALTER TABLE ... REPLACE PARTITION from it, TRUNCATE the stage
//	(b) refill in batch mode (one statement for the year), into a table
//	    partitioned by month (refill's default for a daily model)
//	(c) by hand, into such a table: TRUNCATE, one INSERT ... SELECT
//
// It reports a/d, a1/d and b/c, and the statements refill issues per
// partition.
func BenchmarkClickHouseBackfill(b *testing.B) {
	dsn := adaptertest.ClickHouseServer.Env(b)[0]
	rows, rounds := envInt(b, "REFILL_BENCH_ROWS", 10_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 5)
	ctx := context.Background()
	schema := fmt.Sprintf("refill_bench_%d", os.Getpid())
	var statements atomic.Int64
	a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn, Schema: schema, LedgerSchema: schema + "_ledger",
		StageSchema: schema + "_stage", Log: func(string) { statements.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	db := a.DB()
	exec := func(q string) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	drop := func() {
		for _, s := range []string{schema, schema + "_ledger", schema + "_stage", "src"} {
			exec("DROP DATABASE IF EXISTS " + s)
		}
	}
	drop()
	defer drop()
	exec("CREATE DATABASE src")
	exec("CREATE DATABASE " + schema)
	exec("CREATE TABLE src.events (id UInt64, d Date, user_id UInt64, amount Float64) ENGINE = MergeTree() PARTITION BY toYYYYMM(d) ORDER BY (d, id)")
	exec(fmt.Sprintf("INSERT INTO src.events SELECT number, toDate('2024-01-01') + (number %% %d), number %% 100000, (number %% 997) / 10 FROM numbers(%d)", benchDays, rows))
	body := "SELECT id, d, user_id, amount * 1.1 AS amount FROM src.events"
	byDay, byMonth := "ENGINE = MergeTree() PARTITION BY d ORDER BY d", "ENGINE = MergeTree() PARTITION BY toYYYYMM(d) ORDER BY d"
	cols := "(id UInt64, d Date, user_id UInt64, amount Float64)"
	exec(fmt.Sprintf("CREATE TABLE %s.hand_loop %s %s", schema, cols, byDay))
	exec(fmt.Sprintf("CREATE TABLE %s.hand_loop_stage %s %s", schema, cols, byDay))
	exec(fmt.Sprintf("CREATE TABLE %s.hand_once %s %s", schema, cols, byMonth))

	fsys := fstest.MapFS{
		"refill.yml":               {Data: []byte("targets:\n  ch: {adapter: clickhouse}\n")},
		"models/per_partition.sql": {Data: []byte(benchModelCH("clickhouse: {partition_by: d}"))},
		"models/batched.sql":       {Data: []byte(benchModelCH("batch: 365"))},
	}
	p, err := models.Load(fsys, withAdapters(models.LoadOptions{}))
	if err != nil {
		b.Fatal(err)
	}
	r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: schema}}, Target: "ch"}
	refill := func(model string, mode plan.Mode, concurrency int) (time.Duration, int64) {
		sel := plan.Selection{Select: []string{model}, From: "2024-01-01", To: "2024-12-30", Mode: mode, Now: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
		pl, err := r.Plan(ctx, sel)
		if err != nil {
			b.Fatal(err)
		}
		if pl.Len() != benchDays {
			b.Fatalf("%s: %d steps", model, pl.Len())
		}
		statements.Store(0)
		start := time.Now()
		s, err := r.Run(ctx, pl, runner.RunOptions{Concurrency: concurrency})
		if err != nil || s.Failed > 0 || s.Succeeded != benchDays {
			b.Fatalf("%s: %+v %v", model, s, err)
		}
		return time.Since(start), statements.Load()
	}
	handLoop := func() time.Duration {
		start := time.Now()
		day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < benchDays; i++ {
			from, to := day.Format("2006-01-02"), day.AddDate(0, 0, 1).Format("2006-01-02")
			exec(fmt.Sprintf("INSERT INTO %s.hand_loop_stage %s WHERE d >= toDate('%s') AND d < toDate('%s')", schema, body, from, to))
			exec(fmt.Sprintf("ALTER TABLE %s.hand_loop REPLACE PARTITION ID '%s' FROM %s.hand_loop_stage", schema, day.Format("20060102"), schema))
			exec(fmt.Sprintf("TRUNCATE TABLE %s.hand_loop_stage", schema))
			day = day.AddDate(0, 0, 1)
		}
		return time.Since(start)
	}
	handOnce := func() time.Duration {
		start := time.Now()
		exec(fmt.Sprintf("TRUNCATE TABLE %s.hand_once", schema))
		exec(fmt.Sprintf("INSERT INTO %s.hand_once %s WHERE d >= toDate('2024-01-01') AND d < toDate('2024-12-31')", schema, body))
		return time.Since(start)
	}
	// The first round builds every table; the measured ones rewrite them.
	handLoop()
	handOnce()
	refill("per_partition", plan.ModeMissing, 1)
	refill("batched", plan.ModeMissing, 1)
	// Each variant starts once the server has finished merging what the
	// one before wrote, so that no variant pays for another's merges.
	quiet := func(f func() time.Duration) func() time.Duration {
		return func() time.Duration {
			for range 600 {
				var n int64
				if err := db.QueryRowContext(ctx, "SELECT count() FROM system.merges").Scan(&n); err != nil || n == 0 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			return f()
		}
	}
	var perStatements, batchStatements int64
	med := interleave(b, rounds, []variant{
		{"d", quiet(handLoop)},
		{"a", quiet(func() time.Duration { d, n := refill("per_partition", plan.ModeAll, 0); perStatements = n; return d })},
		{"a1", quiet(func() time.Duration { d, _ := refill("per_partition", plan.ModeAll, 1); return d })},
		{"c", quiet(handOnce)},
		{"b", quiet(func() time.Duration { d, n := refill("batched", plan.ModeAll, 1); batchStatements = n; return d })},
	})
	want := checksum(b, db, schema+".hand_once")
	for _, t := range []string{"hand_loop", "per_partition", "batched"} {
		if got := checksum(b, db, schema+"."+t); got != want {
			b.Fatalf("%s holds %s, want %s", t, got, want)
		}
	}
	b.ReportMetric(med["a"].Seconds(), "a-refill-per-partition-s")
	b.ReportMetric(med["a1"].Seconds(), "a1-refill-one-at-a-time-s")
	b.ReportMetric(med["d"].Seconds(), "d-hand-replace-loop-s")
	b.ReportMetric(med["b"].Seconds(), "b-refill-batch-s")
	b.ReportMetric(med["c"].Seconds(), "c-hand-insert-select-s")
	b.ReportMetric(med["a"].Seconds()/med["d"].Seconds(), "a/d")
	b.ReportMetric(med["a1"].Seconds()/med["d"].Seconds(), "a1/d")
	b.ReportMetric(med["b"].Seconds()/med["c"].Seconds(), "b/c")
	b.ReportMetric(float64(perStatements)/benchDays, "statements/partition")
	b.ReportMetric(float64(batchStatements), "statements/batch-run")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive whole number", name, s)
	}
	return n
}
