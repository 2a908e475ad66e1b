package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// clickhouseShop copies the shop with every schema renamed to p_<schema>
// (p unique per test), so that tests sharing a ClickHouse server do not
// meet, and returns the folder and the prefix.
func clickhouseShop(t *testing.T) (string, string) {
	adaptertest.ClickHouseServer.Env(t)
	dir, prefix := prefixedShop(t)
	dropClickHouseDatabases(t, prefix+"raw", prefix+"staging", prefix+"marts")
	return dir, prefix
}

// dropClickHouseDatabases drops databases dbs from the ClickHouse server
// when t ends, through an adapter opened now (skipping t unless the
// environment names the server) and closed after.
func dropClickHouseDatabases(t *testing.T, dbs ...string) {
	t.Helper()
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	t.Cleanup(func() {
		for _, db := range dbs {
			if _, err := ch.DB().Exec("DROP DATABASE IF EXISTS `" + db + "`"); err != nil {
				t.Logf("dropping %s: %v", db, err)
			}
		}
	})
}

// prefixedShop copies the shop with every schema renamed to p_<schema>
// (p unique per call) and returns the folder and the prefix.
func prefixedShop(t *testing.T) (string, string) {
	b := make([]byte, 3)
	rand.Read(b)
	prefix := "t" + hex.EncodeToString(b) + "_"
	dir := shop(t, nil)
	for _, sub := range []string{"models/staging", "models/marts", "seeds/raw"} {
		parent, base := filepath.Split(sub)
		if err := os.Rename(filepath.Join(dir, sub), filepath.Join(dir, parent, prefix+base)); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(filepath.Join(dir, "models"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		s := strings.NewReplacer(`ref("staging.`, `ref("`+prefix+`staging.`, `source("raw.`, `source("`+prefix+`raw.`,
			"staging.orders:", prefix+"staging.orders:", "raw.orders:", prefix+"raw.orders:").Replace(string(b))
		return os.WriteFile(path, []byte(s), 0o644)
	})
	return dir, prefix
}

// normalized reads a table's rows as sorted text, rounding floats, so two
// engines' results compare.
func normalized(rows [][]any) []string {
	var out []string
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			switch v := adapters.Normalize(v).(type) {
			case float64:
				parts[i] = fmt.Sprintf("%.4f", math.Round(v*1e4)/1e4)
			case int64:
				parts[i] = fmt.Sprintf("%.4f", float64(v))
			case time.Time:
				parts[i] = v.UTC().Format("2006-01-02")
			case nil:
				parts[i] = "NULL"
			default:
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, " | "))
	}
	sort.Strings(out)
	return out
}

// TestClickHouseMatchesDuckDB backfills the example project into ClickHouse
// and into DuckDB and compares every table.
func TestClickHouseMatchesDuckDB(t *testing.T) {
	dir, prefix := clickhouseShop(t)
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	matchesDuckDB(t, dir, prefix, "clickhouse", ch)
}

// shopTables are the example project's tables and their columns.
var shopTables = map[string]string{
	"staging.orders":          "order_id, customer_id, order_date, amount, status, region",
	"marts.daily_revenue":     "order_date, orders, revenue, returned",
	"marts.monthly_revenue":   "month_start, orders, revenue, days",
	"marts.rolling_revenue":   "day, revenue_7d, orders_7d",
	"marts.revenue_by_region": "region, orders, revenue",
	"marts.customer_lifetime": "customer_id, name, orders, revenue, first_order",
}

