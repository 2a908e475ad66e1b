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
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
)

// clickhouseShop copies the shop with every schema renamed to p_<schema>
// (p unique per test), so that tests sharing a ClickHouse server do not
// meet, and returns the folder and the prefix.
func clickhouseShop(t *testing.T) (string, string) {
	if os.Getenv("CLICKHOUSE_DSN") == "" {
		t.Skip("CLICKHOUSE_DSN is not set: start a server with .ci/clickhouse/start (see README)")
	}
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
	t.Cleanup(func() {
		a, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: os.Getenv("CLICKHOUSE_DSN")})
		if err != nil {
			return
		}
		defer a.Close()
		for _, db := range []string{"raw", "staging", "marts"} {
			a.DB().Exec("DROP DATABASE IF EXISTS `" + prefix + db + "`")
		}
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
	for _, target := range []string{"dev", "clickhouse"} {
		mustRefill(t, dir, "seed", "--target", target)
		r := mustRefill(t, dir, "run", "--target", target, "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16", "--output", "json")
		_, out := ranPartitions(t, r.stdout)
		if out.Failed != 0 || out.Succeeded == 0 {
			t.Fatalf("%s: %+v", target, out)
		}
	}
	ch, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: os.Getenv("CLICKHOUSE_DSN")})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	tables := map[string]string{
		"staging.orders":          "order_id, customer_id, order_date, amount, status, region",
		"marts.daily_revenue":     "order_date, orders, revenue, returned",
		"marts.monthly_revenue":   "month_start, orders, revenue, days",
		"marts.rolling_revenue":   "day, revenue_7d, orders_7d",
		"marts.revenue_by_region": "region, orders, revenue",
		"marts.customer_lifetime": "customer_id, name, orders, revenue, first_order",
	}
	for table, cols := range tables {
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
	if r := mustRefill(t, dir, "plan", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16"); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("ClickHouse rerun plan:\n%s", r.stdout)
	}
	st := mustRefill(t, dir, "status", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-02-15", "--now=2024-02-16", "--output", "json")
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
	plan := mustRefill(t, dir, "plan", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-02", now)
	if !strings.Contains(plan.stdout, "--publish together: not supported on clickhouse") || !strings.Contains(plan.stdout, "REPLACE PARTITION") {
		t.Errorf("the plan does not state ClickHouse's guarantee and limits:\n%s", plan.stdout)
	}
	r := refill(t, dir, "run", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-02", now, "--publish", "together")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--publish together is not supported on clickhouse") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
}

// TestClickHouseLeaseHeld checks that a run refuses a table another run
// holds, naming the holder, and exits 3 even after --wait runs out.
func TestClickHouseLeaseHeld(t *testing.T) {
	dir, prefix := clickhouseShop(t)
	mustRefill(t, dir, "seed", "--target", "clickhouse")
	ch, err := clickhouse.Open(context.Background(), clickhouse.Config{DSN: os.Getenv("CLICKHOUSE_DSN")})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
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
