package clickhouse_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/models"
)

// clusterEnv returns CLICKHOUSE_CLUSTER_DSN and CLICKHOUSE_CLUSTER, or
// skips the test.
func clusterEnv(t *testing.T) (dsn, name string) {
	t.Helper()
	env := adaptertest.ClusterServer.Env(t)
	return env[0], env[1]
}

// openCluster opens an adapter on the cluster with layout, on fresh
// databases that t's cleanup drops from every node.
func openCluster(t *testing.T, s adaptertest.Schemas, layout string, cfg clickhouse.Config) *clickhouse.Adapter {
	t.Helper()
	dsn, name := clusterEnv(t)
	cfg.DSN, cfg.Cluster, cfg.Layout = dsn, name, layout
	cfg.Schema, cfg.LedgerSchema, cfg.StageSchema = s.Default, s.Ledger, s.Stage
	a, err := clickhouse.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer a.Close()
		for _, db := range []string{s.Default, s.Ledger, s.Stage} {
			if _, err := a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+a.Dialect().QuoteIdent(db)+" ON CLUSTER "+name); err != nil {
				t.Errorf("dropping %s: %v", db, err)
			}
		}
	})
	return a
}

func TestClusterConformance(t *testing.T) {
	clusterEnv(t)
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) {
			adaptertest.Run(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
				return openCluster(t, s, layout, clickhouse.Config{})
			})
		})
	}
}

// TestClusterPublishFaults fails each operation of a publication into a
// replicated table and into a sharded one in turn (routing the stage,
// each shard's swap, the replicas' catching up, the ledger). The
// guarantee: each physical partition (of each shard) is entirely old or
// entirely new; the ledger holds the publication pending before any
// swap, and done only after every replica has it; a stage whose rows may
// be in the table without their records is kept for the next run too.
// Sharded, rows go to shard v % 2 + 1, and the publication moves rows
// between the shards: a retry must leave none behind.
func TestClusterPublishFaults(t *testing.T) {
	clusterEnv(t)
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) { clusterPublishFaults(t, layout) })
	}
}

// clusterPublishFaults is TestClusterPublishFaults on layout. The other
// replicas catch up after the swaps, outside the target's lock: a fault
// there leaves the publication unrecorded, and listed, too.
func clusterPublishFaults(t *testing.T, layout string) {
	rec := recorder.New()
	adaptertest.Faults(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openCluster(t, s, layout, clickhouse.Config{Connector: rec.Wrap, ShardingKey: "v"})
	}, func(t *testing.T, f *adaptertest.Fault) {
		f.WantEachGroup(func(r adaptertest.Row) string {
			if layout == clickhouse.LayoutReplicated {
				return r.D[:7]
			}
			return fmt.Sprintf("%s shard %d", r.D[:7], r.V%2+1)
		})
		changed := fmt.Sprint(f.After) != fmt.Sprint(f.Before)
		// The publication's records are written done after the swap
		// (2024-01-31 was done with 1 row before, and is done with 2
		// after); before it, its stage is listed on every node.
		done := false
		for _, r := range f.LedgerAfter {
			done = done || r.Partition == "2024-01-31" && r.State == adapters.RecordDone && r.Rows == 2
		}
		if done && fmt.Sprint(f.After) != fmt.Sprint(f.Want) {
			t.Errorf("the ledger records the publication done, but %s holds %v, want %v", f.Target, f.After, f.Want)
		}
		if changed && !done {
			dead := func(token string) bool { return token == adapters.RunToken(adaptertest.FaultRun) }
			kept, err := f.A.(adapters.Deferrer).Unrecorded(f.Ctx, dead)
			if err != nil || len(kept) == 0 {
				t.Errorf("%s changed without records, and no stage names it for the next run (Unrecorded: %v, %v)", f.Target, kept, err)
			}
			// Without the coordinator's stages: every other node lists it.
			for i, n := range nodes(t, f.S)[1:] {
				listed, err := n.Unrecorded(f.Ctx, dead)
				if err != nil || len(listed) == 0 || !slices.Equal(listed, kept) {
					t.Errorf("%s changed without records, but node %d lists %v (%v) for the next run, not %v", f.Target, i+2, listed, err, kept)
				}
			}
		}
	})
}