// matchesDuckDB backfills the shop in dir (its schemas prefixed with
// prefix) into DuckDB and into target, a ClickHouse target ch reads, and
// compares every table; then a rerun on target has nothing to do.
func matchesDuckDB(t *testing.T, dir, prefix, target string, ch *clickhouse.Adapter) {
	t.Helper()
	for _, target := range []string{"dev", target} {
		mustRefill(t, dir, "seed", "--target", target)
		r := mustRefill(t, dir, "run", "--target", target, "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16", "--output", "json")
		_, out := ranPartitions(t, r.stdout)
		if out.Failed != 0 || out.Succeeded == 0 {
			t.Fatalf("%s: %+v", target, out)
		}
	}
	for table, cols := range shopTables {
		schema, name, _ := strings.Cut(table, ".")
		duck := normalized(queryRows(t, dir, fmt.Sprintf("SELECT %s FROM %s%s.%s", cols, prefix, schema, name)))
		res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT %s FROM `%s%s`.`%s`", cols, prefix, schema, name), adapters.Tag{})
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		click := normalized(res.Rows)
		if len(duck) == 0 {
			t.Errorf("%s is empty", table)
		}
		if strings.Join(duck, "\n") != strings.Join(click, "\n") {
			t.Errorf("%s differs: DuckDB has %d rows, ClickHouse %d; first DuckDB row %q, first ClickHouse row %q",
				table, len(duck), len(click), first(duck), first(click))
		}
	}
	// The ledger agrees too, and a rerun has nothing to do.
	if r := mustRefill(t, dir, "plan", "--target", target, "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16"); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("ClickHouse rerun plan:\n%s", r.stdout)
	}
	st := mustRefill(t, dir, "status", "--target", target, "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16", "--output", "json")
	if strings.Contains(st.stdout, `"state": "missing"`) || strings.Contains(st.stdout, `"state": "stale"`) {
		t.Errorf("ClickHouse status after the run:\n%.2000s", st.stdout)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestClickHouseRefusesPublishTogether(t *testing.T) {
	dir, _ := clickhouseShop(t)
	pl := mustRefill(t, dir, "plan", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-02", now)
	if !strings.Contains(pl.stdout, "--publish together: not supported on clickhouse") || !strings.Contains(pl.stdout, "REPLACE PARTITION") {
		t.Errorf("the plan does not state ClickHouse's guarantee and limits:\n%s", pl.stdout)
	}
	r := refill(t, dir, "run", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-02", now, "--publish", "together")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--publish together is not supported on clickhouse") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
	r = refill(t, dir, "run", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-02", now, "--review", "--yes")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--review stages every partition and publishes them together") {
		t.Errorf("--review: exit %d:\n%s", r.code, r.stderr)
	}
}

// TestClickHouseLeaseHeld checks that a run refuses a table another run
// holds, naming the holder, and exits 3 even after --wait runs out.
func TestClickHouseLeaseHeld(t *testing.T) {
	dir, prefix := clickhouseShop(t)
	mustRefill(t, dir, "seed", "--target", "clickhouse")
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	ctx := context.Background()
	if err := ch.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	held := adapters.Lease{Table: prefix + "staging.orders", RunID: "other-run", Host: "elsewhere", PID: 4242,
		AcquiredAt: now.Add(-time.Minute), HeartbeatAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := ch.AcquireLease(ctx, held); err != nil {
		t.Fatal(err)
	}
	defer ch.ReleaseLeases(ctx, "other-run")
	args := []string{"run", prefix + "staging.orders", "--target", "clickhouse", "--partitions", "2024-01-02", "--now=2024-05-01"}
	r := refill(t, dir, args...)
	if r.code != exitLocked || !strings.Contains(r.stderr, "is being written by run other-run (pid 4242 on elsewhere, started") ||
		!strings.Contains(r.stderr, "Nothing was run") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	start := time.Now()
	r = refill(t, dir, append(args, "--wait", "3s")...)
	if r.code != exitLocked || time.Since(start) < 3*time.Second {
		t.Errorf("--wait 3s: exit %d after %s", r.code, time.Since(start))
	}
	if !strings.Contains(r.stdout, "wait") {
		t.Errorf("the waiting run does not say it waits:\n%s", r.stdout)
	}
	ch.ReleaseLeases(ctx, "other-run")
	mustRefill(t, dir, args...)
}

// TestClickHouseKilledBeforeRecording kills a ClickHouse run just after
// its first publications, before their records (written in batches after
// the swaps) reach the ledger. The next commands see those partitions as
// pending, from the stages the run kept, never as done with the data they
// held before; a plain run then completes everything.
func TestClickHouseKilledBeforeRecording(t *testing.T) {
	adaptertest.ClickHouseServer.Env(t)
	bin := binary(t)
	b := make([]byte, 3)
	rand.Read(b)
	prefix := "k" + hex.EncodeToString(b) + "_"
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\"}\nvars: {k: 1}\n")
	write(t, dir, "models/"+prefix+"mart/m.sql", `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT e.d AS d, e.i AS i, e.v * {{ var("k") }} AS w
FROM {{ source("`+prefix+`src.events") }} AS e
WHERE e.d >= {{ start }} AND e.d < {{ end }}`)
	write(t, dir, "seeds/"+prefix+"src/events.csv", crashEvents(4))
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	t.Cleanup(func() {
		for _, db := range []string{"src", "mart"} {
			ch.DB().Exec("DROP DATABASE IF EXISTS `" + prefix + db + "`")
		}
	})
	sums := func(col string) map[string]int64 {
		res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT toString(d), sum(%s) FROM `%s` GROUP BY d", col, prefix+map[string]string{"v": "src`.`events", "w": "mart`.`m"}[col]), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, r := range res.Rows {
			out[fmt.Sprint(r[0])] = adapters.Int(adapters.Normalize(r[1]))
		}
		return out
	}
	statesFor := func(k int) map[string]string {
		return partitionStates(t, dir, prefix+"mart.m", crashNow, "--var", fmt.Sprintf("k=%d", k))
	}

	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", crashNow)
	base := sums("v")
	p := startRun(t, bin, "--project", dir, "run", crashNow, "--var", "k=2", "--concurrency", "1")
	waitFor(t, p.lines, "ok", 2)
	p.signal(syscall.SIGKILL)
	p.wait()
	out := p.out
	// Its lease would expire within a minute; the test does not wait.
	leases, err := ch.Leases(context.Background())
	if err != nil || len(leases) == 0 {
		t.Fatalf("the killed run holds no lease: %v, %v", leases, err)
	}
	for _, l := range leases {
		if strings.HasPrefix(l.Table, prefix) {
			ch.ReleaseLeases(context.Background(), l.RunID)
		}
	}

	// A project of another ledger on the same server, staging in the same
	// database, runs now: the killed run's stages are this ledger's
	// evidence, not that one's to drop (as its housekeeping did when a
	// run without a live lease counted as dead, whatever its ledger).
	other := t.TempDir()
	write(t, other, "refill.yml", "targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", ledger_schema: "+prefix+"ledger2}\n")
	write(t, other, "models/"+prefix+"other/n.sql", "SELECT 1 AS x")
	t.Cleanup(func() {
		for _, db := range []string{"other", "ledger2"} {
			ch.DB().Exec("DROP DATABASE IF EXISTS `" + prefix + db + "`")
		}
	})
	stages := func() int64 {
		t.Helper()
		res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT count() FROM system.tables WHERE database = 'refill_stage' AND startsWith(name, '%s')",
			adapters.StagePrefix(models.Relation{Schema: prefix + "mart", Name: "m"})), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		return adapters.Int(adapters.Normalize(res.Rows[0][0]))
	}
	kept := stages()
	if kept == 0 {
		t.Fatalf("the killed run kept no stage\n%s", out)
	}
	mustRefill(t, other, "run", crashNow)
	if n := stages(); n != kept {
		t.Fatalf("a run of another ledger dropped %d of the killed run's %d stages", kept-n, kept)
	}

	got, st := sums("w"), statesFor(2)
	fresh, pending := 0, 0
	for d, b := range base {
		switch {
		case got[d] == 2*b:
			fresh++
			if st[d] == "pending" {
				pending++
			} else if st[d] != "done" {
				t.Errorf("%s holds the new data, but status says %s", d, st[d])
			}
		case got[d] == b:
			// Pending is right too when the kill came between a stage and
			// its swap: the stage is left, and the next run cannot tell it
			// from one swapped in without its records, so it redoes it.
			if st[d] == "done" {
				t.Errorf("%s holds the old data, but status says %s", d, st[d])
			}
		default:
			t.Fatalf("%s sums to %d: neither version (%d, %d)", d, got[d], b, 2*b)
		}
	}
	if fresh < 2 || pending == 0 {
		t.Errorf("after the kill %d days hold new data, %d of them pending; want at least 2, some pending (their records unwritten)\n%s", fresh, pending, out)
	}
	t.Logf("killed after %d publications, %d of them not recorded", fresh, pending)

	// The next run records them (pending) before it plans, and redoes
	// them with the rest.
	mustRefill(t, dir, "run", crashNow, "--var", "k=2")
	for d, w := range sums("w") {
		if w != 2*base[d] {
			t.Errorf("after the rerun %s sums to %d, want %d", d, w, 2*base[d])
		}
	}
	for d, s := range statesFor(2) {
		if s != "done" {
			t.Errorf("after the rerun %s is %s", d, s)
		}
	}
	res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT name FROM system.tables WHERE startsWith(name, '%s')", adapters.StagePrefix(models.Relation{Schema: prefix + "mart", Name: "m"})), adapters.Tag{})
	if err != nil || len(res.Rows) != 0 {
		t.Errorf("stages left after the rerun: %v (%v)", res, err)
	}

	// Killed again in a forced rerun of the same version, its leases left
	// to expire: a run a day later plans while the killed run looks alive,
	// its stages no evidence yet, so the days it published without
	// recording look done. Once that run holds the tables it plans again
	// and redoes them with the new day; had it not, it would exit 0 and
	// leave them pending (found by the oracle, seed 1796436526001680588).
	killHolding(t, ch, bin, dir, prefix, crashNow)
	const dayAfter = "--now=2024-03-21"
	r := mustRefill(t, dir, "run", dayAfter, "--var", "k=2", "--wait", "60s")
	// (On a loaded machine the leases may expire before it asks for them:
	// then it planned after, and must have built the same.)
	if strings.Contains(r.stdout, "waiting for") && !strings.Contains(r.stdout, "planned again") {
		t.Errorf("the run that waited does not say it planned again:\n%s", r.stdout)
	}
	for d, s := range partitionStates(t, dir, prefix+"mart.m", dayAfter, "--var", "k=2") {
		if s != "done" {
			t.Errorf("after the run that waited %s is %s\n%s", d, s, r.stdout)
		}
	}
	for d, w := range sums("w") {
		if w != 2*base[d] {
			t.Errorf("after the run that waited %s sums to %d, want %d", d, w, 2*base[d])
		}
	}

	// Killed once more, a run of the same day finds nothing to build
	// while the killed run looks alive. It takes no lease, but must not
	// say all is built before that run's leases expire: it refuses
	// (exit 3) without --wait, and with it waits, plans again and redoes
	// what the killed run published without recording it. Had it exited 0,
	// status would say pending once those leases expired.
	killed := killHolding(t, ch, bin, dir, prefix, dayAfter)
	if r := refill(t, dir, "run", dayAfter, "--var", "k=2"); r.code != exitLocked || !strings.Contains(r.stderr, "Nothing was run") {
		t.Errorf("with nothing to build while the killed run holds its tables: exit %d, want %d\n%s%s", r.code, exitLocked, r.stdout, r.stderr)
	}
	r = mustRefill(t, dir, "run", dayAfter, "--var", "k=2", "--wait", "60s")
	ch.ReleaseLeases(context.Background(), killed) // expired, for status
	for d, s := range partitionStates(t, dir, prefix+"mart.m", dayAfter, "--var", "k=2") {
		if s != "done" {
			t.Errorf("after the run with nothing to build waited, %s is %s\n%s", d, s, r.stdout)
		}
	}
}

