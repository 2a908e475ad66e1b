package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
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
// CLICKHOUSE_CLUSTER, CLICKHOUSE_CLUSTER_NODES) in each layout, against
// what a ClickHouse engineer would write by hand for each layout, in
// interleaved rounds (REFILL_BENCH_ROUNDS, default 3; medians):
//
//	(s)  one server
//	(r)  the cluster, layout: replicated
//	(rl) by hand on the replicated layout, one day at a time on the
//	     coordinator: INSERT into a stage on it, REPLACE PARTITION into
//	     the replicated table, DROP the stage's partition; then SYNC
//	     REPLICA on the other nodes, so that it ends, as refill does, with
//	     every replica holding the rows
//	(h)  the cluster, layout: sharded (sharding key id)
//	(hl) by hand on the sharded layout, one day at a time, shard after
//	     shard on the shard's first replica: INSERT into a stage the
//	     source rows of the shard (id % 2, as the Distributed table
//	     routes them), REPLACE PARTITION into the shard's replicated
//	     table, DROP the stage's partition; then SYNC REPLICA on each
//	     shard's other replica
//
// It reports r/s, h/s, r/rl, h/hl and the statements each issues per
// partition (refill's counting those run on other nodes than the
// coordinator). Every table is checked to hold the same rows.
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

	clusterSource := false // made on the cluster
	type setup struct {
		name       string
		a          *clickhouse.Adapter
		r          *runner.Runner
		statements atomic.Int64
		table      string // what to checksum
	}
	open := func(name, dsn, cluster, layout string) *setup {
		s := &setup{name: name, table: schema + "_" + name + ".m"}
		key := ""
		if layout == clickhouse.LayoutSharded {
			key = "id" // as the hand loop routes rows
		}
		a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn, Cluster: cluster, Layout: layout, ShardingKey: key, Schema: schema + "_" + name,
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
		// The cluster's setups share one source, made by the first: on
		// 18.16 dropping a replicated table just filled can hang a node's
		// DDL queue.
		dbs := []string{schema + "_" + name, schema + "_" + name + "_ledger", schema + "_" + name + "_stage"}
		fillSource := cluster == "" || !clusterSource
		if fillSource {
			dbs = append(dbs, src)
			clusterSource = clusterSource || cluster != ""
		}
		drop := func() {
			for _, db := range dbs {
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
			if !fillSource {
				break
			}
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
		if pl.Len() != days {
			b.Fatalf("%s: %d steps, want %d", s.name, pl.Len(), days)
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
	hand := newClusterHand(b, ctx, env[2], cluster, schema+"_hand", repl.a, src, cols)
	statements := map[string]int64{}
	var vs []variant
	for _, s := range []*setup{one, repl, shard} {
		run(s, plan.ModeMissing) // builds the table; the measured runs rewrite it
		vs = append(vs, variant{s.name, func() time.Duration { d, n := run(s, plan.ModeAll); statements[s.name] = n; return d }})
	}
	hand.replicated()
	hand.sharded()
	byHand := func(name string, loop func() time.Duration) variant {
		return variant{name, func() time.Duration { d := loop(); statements[name] = hand.statements; return d }}
	}
	vs = slices.Insert(vs, 2, byHand("rl", hand.replicated))
	vs = append(vs, byHand("hl", hand.sharded))
	med := interleave(b, rounds, vs)
	want := checksum(b, one.a.DB(), one.table)
	for s, db := range map[string]*sql.DB{"r": repl.a.DB(), "h": shard.a.DB(), "rl": hand.nodes[0], "hl": hand.nodes[0]} {
		table := map[string]string{"r": repl.table, "h": shard.table, "rl": hand.schema + ".r", "hl": hand.schema + ".h"}[s]
		if got := checksum(b, db, table); got != want {
			b.Fatalf("%s holds %s, one server %s", s, got, want)
		}
	}
	for _, s := range []string{"s", "r", "rl", "h", "hl"} {
		b.ReportMetric(med[s].Seconds(), s+"-s")
		b.ReportMetric(float64(statements[s])/days, s+"-statements/partition")
	}
	b.ReportMetric(med["r"].Seconds()/med["s"].Seconds(), "r/s")
	b.ReportMetric(med["h"].Seconds()/med["s"].Seconds(), "h/s")
	b.ReportMetric(med["r"].Seconds()/med["rl"].Seconds(), "r/rl")
	b.ReportMetric(med["h"].Seconds()/med["hl"].Seconds(), "h/hl")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

// clusterHand is BenchmarkClickHouseCluster's backfill by hand, in
// database schema on every node of the 2 x 2 cluster: r, a replicated
// table, and h, a Distributed table over h_local, replicated per shard,
// both partitioned by day, each with a plain stage on the node that
// writes it.
type clusterHand struct {
	b          *testing.B
	ctx        context.Context
	nodes      []*sql.DB // in CLICKHOUSE_CLUSTER_NODES' order: shard 1's two replicas, then shard 2's
	schema     string
	src, model string // the source table, the model's SELECT over it
	statements int64  // those the last loop issued
}

func newClusterHand(b *testing.B, ctx context.Context, nodeDSNs, cluster, schema string, coordinator *clickhouse.Adapter, src, cols string) *clusterHand {
	h := &clusterHand{b: b, ctx: ctx, schema: schema, src: src + ".events",
		model: "SELECT id, d, user_id, amount * 1.1 AS amount FROM " + src + ".events"}
	dsns := strings.Split(nodeDSNs, ",")
	if len(dsns) != 4 {
		b.Fatalf("CLICKHOUSE_CLUSTER_NODES lists %d nodes; the benchmark expects the 2 x 2 cluster of .ci/cluster", len(dsns))
	}
	for _, dsn := range dsns {
		a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.Close() })
		h.nodes = append(h.nodes, a.DB())
	}
	on := " ON CLUSTER " + cluster
	drop := func() { coordinator.DB().ExecContext(ctx, "DROP DATABASE IF EXISTS "+schema+on) }
	drop()
	b.Cleanup(drop)
	byDay := " PARTITION BY d ORDER BY (d, id)"
	h.exec(0, "CREATE DATABASE "+schema+on)
	h.exec(0, fmt.Sprintf("CREATE TABLE %s.r%s %s ENGINE = ReplicatedMergeTree('/clickhouse/refill/all/%s/r', '{replica}')%s", schema, on, cols, schema, byDay))
	h.exec(0, fmt.Sprintf("CREATE TABLE %s.h_local%s %s ENGINE = ReplicatedMergeTree('/clickhouse/refill/{shard}/%s/h_local', '{replica}')%s", schema, on, cols, schema, byDay))
	h.exec(0, fmt.Sprintf("CREATE TABLE %s.h%s %s ENGINE = Distributed(%s, %s, h_local, id)", schema, on, cols, cluster, schema))
	for _, n := range []int{0, 2} {
		h.exec(n, fmt.Sprintf("CREATE TABLE %s.stage %s ENGINE = MergeTree()%s", schema, cols, byDay))
	}
	// Every node holds the whole source before anything is measured.
	for n := range h.nodes {
		h.exec(n, "SYSTEM SYNC REPLICA "+h.src)
	}
	return h
}

func (h *clusterHand) exec(node int, q string) {
	h.statements++
	if _, err := h.nodes[node].ExecContext(h.ctx, q); err != nil {
		h.b.Fatalf("node %d: %s: %v", node+1, q, err)
	}
}

// day writes day i of January 2024 into table (r or h_local) on node
// from the source rows where filters them.
func (h *clusterHand) day(node int, table string, i int, where string) {
	day := time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC)
	id := day.Format("20060102")
	h.exec(node, fmt.Sprintf("INSERT INTO %s.stage %s WHERE d = toDate('%s')%s", h.schema, h.model, day.Format("2006-01-02"), where))
	h.exec(node, fmt.Sprintf("ALTER TABLE %s.%s REPLACE PARTITION ID '%s' FROM %s.stage", h.schema, table, id, h.schema))
	h.exec(node, fmt.Sprintf("ALTER TABLE %s.stage DROP PARTITION ID '%s'", h.schema, id))
}

func (h *clusterHand) replicated() time.Duration {
	h.statements = 0
	start := time.Now()
	for i := range clusterBenchDays {
		h.day(0, "r", i, "")
	}
	for _, n := range []int{1, 2, 3} {
		h.exec(n, "SYSTEM SYNC REPLICA "+h.schema+".r")
	}
	return time.Since(start)
}

func (h *clusterHand) sharded() time.Duration {
	h.statements = 0
	start := time.Now()
	for i := range clusterBenchDays {
		for shard, node := range []int{0, 2} {
			h.day(node, "h_local", i, fmt.Sprintf(" AND id %% 2 = %d", shard))
		}
	}
	for _, n := range []int{1, 3} {
		h.exec(n, "SYSTEM SYNC REPLICA "+h.schema+".h_local")
	}
	return time.Since(start)
}

// clusterBenchDays is how many daily partitions BenchmarkClickHouseCluster
// writes: January 2024.
const clusterBenchDays = 31