// nodes opens a one-server adapter on each node of the cluster, in
// remote_servers order (shard 1's replicas, then shard 2's), on the
// databases of s.
func nodes(t *testing.T, s adaptertest.Schemas) []*clickhouse.Adapter {
	t.Helper()
	var out []*clickhouse.Adapter
	for _, dsn := range strings.Split(os.Getenv("CLICKHOUSE_CLUSTER_NODES"), ",") {
		a, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: dsn, Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		out = append(out, a)
	}
	if len(out) != 4 {
		t.Fatalf("CLICKHOUSE_CLUSTER_NODES lists %d nodes; the tests expect the 2 x 2 cluster of .ci/cluster", len(out))
	}
	return out
}

// rowsOn returns the (d, v) rows of table on node n, sorted.
func rowsOn(t *testing.T, n *clickhouse.Adapter, table string) []adaptertest.Row {
	t.Helper()
	res, err := n.Query(t.Context(), "SELECT toString(d), v FROM "+table+" ORDER BY d, v", adapters.Tag{})
	if err != nil {
		t.Fatalf("on %s: %v", n.Server().Version, err)
	}
	var out []adaptertest.Row
	for _, r := range res.Rows {
		out = append(out, adaptertest.Row{D: fmt.Sprint(r[0]), V: adapters.Int(r[1])})
	}
	return out
}

// onEachLayout runs fn, as the test name, on a fresh cluster adapter of
// each layout, sharded by column v.
func onEachLayout(t *testing.T, name string, fn func(t *testing.T, h *adaptertest.Harness, layout string)) {
	clusterEnv(t)
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) {
			adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
				return openCluster(t, s, layout, clickhouse.Config{ShardingKey: "v"})
			}, []adaptertest.Test{{Name: name, Fn: func(t *testing.T, h *adaptertest.Harness) { fn(t, h, layout) }}})
		})
	}
}

