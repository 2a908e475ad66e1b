package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// The ClickHouse cluster tests run against .ci/cluster/start's 2 x 2
// cluster: CLICKHOUSE_CLUSTER_DSN (its first node), CLICKHOUSE_CLUSTER,
// CLICKHOUSE_CLUSTER_NODES (every node, shard by shard) and, for the
// failover test, CLICKHOUSE_CLUSTER_DIR.

// clusterEnv skips t unless a cluster is configured, and returns its
// variables' values: the first node's DSN, the cluster's name and every
// node's DSN, comma-separated.
func clusterEnv(t *testing.T) []string {
	t.Helper()
	return adaptertest.ClusterServer.Env(t)
}

// clusterDir skips t unless a cluster is configured with the folder
// .ci/cluster/start made (CLICKHOUSE_CLUSTER_DIR), and returns the folder.
func clusterDir(t *testing.T) string {
	t.Helper()
	s := adaptertest.ClusterServer
	s.Vars = append(slices.Clip(s.Vars), "CLICKHOUSE_CLUSTER_DIR")
	return s.Env(t)[len(s.Vars)-1]
}

// openCluster opens an adapter on the cluster (layout does not matter to
// reading), closed when t ends.
func openCluster(t *testing.T, layout string) *clickhouse.Adapter {
	t.Helper()
	env := clusterEnv(t)
	a, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: env[0], Cluster: env[1], Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// clusterNodes opens a one-server adapter on every node of the cluster,
// in remote_servers order: node i is in shard i/2 + 1.
func clusterNodes(t *testing.T) []*clickhouse.Adapter {
	t.Helper()
	var out []*clickhouse.Adapter
	for _, dsn := range strings.Split(clusterEnv(t)[2], ",") {
		a, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		out = append(out, a)
	}
	if len(out) != 4 {
		t.Fatalf("CLICKHOUSE_CLUSTER_NODES lists %d nodes; the tests expect .ci/cluster's 2 x 2 cluster", len(out))
	}
	return out
}

// dropOnCluster drops databases from every node when t ends, through an
// adapter opened now and closed after.
func dropOnCluster(t *testing.T, dbs ...string) {
	t.Helper()
	cluster := clusterEnv(t)[1]
	a := adaptertest.ClusterServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	t.Cleanup(func() {
		for _, db := range dbs {
			if _, err := a.DB().Exec("DROP DATABASE IF EXISTS `" + db + "` ON CLUSTER `" + cluster + "`"); err != nil {
				t.Errorf("dropping %s: %v", db, err)
			}
		}
	})
}

// nodeRows reads q on node n as normalized text.
func nodeRows(t *testing.T, n *clickhouse.Adapter, q string) []string {
	t.Helper()
	res, err := n.Query(context.Background(), q, adapters.Tag{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return normalized(res.Rows)
}

// syncNode waits until node n's replica of table has caught up.
func syncNode(t *testing.T, n *clickhouse.Adapter, table string) {
	t.Helper()
	if _, err := n.DB().Exec("SYSTEM SYNC REPLICA " + table); err != nil {
		t.Fatalf("SYSTEM SYNC REPLICA %s: %v", table, err)
	}
}

// checkReplicas reads a table (database.name, with columns cols) on every
// node, and what the coordinator ch reads of it: under the replicated
// layout every node holds all of it; under the sharded layout both
// replicas of a shard hold the same rows of <name>_local, and the shards
// together all of it.
func checkReplicas(t *testing.T, ch *clickhouse.Adapter, nodes []*clickhouse.Adapter, layout, database, name, cols string) {
	t.Helper()
	table := "`" + database + "`.`" + name + "`"
	all := nodeRows(t, ch, "SELECT "+cols+" FROM "+table)
	local := table
	if layout == clickhouse.LayoutSharded {
		local = "`" + database + "`.`" + name + clickhouse.LocalSuffix + "`"
	}
	var union []string
	for i, n := range nodes {
		got := nodeRows(t, n, "SELECT "+cols+" FROM "+local)
		switch {
		case layout == clickhouse.LayoutReplicated && strings.Join(got, "\n") != strings.Join(all, "\n"):
			t.Errorf("node %d holds %d rows of %s, the cluster %d", i+1, len(got), table, len(all))
		case layout == clickhouse.LayoutSharded && i%2 == 1:
			if other := nodeRows(t, nodes[i-1], "SELECT "+cols+" FROM "+local); strings.Join(got, "\n") != strings.Join(other, "\n") {
				t.Errorf("the replicas of shard %d differ in %s: %d rows and %d", i/2+1, local, len(other), len(got))
			}
		case layout == clickhouse.LayoutSharded:
			union = append(union, got...)
		}
	}
	if layout == clickhouse.LayoutSharded {
		sort.Strings(union)
		if strings.Join(union, "\n") != strings.Join(all, "\n") {
			t.Errorf("the shards hold %d rows of %s, the Distributed table reads %d", len(union), table, len(all))
		}
	}
}

// checkLedgers asserts that every node reads the same ledger records of
// models as the coordinator.
func checkLedgers(t *testing.T, ch *clickhouse.Adapter, nodes []*clickhouse.Adapter, names ...string) {
	t.Helper()
	text := func(a *clickhouse.Adapter) string {
		recs, err := a.Partitions(context.Background(), names)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range recs {
			fmt.Fprintf(&b, "%s %s %s %s %d\n", r.Model, r.Partition, r.State, r.Fingerprint, r.Rows)
		}
		return b.String()
	}
	want := text(ch)
	if want == "" {
		t.Errorf("the ledger holds no records of %v", names)
	}
	for i, n := range nodes {
		syncNode(t, n, "refill.partitions")
		if got := text(n); got != want {
			t.Errorf("node %d reads the ledger as\n%s\nthe coordinator as\n%s", i+1, got, want)
		}
	}
}

// TestClusterMatchesDuckDB backfills the example project into the cluster,
// in each layout, and into DuckDB: every table is equal, every replica
// holds what it should, every node reads the same ledger, a rerun has
// nothing to do, and plan states the cluster's guarantee.
func TestClusterMatchesDuckDB(t *testing.T) {
	env := clusterEnv(t)
	for _, layout := range []string{clickhouse.LayoutSharded, clickhouse.LayoutReplicated} {
		t.Run(layout, func(t *testing.T) {
			dir, prefix := prefixedShop(t)
			dropOnCluster(t, prefix+"raw", prefix+"staging", prefix+"marts")
			if layout != clickhouse.LayoutSharded {
				yml, _ := os.ReadFile(filepath.Join(dir, "refill.yml"))
				write(t, dir, "refill.yml", strings.Replace(string(yml), "layout: sharded", "layout: "+layout, 1))
			}
			ch := openCluster(t, layout)
			matchesDuckDB(t, dir, prefix, "cluster", ch)
			nodes := clusterNodes(t)
			for table, cols := range shopTables {
				schema, name, _ := strings.Cut(table, ".")
				checkReplicas(t, ch, nodes, layout, prefix+schema, name, cols)
			}
			checkLedgers(t, ch, nodes, prefix+"staging.orders", prefix+"marts.daily_revenue", prefix+"marts.customer_lifetime")
			pl := mustRefill(t, dir, "plan", "--target", "cluster", "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16")
			if !strings.Contains(pl.stdout, "guarantee: on cluster "+env[1]) {
				t.Errorf("plan does not state the cluster's guarantee:\n%s", pl.stdout)
			}
		})
	}
}

// clusterRowsPerDay are the source's rows a day in clusterCrashProject:
// enough that both shards hold rows of every day (sharded at random).
const clusterRowsPerDay = 20

// clusterCrashProject writes a project with one daily model over 65 days
// of a seeded source (clusterRowsPerDay rows a day) on the cluster, sharded at random, and
// backfills it at k = 1. It returns the folder and the model's database.
func clusterCrashProject(t *testing.T) (string, string) {
	b := make([]byte, 3)
	rand.Read(b)
	prefix := "c" + hex.EncodeToString(b) + "_"
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev:\n    adapter: clickhouse\n    dsn: ${CLICKHOUSE_CLUSTER_DSN}\n    cluster: ${CLICKHOUSE_CLUSTER}\n"+
		"    layout: sharded\nvars: {k: 1}\n")
	write(t, dir, "models/"+prefix+"mart/m.sql", `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT e.d AS d, e.i AS i, e.v * {{ var("k") }} AS w
FROM {{ source("`+prefix+`src.events") }} AS e
WHERE e.d >= {{ start }} AND e.d < {{ end }}`)
	write(t, dir, "seeds/"+prefix+"src/events.csv", crashEvents(clusterRowsPerDay))
	dropOnCluster(t, prefix+"src", prefix+"mart")
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", crashNow)
	return dir, prefix + "mart"
}

// shardVersions reads each shard's rows of the model (on its first
// replica, once caught up) and returns, per "day shard", the versions k
// its rows hold (w = v * k), and each day's row count over the shards.
func shardVersions(t *testing.T, nodes []*clickhouse.Adapter, db string) (map[string][]int64, map[string]int64) {
	t.Helper()
	versions, counts := map[string][]int64{}, map[string]int64{}
	for s := 0; s < 2; s++ {
		n := nodes[2*s]
		syncNode(t, n, "`"+db+"`.`m_local`")
		// v is day*100 + i + 1 (crashEvents), so k = w / v.
		res, err := n.Query(context.Background(), "SELECT toString(d), toInt64(intDiv(w, (toRelativeDayNum(d) - toRelativeDayNum(toDate('2024-01-01'))) * 100 + i + 1)) AS k, count() "+
			"FROM `"+db+"`.`m_local` GROUP BY d, k", adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows {
			key := fmt.Sprintf("%s shard %d", r[0], s+1)
			versions[key] = append(versions[key], adapters.Int(r[1]))
			counts[fmt.Sprint(r[0])] += adapters.Int(r[2])
		}
	}
	return versions, counts
}

// checkConverged asserts that after a complete run at k every day holds
// its rows at version k on the shards, every replica agrees, every
// partition is done, every node reads the same ledger, and no stage is
// left on any node.
func checkConverged(t *testing.T, dir, db string, k int64) {
	t.Helper()
	nodes := clusterNodes(t)
	versions, counts := shardVersions(t, nodes, db)
	for key, ks := range versions {
		if len(ks) != 1 || ks[0] != k {
			t.Errorf("%s holds rows of versions %v, want only %d", key, ks, k)
		}
	}
	if len(counts) != crashDays {
		t.Errorf("%d days hold rows, want %d", len(counts), crashDays)
	}
	for d, c := range counts {
		if c != clusterRowsPerDay {
			t.Errorf("%s holds %d rows over the shards, want %d", d, c, clusterRowsPerDay)
		}
	}
	for _, n := range nodes {
		syncNode(t, n, "`"+db+"`.`m_local`") // a replica that was down catches up
	}
	ch := openCluster(t, clickhouse.LayoutSharded)
	checkReplicas(t, ch, nodes, clickhouse.LayoutSharded, db, "m", "d, i, w")
	checkLedgers(t, ch, nodes, db+".m")
	for d, s := range partitionStates(t, dir, db+".m", crashNow, "--var", fmt.Sprintf("k=%d", k)) {
		if s != "done" {
			t.Errorf("%s is %s", d, s)
		}
	}
	for i, n := range nodes {
		if left := nodeRows(t, n, "SELECT name FROM system.tables WHERE database = 'refill_stage' AND startsWith(name, '"+db+"__')"); len(left) > 0 {
			t.Errorf("node %d keeps staging tables: %v", i+1, left)
		}
	}
}

// TestClusterKilledMidRun kills a run on the sharded cluster while it
// publishes (SIGKILL, so within a publication's statements: routing a
// stage, one shard's swap or the next's). Each shard's partitions are then
// entirely old or new; a day whose shards disagree, or that is new without
// its records, is not done in the ledger. The next run completes
// everything: every day holds the new rows once, on both replicas.
func TestClusterKilledMidRun(t *testing.T) {
	env := clusterEnv(t)
	bin := binary(t)
	dir, db := clusterCrashProject(t)
	// --verbose prints each statement before it runs, after a line naming
	// the node it runs on. Shard 2's swap begins by syncing the replica
	// it swaps on, when another replica swapped since it last did, and
	// then reads its partitions: the kill comes as the first of those is
	// printed on the fourth day. The shards swap at once, so shard 1 may
	// have swapped or not, and shard 2 most likely has not: the fourth
	// day is old, or new on one shard and old on the other. (Which shard
	// fails first is swept deterministically by the adapter's
	// TestClusterPublishFaults.) The shards' other replicas catch up
	// after both swaps, before the day is ok.
	p := startRun(t, bin, "--project", dir, "run", crashNow, "--var", "k=2", "--concurrency", "1", "--verbose")
	lines, out := p.lines, p.out
	waitFor(t, lines, "ok", 3)
	shard2 := map[string]bool{}
	for _, dsn := range strings.Split(env[2], ",")[2:] {
		opts, err := clickhouse.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		shard2["-- on "+opts.Addr[0]] = true
	}
	sync, parts := "SYSTEM SYNC REPLICA `"+db+"`.`m_local`", "SELECT 's' AS kind"
	for on := ""; ; {
		l, ok := <-lines
		if !ok {
			t.Fatalf("the run ended before shard 2's swap:\n%s", out)
		}
		if strings.HasPrefix(l, "-- on ") {
			on = l
		} else if (strings.HasPrefix(l, sync) || strings.HasPrefix(l, parts)) && shard2[on] {
			break
		}
	}
	p.signal(syscall.SIGKILL)
	p.wait()
	ch := openCluster(t, clickhouse.LayoutSharded)
	leases, err := ch.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if strings.HasPrefix(l.Table, db+".") {
			ch.ReleaseLeases(context.Background(), l.RunID) // instead of waiting for it to expire
		}
	}

	versions, _ := shardVersions(t, clusterNodes(t), db)
	states := partitionStates(t, dir, db+".m", crashNow, "--var", "k=2")
	byDay := map[string]map[int64]bool{}
	for key, ks := range versions {
		if len(ks) != 1 {
			t.Errorf("%s is half replaced: it holds rows of versions %v", key, ks)
		}
		day, _, _ := strings.Cut(key, " ")
		if byDay[day] == nil {
			byDay[day] = map[int64]bool{}
		}
		for _, k := range ks {
			byDay[day][k] = true
		}
	}
	fresh, mixed := 0, 0
	for day, ks := range byDay {
		switch {
		case len(ks) > 1:
			mixed++
			if states[day] == "done" {
				t.Errorf("%s holds new rows on one shard and old on the other, but status says done", day)
			}
		case ks[2]:
			fresh++
			if states[day] != "done" && states[day] != "pending" {
				t.Errorf("%s holds the new rows, but status says %s", day, states[day])
			}
		case states[day] == "done":
			t.Errorf("%s holds the old rows, but status says done", day)
		}
	}
	if fresh < 3 || mixed > 1 {
		t.Errorf("after the kill %d days hold the new rows, and %d new rows on one shard, old on the other; want at least 3, and at most 1\n%s", fresh, mixed, out)
	}
	t.Logf("killed after %d days published, %d with their shards disagreeing", fresh, mixed)

	mustRefill(t, dir, "run", crashNow, "--var", "k=2")
	checkConverged(t, dir, db, 2)
}

// TestClusterReplicaStoppedMidRun stops a replica of shard 2 while a run
// publishes, cleanly or by SIGKILL (a crash: its ZooKeeper session
// outlives it, and it serves stale data for a while after it returns),
// and starts it again after the run. Whatever the run did with a replica
// gone (it goes on with the other), the next run completes everything,
// and once the restarted replica has caught up it holds what the other
// does, and reads the same ledger.
func TestClusterReplicaStoppedMidRun(t *testing.T) {
	cdir := clusterDir(t)
	bin := binary(t)
	for _, how := range []string{"stop", "kill"} {
		t.Run(how, func(t *testing.T) {
			dir, db := clusterCrashProject(t)
			start := time.Now()
			node := func(action string) {
				t.Helper()
				if out, err := exec.Command("../../.ci/cluster/node", cdir, "node4", action).CombinedOutput(); err != nil {
					t.Fatalf("node4 %s: %v\n%s", action, err, out)
				}
				t.Logf("node4 %s after %s", action, time.Since(start).Round(time.Millisecond))
			}
			t.Cleanup(func() { exec.Command("../../.ci/cluster/node", cdir, "node4", "start").Run() })
			p := startRun(t, bin, "--project", dir, "run", crashNow, "--var", "k=2", "--concurrency", "1")
			waitFor(t, p.lines, "ok", 2)
			node(how)
			code, out := p.wait(), p.out
			t.Logf("the run with node4 gone mid-way exited %d:\n%.3000s", code, out)
			node("start")
			mustRefill(t, dir, "run", crashNow, "--var", "k=2")
			t.Logf("the next run done after %s", time.Since(start).Round(time.Millisecond))
			checkConverged(t, dir, db, 2)
			t.Logf("converged after %s", time.Since(start).Round(time.Millisecond))
		})
	}
}
