package main

import (
	"context"
	"fmt"
	"os"
	"strings"
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

// BenchmarkClickHouseCluster measures what a cluster costs refill: the
// same backfill of clusterBenchDays daily partitions (a table partitioned
// by day, default concurrency) from a source of REFILL_BENCH_ROWS rows
// (default 1,000,000), rewriting a table that already holds them, on one
// server (CLICKHOUSE_DSN) and on the cluster (CLICKHOUSE_CLUSTER_DSN,
// CLICKHOUSE_CLUSTER) in each layout, in interleaved rounds
// (REFILL_BENCH_ROUNDS, default 3; medians):
//
//	(s) one server
//	(r) the cluster, layout: replicated
//	(h) the cluster, layout: sharded (sharding key rand())
//
// It reports r/s, h/s and the statements each issues per partition
// (counting those run on other nodes than the coordinator). The three
// tables are checked to hold the same rows.
func BenchmarkClickHouseCluster(b *testing.B) {
	dsn := adaptertest.ClickHouseServer.Env(b)[0]
	env := adaptertest.ClusterServer.Env(b)
	cdsn, cluster := env[0], env[1]
	const days = clusterBenchDays
	rows, rounds := envInt(b, "REFILL_BENCH_ROWS", 1_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 3)
	ctx := context.Background()
	schema := fmt.Sprintf("refill_cbench_%d", os.Getpid())
	src := schema + "_src"
	fill := fmt.Sprintf("INSERT INTO %s.events SELECT number, toDate('2024-01-01') + (number %% %d), number %% 100000, (number %% 997) / 10 FROM numbers(%d)", src, days, rows)
	cols := "(id UInt64, d Date, user_id UInt64, amount Float64)"

	type setup struct {
		name       string
		a          *clickhouse.Adapter
		r          *runner.Runner
		statements atomic.Int64
		table      string // what to checksum
	}
	open := func(name, dsn, cluster, layout string) *setup {
		s := &setup{name: name, table: schema + "_" + name + ".m"}
		a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn, Cluster: cluster, Layout: layout, Schema: schema + "_" + name,
			LedgerSchema: schema + "_" + name + "_ledger", StageSchema: schema + "_" + name + "_stage", Log: func(string) { s.statements.Add(1) }})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.Close() })
		s.a = a
		on := ""
		if cluster != "" {
			on = " ON CLUSTER " + cluster
		}
		drop := func() {
			for _, db := range []string{src, schema + "_" + name, schema + "_" + name + "_ledger", schema + "_" + name + "_stage"} {
				a.DB().ExecContext(ctx, "DROP DATABASE IF EXISTS "+db+on)
			}
		}
		drop()
		b.Cleanup(drop)
		engine := "MergeTree()"
		if cluster != "" {
			engine = "ReplicatedMergeTree('/clickhouse/refill/all/" + src + "/events', '{replica}')"
		}
		for _, q := range []string{"CREATE DATABASE " + src + on,
			fmt.Sprintf("CREATE TABLE %s.events%s %s ENGINE = %s PARTITION BY toYYYYMM(d) ORDER BY (d, id)", src, on, cols, engine), fill} {
			if _, err := a.DB().ExecContext(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		model := strings.Replace(benchModelCH("clickhouse: {partition_by: d}"), `source("src.events")`, `source("`+src+`.events")`, 1)
		fsys := fstest.MapFS{
			"refill.yml":   {Data: []byte("targets:\n  ch: {adapter: clickhouse}\n")},
			"models/m.sql": {Data: []byte(model)},
		}
		p, err := models.Load(fsys, withAdapters(models.LoadOptions{}))
		if err != nil {
			b.Fatal(err)
		}
		s.r = &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: schema + "_" + name}}, Target: "ch"}
		return s
	}
	run := func(s *setup, mode plan.Mode) (time.Duration, int64) {
		sel := plan.Selection{From: "2024-01-01", To: time.Date(2024, 1, days, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), Mode: mode,
			Now: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
		pl, err := s.r.Plan(ctx, sel)
		if err != nil {
			b.Fatal(err)
		}
		if len(pl.Steps) != days {
			b.Fatalf("%s: %d steps, want %d", s.name, len(pl.Steps), days)
		}
		s.statements.Store(0)
		start := time.Now()
		sum, err := s.r.Run(ctx, pl, runner.RunOptions{})
		if err != nil || sum.Failed > 0 || sum.Succeeded != days {
			b.Fatalf("%s: %+v %v", s.name, sum, err)
		}
		return time.Since(start), s.statements.Load()
	}
	one := open("s", dsn, "", "")
	repl := open("r", cdsn, cluster, clickhouse.LayoutReplicated)
	shard := open("h", cdsn, cluster, clickhouse.LayoutSharded)
	statements := map[string]int64{}
	var vs []variant
	for _, s := range []*setup{one, repl, shard} {
		run(s, plan.ModeMissing) // builds the table; the measured runs rewrite it
		vs = append(vs, variant{s.name, func() time.Duration { d, n := run(s, plan.ModeAll); statements[s.name] = n; return d }})
	}
	med := interleave(b, rounds, vs)
	want := checksum(b, one.a.DB(), one.table)
	for _, s := range []*setup{repl, shard} {
		if got := checksum(b, s.a.DB(), s.table); got != want {
			b.Fatalf("%s holds %s, one server %s", s.name, got, want)
		}
	}
	for _, s := range []string{"s", "r", "h"} {
		b.ReportMetric(med[s].Seconds(), s+"-s")
		b.ReportMetric(float64(statements[s])/days, s+"-statements/partition")
	}
	b.ReportMetric(med["r"].Seconds()/med["s"].Seconds(), "r/s")
	b.ReportMetric(med["h"].Seconds()/med["s"].Seconds(), "h/s")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

// clusterBenchDays is how many daily partitions BenchmarkClickHouseCluster
// writes: January 2024.
const clusterBenchDays = 31