// TestClusterLayout publishes into each layout and reads every node
// directly: under the replicated layout each node holds every row; under
// the sharded layout each shard's replicas hold the same rows, those of
// their shard (v % 2 + 1), and the shards together every row. Every node
// reads the same ledger. Then the window is published again with every
// row moved to the other shard: no node keeps a stale row.
func TestClusterLayout(t *testing.T) {
	onEachLayout(t, "Nodes", func(t *testing.T, h *adaptertest.Harness, layout string) {
		h.SetupLedger()
		var src, moved []adaptertest.Row
		for i := range 40 {
			d := adaptertest.Day("2024-01-20").AddDate(0, 0, i).Format("2006-01-02")
			src = append(src, adaptertest.Row{D: d, V: int64(i)})
			moved = append(moved, adaptertest.Row{D: d, V: int64(i) + 1})
		}
		h.Seed("src", src...)
		h.Seed("moved", moved...)
		m := adaptertest.DayModel("m")
		target := h.Rel("t")
		// Inside the window (2024-01-25 to 2024-02-10): its
		// months hold rows outside it too.
		inside := func(r adaptertest.Row) bool { return r.D >= "2024-01-25" && r.D < "2024-02-10" }
		publish := func(from models.Relation, start, end string, want []adaptertest.Row) {
			st := h.Stage(m, target, h.SelectFrom(from, start, end), adaptertest.Window(start, end))
			h.Publish(adapters.Swap{Stage: st, Records: []adapters.Record{adaptertest.Record("m", "2024-01-25", 1)}})
			h.WantRows(target, want...)
		}
		var second []adaptertest.Row
		for i, r := range src {
			if inside(r) {
				second = append(second, moved[i])
			} else {
				second = append(second, r)
			}
		}
		publish(h.Rel("src"), "2024-01-01", "2024-03-01", src)
		check := func(want []adaptertest.Row) {
			t.Helper()
			// Drift detection counts the rows of every shard.
			counts, err := h.A.(adapters.RowCounter).CountRows(t.Context(), []models.Relation{target})
			if err != nil || counts[target.String()] != int64(len(want)) {
				t.Errorf("CountRows(%s) = %v, %v; want %d", target, counts, err, len(want))
			}
			table := target.Quote(h.D())
			if layout == clickhouse.LayoutSharded {
				table = h.Rel("t" + clickhouse.LocalSuffix).Quote(h.D())
			}
			for i, n := range nodes(t, h.S) {
				var mine []adaptertest.Row
				for _, r := range want {
					if layout == clickhouse.LayoutReplicated || int(r.V%2) == i/2 {
						mine = append(mine, r)
					}
				}
				sort.Slice(mine, func(a, b int) bool { return fmt.Sprint(mine[a]) < fmt.Sprint(mine[b]) })
				if got := rowsOn(t, n, table); fmt.Sprint(got) != fmt.Sprint(mine) {
					t.Errorf("node %d (shard %d) holds in %s\n  %v\nwant\n  %v", i+1, i/2+1, table, got, mine)
				}
				// A one-server adapter does not wait for the ledger's
				// replication, as a cluster's does.
				if _, err := n.DB().ExecContext(t.Context(), "SYSTEM SYNC REPLICA "+models.Relation{Schema: h.S.Ledger, Name: "partitions"}.Quote(h.D())); err != nil {
					t.Fatal(err)
				}
				recs, err := n.Partitions(t.Context(), []string{"m"})
				if err != nil || len(recs) != 1 || recs[0].Partition != "2024-01-25" {
					t.Errorf("node %d reads the ledger as %v, %v", i+1, recs, err)
				}
			}
		}
		check(src)
		publish(h.Rel("moved"), "2024-01-25", "2024-02-10", second)
		check(second)
		if layout != clickhouse.LayoutSharded {
			return
		}
		// Rows lost behind refill's back on one shard show in its
		// count, which drift detection compares with the ledger.
		local := h.Rel("t" + clickhouse.LocalSuffix).Quote(h.D())
		node3 := nodes(t, h.S)[2]
		before := len(rowsOn(t, node3, local))
		if _, err := node3.DB().ExecContext(t.Context(), "ALTER TABLE "+local+" DROP PARTITION 202401"); err != nil {
			t.Fatal(err)
		}
		// Both replicas of the shard apply the drop before it is
		// counted (18.16 may return before node 3 has).
		for _, n := range nodes(t, h.S)[2:] {
			if _, err := n.DB().ExecContext(t.Context(), "SYSTEM SYNC REPLICA "+local); err != nil {
				t.Fatal(err)
			}
		}
		lost := before - len(rowsOn(t, node3, local))
		counts, err := h.A.(adapters.RowCounter).CountRows(t.Context(), []models.Relation{target})
		if err != nil || lost == 0 || counts[target.String()] != int64(len(second)-lost) {
			t.Errorf("after dropping %d rows of shard 2, CountRows(%s) = %v, %v; want %d", lost, target, counts, err, len(second)-lost)
		}
	})
}