// killHolding kills a forced rerun of the ClickHouse project in dir after
// its first publications and leaves its leases 20 s to live; it returns
// the killed run's ID.
func killHolding(t *testing.T, ch *clickhouse.Adapter, bin, dir, prefix, now string) string {
	t.Helper()
	p := startRun(t, bin, "--project", dir, "run", now, "--var", "k=2", "--mode", "all", "--concurrency", "1")
	timeout := time.After(90 * time.Second)
	for n := 2; n > 0; {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("the forced rerun ended (exit %d) before 2 partitions were published:\n%s", p.wait(), p.out.String())
			}
			if strings.HasPrefix(l, "ok") {
				n--
			}
		case <-timeout:
			t.Fatalf("the forced rerun published fewer than 2 partitions in 90 s:\n%s", p.out.String())
		}
	}
	p.signal(syscall.SIGKILL)
	p.wait()
	leases, err := ch.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	beat, killed := time.Now(), ""
	for _, l := range leases {
		// The earlier killed runs' leases have expired: only this one's
		// lives.
		if strings.HasPrefix(l.Table, prefix) && l.ExpiresAt.After(beat) {
			if err := ch.RenewLeases(context.Background(), l.RunID, beat, beat.Add(20*time.Second)); err != nil {
				t.Fatal(err)
			}
			killed = l.RunID
		}
	}
	if killed == "" {
		t.Fatal("the killed run holds no lease")
	}
	return killed
}
