package enginetest

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestClickHouseShop seeds the example project and backfills January 2024
// into ClickHouse with the runner, then checks the marts against the raw
// seed data and that a rerun has nothing to do. The project's databases
// (raw, staging, marts) are fixed names: the test fails if any exists, so
// it never touches data it did not create, and drops them afterwards.
func TestClickHouseShop(t *testing.T) {
	s := schemas(t)
	var log []string
	var mu sync.Mutex
	a := openClickHouse(t, s, func(q string) { mu.Lock(); log = append(log, q); mu.Unlock() })
	defer func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("the last statements:\n%s", strings.Join(log[max(0, len(log)-30):], ";\n"))
		}
	}()
	ctx := t.Context()
	dbs := []string{"raw", "staging", "marts"}
	res, err := a.Query(ctx, "SELECT name FROM system.databases WHERE name IN ('raw', 'staging', 'marts')", adapters.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) > 0 {
		t.Fatalf("the server already has database %v: this test creates raw, staging and marts and drops them afterwards, so it never touches data it did not create; point CLICKHOUSE_DSN at a throwaway server (.ci/clickhouse/start), or drop them if a killed test left them", res.Rows[0][0])
	}
	t.Cleanup(func() {
		for _, db := range dbs {
			a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+db)
		}
	})
	fsys, opts := adaptertest.Shop(t, clickhouse.Engine())
	opts.LookupEnv = func(string) (string, bool) { return "", false }
	p, err := models.Load(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := p.LoadSeeds(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		if err := a.LoadSeed(ctx, seed, seed.Relation); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: s.Default, Vars: p.Vars}}, Target: "clickhouse"}
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-31", Now: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}
	pl, err := r.Plan(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(ctx, pl, runner.RunOptions{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 || sum.Skipped != 0 || sum.Succeeded == 0 {
		for _, pr := range sum.Partitions {
			if pr.Err != nil {
				t.Errorf("%s %s: %v", pr.Model, pr.Partition, pr.Err)
				break
			}
		}
		t.Fatalf("run: %d succeeded, %d failed, %d skipped", sum.Succeeded, sum.Failed, sum.Skipped)
	}
	one := func(q string) float64 {
		t.Helper()
		res, err := a.Query(ctx, q, adapters.Tag{})
		if err != nil || len(res.Rows) != 1 {
			t.Fatalf("%s: %v, %v", q, res, err)
		}
		switch v := res.Rows[0][0].(type) {
		case float64:
			return v
		default:
			return float64(adapters.Int(v))
		}
	}
	check := func() {
		t.Helper()
		const january = "order_date >= toDate('2024-01-01') AND order_date < toDate('2024-02-01')"
		raw := one("SELECT sum(amount) FROM raw.orders WHERE " + january + " AND amount >= 10 AND status <> 'test'")
		for _, q := range []string{
			"SELECT sum(revenue) FROM marts.daily_revenue",
			"SELECT sum(revenue) FROM marts.monthly_revenue WHERE month_start = toDate('2024-01-01')",
		} {
			if got := one(q); math.Abs(got-raw) > 0.005 {
				t.Errorf("%s = %.2f, want %.2f from raw.orders", q, got, raw)
			}
		}
		if got, want := one("SELECT count() FROM marts.daily_revenue"), one("SELECT uniqExact(order_date) FROM staging.orders"); got != want || got < 28 {
			t.Errorf("daily_revenue has %v days, staging.orders %v", got, want)
		}
		if got := one("SELECT days FROM marts.monthly_revenue WHERE month_start = toDate('2024-01-01')"); got < 28 {
			t.Errorf("monthly_revenue counts %v days of January", got)
		}
		if got := one("SELECT count() FROM marts.revenue_by_region"); got != 3 {
			t.Errorf("revenue_by_region has %v rows", got)
		}
		if got, want := one("SELECT count() FROM marts.customer_lifetime"), one("SELECT uniqExact(customer_id) FROM staging.orders"); got != want {
			t.Errorf("customer_lifetime has %v customers, staging.orders %v", got, want)
		}
	}
	check()
	if again, err := r.Plan(ctx, sel); err != nil || len(again.Steps()) != 0 {
		t.Errorf("a rerun plans %v steps (%v), want none", len(again.Steps()), err)
	}
	// Redo a few days of the middle of the month: nothing changes.
	sel.From, sel.To, sel.Mode = "2024-01-10", "2024-01-12", plan.ModeAll
	if pl, err = r.Plan(ctx, sel); err != nil {
		t.Fatal(err)
	}
	if sum, err = r.Run(ctx, pl, runner.RunOptions{}); err != nil || sum.Failed != 0 {
		t.Fatalf("rerun: %+v, %v", sum, err)
	}
	check()
	fmt.Fprintf(os.Stderr, "shop: %d partitions published into ClickHouse %s\n", sum.Succeeded, a.Server().Version)
}