// TestClusterDatabaseOnOneNode: a target database (and a stage database)
// made by hand on the coordinator alone, as a user connected to one node
// would, is made on the other nodes before refill creates tables in it:
// the first publication of a model succeeds and every node holds its
// rows. Before, refill asked only the coordinator whether the database
// existed, and CREATE TABLE ... ON CLUSTER failed on the other nodes
// after it had run on the coordinator.
func TestClusterDatabaseOnOneNode(t *testing.T) {
	clusterEnv(t)
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) {
			adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
				coordinator := nodes(t, s)[0]
				for _, db := range []string{s.Default, s.Stage} {
					if _, err := coordinator.DB().ExecContext(t.Context(), "CREATE DATABASE "+db); err != nil {
						t.Fatal(err)
					}
				}
				return openCluster(t, s, layout, clickhouse.Config{ShardingKey: "v"})
			}, []adaptertest.Test{{Name: "Publish", Fn: func(t *testing.T, h *adaptertest.Harness) {
				h.SetupLedger()
				var src []adaptertest.Row
				for i := range 6 {
					src = append(src, adaptertest.Row{D: adaptertest.Day("2024-01-01").AddDate(0, 0, i).Format("2006-01-02"), V: int64(i)})
				}
				h.Seed("src", src...)
				m, target := adaptertest.DayModel("m"), h.Rel("t")
				st := h.Stage(m, target, h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-07"), adaptertest.Window("2024-01-01", "2024-01-07"))
				h.Publish(adapters.Swap{Stage: st, Records: []adapters.Record{adaptertest.Record("m", "2024-01-01", int64(len(src)))}})
				h.WantRows(target, src...)
				table := target.Quote(h.D())
				if layout == clickhouse.LayoutSharded {
					table = h.Rel("t" + clickhouse.LocalSuffix).Quote(h.D())
				}
				for i, n := range nodes(t, h.S) {
					want := 0
					for _, r := range src {
						if layout == clickhouse.LayoutReplicated || int(r.V%2) == i/2 {
							want++
						}
					}
					if got := rowsOn(t, n, table); len(got) != want {
						t.Errorf("node %d holds %d rows of %s, want %d: %v", i+1, len(got), table, want, got)
					}
				}
			}}})
		})
	}
}

// TestClusterHalfMadeTable: a sharded target whose creation stopped half
// way (its shards' table made ON CLUSTER, the Distributed table over it
// not: a crash between the two, or a node down during the first) is made
// anew by the next publication when the shards' table is refill's and
// empty everywhere; one holding rows, or made by someone else, is refused.
func TestClusterHalfMadeTable(t *testing.T) {
	_, name := clusterEnv(t)
	adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openCluster(t, s, clickhouse.LayoutSharded, clickhouse.Config{ShardingKey: "v"})
	}, []adaptertest.Test{{Name: "Shards", Fn: func(t *testing.T, h *adaptertest.Harness) {
		h.SetupLedger()
		src := []adaptertest.Row{{D: "2024-01-01", V: 1}, {D: "2024-01-02", V: 2}}
		h.Seed("src", src...)
		m := adaptertest.DayModel("m")
		db := h.A.(*clickhouse.Adapter).DB()
		half := func(table, path string, rows bool) {
			t.Helper()
			local := h.Rel(table + clickhouse.LocalSuffix).Quote(h.D())
			stmts := []string{fmt.Sprintf("CREATE TABLE %s ON CLUSTER %s (d Date, v Int64) ENGINE = ReplicatedMergeTree('%s', '{replica}') PARTITION BY d ORDER BY d",
				local, name, path)}
			if rows {
				stmts = append(stmts, "INSERT INTO "+local+" SELECT toDate('2023-12-31'), 9")
			}
			for _, q := range stmts {
				if _, err := db.ExecContext(h.Ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		publish := func(table string) error {
			st := h.Stage(m, h.Rel(table), h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-03"), adaptertest.Window("2024-01-01", "2024-01-03"))
			if err := h.A.Publish(h.Ctx, []adapters.Swap{{Stage: st, Records: []adapters.Record{adaptertest.Record("m", "2024-01-01", 2)}}}); err != nil {
				return err
			}
			return h.A.(adapters.Deferrer).Flush(h.Ctx)
		}
		refillPath := func(table string) string {
			return clickhouse.ZooKeeperRoot + "/{shard}/" + h.S.Default + "/" + table + clickhouse.LocalSuffix + "/x1"
		}

		half("empty", refillPath("empty"), false)
		if err := publish("empty"); err != nil {
			t.Fatalf("publishing over refill's empty, half-made table: %v", err)
		}
		h.WantRows(h.Rel("empty"), src...)

		half("full", refillPath("full"), true)
		if err := publish("full"); err == nil || !strings.Contains(err.Error(), "but not the Distributed table") {
			t.Errorf("publishing over a half-made table holding rows: %v, want a refusal", err)
		}
		half("theirs", "/clickhouse/tables/{shard}/"+h.S.Default+"/theirs", false)
		if err := publish("theirs"); err == nil || !strings.Contains(err.Error(), "but not the Distributed table") {
			t.Errorf("publishing over a shards' table refill did not make: %v, want a refusal", err)
		}
	}}})
}

// TestClusterPublishedLists: before its swap, a publication's stage is
// listed on every node, where the next run finds it with the coordinator
// gone; a run that ends with its records written drops its lists, and
// one that does not leaves them until a later run cleans its stages.
func TestClusterPublishedLists(t *testing.T) {
	clusterEnv(t)
	adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		// Records wait for Flush, not a timer.
		return openCluster(t, s, clickhouse.LayoutReplicated, clickhouse.Config{FlushAfter: time.Hour})
	}, []adaptertest.Test{{Name: "Lists", Fn: func(t *testing.T, h *adaptertest.Harness) {
		h.SetupLedger()
		h.Seed("src", adaptertest.Row{D: "2024-01-01", V: 1}, adaptertest.Row{D: "2024-01-02", V: 2})
		m, target := adaptertest.DayModel("m"), h.Rel("t")
		ctx, d := h.Ctx, h.D()
		each := nodes(t, h.S)
		publish := func(runID string) *adapters.Stage {
			st, err := h.A.Stage(ctx, adapters.StageRequest{Model: m, Target: target, Query: h.SelectFrom(h.Rel("src"), "2024-01-01", "2024-01-03"),
				Window: adaptertest.Window("2024-01-01", "2024-01-03"), Tag: adapters.Tag{RunID: runID, Model: "m", Step: "stage"}})
			if err != nil {
				t.Fatal(err)
			}
			rec := adaptertest.Record("m", "2024-01-01", 2)
			rec.RunID = runID
			if err := h.A.Publish(ctx, []adapters.Swap{{Stage: st, Records: []adapters.Record{rec}}}); err != nil {
				t.Fatal(err)
			}
			return st
		}
		// listed returns, per node, the stages the lists of runID name.
		listed := func(runID string) []string {
			t.Helper()
			var out []string
			for _, n := range each {
				got, err := n.Unrecorded(ctx, func(token string) bool { return token == adapters.RunToken(runID) })
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, strings.Join(got, " "))
			}
			return out
		}
		lists := func() []int64 {
			t.Helper()
			var out []int64
			for _, n := range each {
				res, err := n.Query(ctx, fmt.Sprintf("SELECT count() FROM system.tables WHERE database = %s AND name LIKE '%%\\_\\_p\\_%%'", d.QuoteString(h.S.Stage)), adapters.Tag{})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, adapters.Int(res.Rows[0][0]))
			}
			return out
		}

		// A run that records its publication drops its lists.
		const done = "20240105T060708Z-d0e1f2"
		st := publish(done)
		// On the coordinator, the stage names itself too.
		if got, want := listed(done), []string{st.Relation.Name, st.Relation.Name, st.Relation.Name, st.Relation.Name}; !slices.Equal(got, want) {
			t.Errorf("before its records, the nodes list %q, want %q", got, want)
		}
		if err := h.A.(adapters.Deferrer).Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.A.ReleaseLeases(ctx, done); err != nil {
			t.Fatal(err)
		}
		if got := lists(); !slices.Equal(got, []int64{0, 0, 0, 0}) {
			t.Errorf("after a run that recorded everything, the nodes keep %v lists, want none", got)
		}

		// One that stops before recording leaves them: without the
		// coordinator's stage, the other nodes name it.
		const stopped = "20240105T060708Z-5709ed"
		st = publish(stopped)
		if err := h.A.ReleaseLeases(ctx, stopped); err != nil {
			t.Fatal(err)
		}
		if _, err := each[0].DB().ExecContext(ctx, "DROP TABLE "+st.Relation.Quote(d)); err != nil {
			t.Fatal(err)
		}
		if got, want := listed(stopped), []string{st.Relation.Name, st.Relation.Name, st.Relation.Name, st.Relation.Name}; !slices.Equal(got, want) {
			t.Errorf("after a run that stopped before recording, the nodes list %q, want %q", got, want)
		}
		if got := lists(); !slices.Equal(got, []int64{1, 1, 1, 1}) {
			t.Errorf("after a run that stopped before recording, the nodes keep %v lists, want one each", got)
		}
		// Its stages cleaned, the lists go too.
		if err := h.A.(adapters.StageCleaner).CleanStages(ctx, func(token string) bool { return token == adapters.RunToken(stopped) }); err != nil {
			t.Fatal(err)
		}
		if got := lists(); !slices.Equal(got, []int64{0, 0, 0, 0}) {
			t.Errorf("after cleaning a stopped run's stages, the nodes keep %v lists, want none", got)
		}
	}}})
}

// TestClusterCatchUpOncePerRun publishes 20 days one at a time in one run
// into a table partitioned by month, so that each swap reads, on the
// replica that swaps, which rows of the month lie outside its day. That
// replica must first apply what the others wrote (SYSTEM SYNC REPLICA),
// but only once per run, and again after another replica of its shard
// swapped: system.query_log of every node shows which replica swapped
// each day, and where it synced. Under the sharded layout, shard 2's rows
// go to either of its replicas (load_balancing = random in
// .ci/cluster/users.xml), so the replicas take turns; under the
// replicated layout the coordinator swaps every day and syncs once.
func TestClusterCatchUpOncePerRun(t *testing.T) {
	onEachLayout(t, "Days", clusterCatchUp)
}

func clusterCatchUp(t *testing.T, h *adaptertest.Harness, layout string) {
	h.SetupLedger()
	const days = 20
	var src []adaptertest.Row
	var keys []string
	for i := range days {
		d := adaptertest.Day("2024-01-01").AddDate(0, 0, i).Format("2006-01-02")
		keys = append(keys, d)
		for v := range 4 {
			src = append(src, adaptertest.Row{D: d, V: int64(10*i + v)})
		}
	}
	h.Seed("src", src...)
	// Rows before the first day and after the last keep the month's
	// partition holding rows outside every window.
	h.Seed("edges", adaptertest.Row{D: "2023-12-31", V: 1}, adaptertest.Row{D: "2023-12-31", V: 2},
		adaptertest.Row{D: "2024-01-31", V: 1}, adaptertest.Row{D: "2024-01-31", V: 2})
	m, target := adaptertest.DayModel("m"), h.Rel("t")
	ctx := h.Ctx
	runID := "20240105T060708Z-" + fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	publish := func(from models.Relation, start, end, key string) {
		t.Helper()
		st, err := h.A.Stage(ctx, adapters.StageRequest{Model: m, Target: target, Query: h.SelectFrom(from, start, end),
			Window: adaptertest.Window(start, end), Tag: adapters.Tag{RunID: runID, Model: "m", Partition: key, Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		rec := adaptertest.Record("m", key, 4)
		rec.RunID = runID
		if err := h.A.Publish(ctx, []adapters.Swap{{Stage: st, Records: []adapters.Record{rec}}}); err != nil {
			t.Fatal(err)
		}
		if err := h.A.(adapters.Deferrer).Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	publish(h.Rel("edges"), "2023-12-01", "2024-02-01", "edges")
	for _, d := range keys {
		next := adaptertest.Day(d).AddDate(0, 0, 1).Format("2006-01-02")
		publish(h.Rel("src"), d, next, d)
	}
	want := append(slices.Clone(src), adaptertest.Row{D: "2023-12-31", V: 1}, adaptertest.Row{D: "2023-12-31", V: 2},
		adaptertest.Row{D: "2024-01-31", V: 1}, adaptertest.Row{D: "2024-01-31", V: 2})
	slices.SortFunc(want, func(a, b adaptertest.Row) int { return cmp.Or(strings.Compare(a.D, b.D), cmp.Compare(a.V, b.V)) })
	h.WantRows(target, want...)

	local := target
	if layout == clickhouse.LayoutSharded {
		local = h.Rel("t" + clickhouse.LocalSuffix)
	}
	// Per node and publication: did it swap into the table, and sync it
	// first?
	keys = append([]string{"edges"}, keys...)
	each := nodes(t, h.S)
	swapped := make([]map[string]bool, len(each))
	synced := make([]map[string]bool, len(each))
	for i, n := range each {
		if _, err := n.DB().ExecContext(ctx, "SYSTEM FLUSH LOGS"); err != nil {
			t.Fatal(err)
		}
		res, err := n.Query(ctx, fmt.Sprintf("SELECT query_id, query FROM system.query_log WHERE type = 2 AND query_id LIKE %s",
			h.D().QuoteString("refill-"+runID+"-%")), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		swapped[i], synced[i] = map[string]bool{}, map[string]bool{}
		table := local.Quote(h.D())
		for _, row := range res.Rows {
			id, q := fmt.Sprint(row[0]), fmt.Sprint(row[1])
			for _, d := range keys {
				if !strings.Contains(id, "-m-"+d+"-") {
					continue
				}
				switch {
				case strings.HasPrefix(q, "ALTER TABLE "+table+" "):
					swapped[i][d] = true
				case q == "SYSTEM SYNC REPLICA "+table && strings.Contains(id, "-verify-"):
					synced[i][d] = true
				}
			}
		}
	}
	shards := [][]int{{0, 1, 2, 3}}
	if layout == clickhouse.LayoutSharded {
		shards = [][]int{{0, 1}, {2, 3}}
	}
	turns, syncs := 0, 0
	for s, replicas := range shards {
		last := -1
		for _, d := range keys {
			var on []int
			for _, i := range replicas {
				if swapped[i][d] {
					on = append(on, i)
				}
				if synced[i][d] {
					syncs++
				}
			}
			if len(on) != 1 {
				t.Fatalf("shard %d: %s was swapped on nodes %v, want one", s+1, d, on)
			}
			n := on[0]
			if n != last && !synced[n][d] {
				t.Errorf("shard %d: node %d swapped %s after node %d did, without syncing %s first", s+1, n+1, d, last+1, local)
			}
			if n != last && last >= 0 {
				turns++
			}
			last = n
		}
	}
	// Every replica syncs at its first swap of the run; after that, only
	// when another replica of its shard swapped in between.
	if layout == clickhouse.LayoutReplicated {
		if syncs != 1 {
			t.Errorf("the coordinator synced %s before %d of %d swaps, want the first only", local, syncs, len(keys))
		}
		return
	}
	if syncs >= 2*len(keys) {
		t.Errorf("the replicas synced %s before each of the %d swaps, want only after another replica's", local, 2*len(keys))
	}
	if turns < 2 {
		// load_balancing = random picks among the replicas with the
		// fewest connection errors: after a node was stopped
		// (cmd/refill's failover tests), the other replica of its shard
		// may take every row for a while.
		t.Skipf("the replicas of each shard took turns %d times in %d days (a node stopped in the last minutes is not sent rows): the sync after another replica's swap was not exercised", turns, days)
	}
}

// TestPublishedListDroppedAfterListing: Unrecorded lists the stage
// database's tables, then reads the lists of publications among them. A
// list dropped in between (by its run as it ended with every record
// written, or by a cleanup after the next run recorded what it names) is
// skipped: the oracle found a run failing its plan on it, while another
// run ended at the same moment.
func TestPublishedListDroppedAfterListing(t *testing.T) {
	dsn(t)
	s := schemas(t)
	a := open(t, s, nil)
	ctx := t.Context()
	const gone, kept = "20240105T060708Z-0a0b0c", "20240105T060708Z-0d0e0f"
	stage := adapters.StageName(models.Relation{Schema: s.Default, Name: "t"}, adapters.KindStage, kept, "w1")
	list := a.PublishedList(kept)
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + a.Dialect().QuoteIdent(s.Stage),
		"CREATE TABLE " + list.Quote(a.Dialect()) + " (`stage` String) ENGINE = Log",
		"INSERT INTO " + list.Quote(a.Dialect()) + " SELECT " + a.Dialect().QuoteString(stage),
	} {
		if _, err := a.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	dead := func(string) bool { return true }
	got, err := a.ListedIn(ctx, []string{a.PublishedList(gone).Name, list.Name}, dead)
	if err != nil || !slices.Equal(got, []string{stage}) {
		t.Errorf("reading a list dropped after it was listed, and one that is there: %v, %v; want [%s]", got, err, stage)
	}
}

// TestClusterLeasesAcrossNodes: two runs whose coordinators are different
// nodes (of different shards) see one ledger: a lease one takes holds
// off the other, a release lets it in, and records either writes the
// other reads at once.
func TestClusterLeasesAcrossNodes(t *testing.T) {
	_, name := clusterEnv(t)
	nodeDSNs := strings.Split(os.Getenv("CLICKHOUSE_CLUSTER_NODES"), ",")
	if len(nodeDSNs) < 3 {
		t.Fatalf("CLICKHOUSE_CLUSTER_NODES lists %d nodes: the cluster tests need every node of .ci/cluster's 2 x 2 cluster", len(nodeDSNs))
	}
	s := adaptertest.Schemas{Default: "cl_" + fmt.Sprint(os.Getpid()), Ledger: fmt.Sprintf("cl_ledger_%d", os.Getpid()), Stage: fmt.Sprintf("cl_stage_%d", os.Getpid())}
	a := openCluster(t, s, clickhouse.LayoutSharded, clickhouse.Config{})
	b, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: nodeDSNs[2], Cluster: name, Layout: clickhouse.LayoutSharded,
		Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.SetupLedger(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	lease := func(run string, at time.Time) adapters.Lease {
		return adapters.Lease{Table: "s.t", RunID: run, Host: "h", PID: 1, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)}
	}
	if err := a.AcquireLease(t.Context(), lease("r1", now)); err != nil {
		t.Fatal(err)
	}
	var held *adapters.LeaseHeldError
	if err := b.AcquireLease(t.Context(), lease("r2", now.Add(time.Second))); !errors.As(err, &held) || held.Held.RunID != "r1" {
		t.Errorf("a run through node 3 took the lease a run through node 1 holds: %v", err)
	}
	if err := a.ReleaseLeases(t.Context(), "r1"); err != nil {
		t.Fatal(err)
	}
	if err := b.AcquireLease(t.Context(), lease("r2", now.Add(2*time.Second))); err != nil {
		t.Errorf("after the release through node 1, node 3's run: %v", err)
	}
	rec := adaptertest.Record("m", "2024-01-01", 7)
	if err := b.RecordPartitions(t.Context(), []adapters.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Partitions(t.Context(), []string{"m"}); err != nil || len(got) != 1 || got[0].Rows != 7 {
		t.Errorf("node 1 reads what node 3 recorded as %v, %v", got, err)
	}
}

// TestClusterOpenRefuses: a cluster the server does not define, an
// unknown layout, and a ledger made for one server are refused with what
// to do.
func TestClusterOpenRefuses(t *testing.T) {
	dsn, name := clusterEnv(t)
	for _, c := range []struct {
		cfg  clickhouse.Config
		want string
	}{
		{clickhouse.Config{Cluster: "nope"}, `the server has no cluster "nope" in its remote_servers (it has: `},
		{clickhouse.Config{Cluster: name, Layout: "striped"}, `unknown layout "striped": want replicated or sharded`},
	} {
		c.cfg.DSN = dsn
		if a, err := clickhouse.Open(t.Context(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%+v) = %v, want an error containing %q", c.cfg.Cluster+" "+c.cfg.Layout, err, c.want)
			if a != nil {
				a.Close()
			}
		}
	}
	s := adaptertest.Schemas{Default: fmt.Sprintf("co_%d", os.Getpid()), Ledger: fmt.Sprintf("co_ledger_%d", os.Getpid()), Stage: fmt.Sprintf("co_stage_%d", os.Getpid())}
	single, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: dsn, LedgerSchema: s.Ledger})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	if err := single.SetupLedger(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { single.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+s.Ledger) })
	a := openCluster(t, s, clickhouse.LayoutReplicated, clickhouse.Config{})
	if err := a.SetupLedger(t.Context()); err == nil || !strings.Contains(err.Error(), "made for one server, not replicated on cluster") {
		t.Errorf("SetupLedger on a one-server ledger: %v", err)
	}
}
