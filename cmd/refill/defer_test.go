package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// deferShop is the example project with a second DuckDB target, prod2 (its
// own file), backfilled through January; dev holds nothing.
func deferShop(t *testing.T) string {
	t.Helper()
	dir := shop(t, nil)
	yml, err := osReadFile(dir, "refill.yml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "refill.yml", strings.Replace(yml, "targets:\n", "targets:\n  prod2:\n    adapter: duckdb\n    path: prod2.duckdb\n", 1))
	mustRefill(t, dir, "seed", "--target", "prod2")
	mustRefill(t, dir, "run", "--target", "prod2", "--to", "2024-01-31", "--yes", "--quiet", now)
	return dir
}

// prodRows reads rows from prod2's file (no refill command may hold it).
func prodRows(t *testing.T, dir, q string) [][]any {
	t.Helper()
	db, err := sql.Open("duckdb", filepath.Join(dir, "prod2.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dbRows(t, db, q)
}

// TestDeferBuildsAChangeOnProductionData changes a mart and builds it in
// dev with --defer prod2: dev builds the mart alone, from prod2's staging
// table, and dev's table then differs from prod2's exactly as refill diff
// computed in prod2 says. The partitions built so are another version of
// the model (they read other tables): without --defer they are not done.
func TestDeferBuildsAChangeOnProductionData(t *testing.T) {
	t.Parallel()
	dir := deferShop(t)
	daily, err := osReadFile(dir, "models/marts/daily_revenue.sql")
	if err != nil {
		t.Fatal(err)
	}
	// A change: returned orders no longer count as revenue.
	write(t, dir, "models/marts/daily_revenue.sql", strings.Replace(daily, "sum(amount) AS revenue", "sum(CASE WHEN status = 'returned' THEN 0 ELSE amount END) AS revenue", 1))
	days := []string{"--from", "2024-01-01", "--to", "2024-01-10", now}

	r := mustRefill(t, dir, append([]string{"diff", "marts.daily_revenue", "--target", "prod2", "-o", "json"}, days...)...)
	var inProd diffOutput
	if err := jsonUnmarshal(r.stdout, &inProd); err != nil {
		t.Fatal(err)
	}

	r = mustRefill(t, dir, append([]string{"run", "marts.daily_revenue", "--defer", "prod2", "--yes"}, days...)...)
	if !strings.Contains(r.stderr, `staging.orders -> "refill_defer"."staging"."orders"`) {
		t.Errorf("the run does not say what it deferred:\n%s", r.stderr)
	}
	if n := query(t, dir, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'staging'"); fmt.Sprint(n) != "0" {
		t.Errorf("dev built its upstream: %v staging tables", n)
	}
	// dev's table against prod2's, compared here whole row by whole row.
	cols := "order_date, orders, round(revenue, 2), round(returned, 2)"
	rowsOf := func(rows [][]any) map[string]map[string]int {
		out := map[string]map[string]int{}
		for _, row := range rows {
			day := fmt.Sprint(row[0])[:10]
			if out[day] == nil {
				out[day] = map[string]int{}
			}
			out[day][fmt.Sprint(row...)]++
		}
		return out
	}
	devRows := rowsOf(queryRows(t, dir, "SELECT "+cols+" FROM marts.daily_revenue"))
	prodOld := rowsOf(prodRows(t, dir, "SELECT "+cols+" FROM marts.daily_revenue WHERE order_date <= DATE '2024-01-10'"))
	differ := 0
	for _, p := range inProd.Partitions {
		onlyOld, onlyNew := 0, 0
		for row, n := range prodOld[p.Partition] {
			onlyOld += max(n-devRows[p.Partition][row], 0)
		}
		for row, n := range devRows[p.Partition] {
			onlyNew += max(n-prodOld[p.Partition][row], 0)
		}
		if int64(onlyOld) != p.OnlyOld || int64(onlyNew) != p.OnlyNew {
			t.Errorf("%s: dev's table differs from prod2's by %d only old and %d only new rows; the diff in prod2 says %d and %d",
				p.Partition, onlyOld, onlyNew, p.OnlyOld, p.OnlyNew)
		}
		if onlyOld > 0 {
			differ++
		}
	}
	if len(inProd.Partitions) != 10 || differ == 0 {
		t.Fatalf("the change shows in %d of %d partitions", differ, len(inProd.Partitions))
	}

	// With --defer they are done; without, they read other tables.
	if r := mustRefill(t, dir, append([]string{"plan", "marts.daily_revenue", "--defer", "prod2"}, days...)...); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("with --defer the partitions built are not done:\n%s", r.stdout)
	}
	if r := mustRefill(t, dir, append([]string{"plan", "marts.daily_revenue"}, days...)...); strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("without --defer the partitions built from prod2's tables are done:\n%s", r.stdout)
	}
	// prod2 republishes a day of its staging table: that day of dev's
	// mart read the old one.
	mustRefill(t, dir, "run", "staging.orders", "--target", "prod2", "--partitions", "2024-01-03", "--mode", "all", "--yes", "--quiet", now)
	r = mustRefill(t, dir, append([]string{"plan", "marts.daily_revenue", "--defer", "prod2"}, days...)...)
	if !strings.Contains(r.stdout, "2024-01-03") || !strings.Contains(r.stdout, "upstream") || strings.Contains(r.stdout, "2024-01-04") {
		t.Errorf("after prod2 republished 2024-01-03:\n%s", r.stdout)
	}
	// Beyond what prod2 built, partitions are blocked, not built from nothing.
	r = mustRefill(t, dir, "plan", "marts.daily_revenue", "--defer", "prod2", "--from", "2024-02-01", "--to", "2024-02-02", now)
	if !strings.Contains(r.stdout, "blocked") {
		t.Errorf("partitions reading what prod2 never built:\n%s", r.stdout)
	}
}

// TestDeferRefusals: another engine, the command's own target, a target
// that does not exist.
func TestDeferRefusals(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	for _, tc := range []struct{ target, want string }{
		{"prod", "target prod is snowflake and target dev is duckdb"},
		{"dev", "that is the command's own target"},
		{"nope", "nope"},
	} {
		r := refill(t, dir, "plan", "marts.daily_revenue", "--defer", tc.target, now)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("--defer %s: exit %d\n%s", tc.target, r.code, r.stderr)
		}
	}
}

// TestDeferClickHouse: two targets on one ClickHouse server, each with its
// own database and ledger; a changed mart built in dev reads prod's base
// table and leaves dev without one.
func TestDeferClickHouse(t *testing.T) {
	t.Parallel()
	adaptertest.ClickHouseServer.Env(t)
	b := make([]byte, 3)
	rand.Read(b)
	p := "d" + hex.EncodeToString(b) + "_"
	dropClickHouseDatabases(t, p+"dev", p+"prod", p+"dev_ledger", p+"prod_ledger", p+"dev_stage", p+"prod_stage")
	target := func(name string) string {
		return fmt.Sprintf("  %s:\n    adapter: clickhouse\n    dsn: ${CLICKHOUSE_DSN}\n    schema: %s%s\n    ledger_schema: %s%s_ledger\n    stage_schema: %s%s_stage\n",
			name, p, name, p, name, p, name)
	}
	mart := "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT d, sum(n) * %d AS total FROM {{ ref(\"base\") }} WHERE d >= {{ start }} AND d < {{ end }} GROUP BY d\n"
	dir := t.TempDir()
	write(t, dir, "refill.yml", "name: t\nmodels: models\ntarget: dev\ntargets:\n"+target("dev")+target("prod"))
	write(t, dir, "models/base.sql", "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT {{ start }} AS d, number AS n FROM numbers(10)\n")
	write(t, dir, "models/mart.sql", fmt.Sprintf(mart, 1))
	days := []string{"--from", "2024-01-01", "--to", "2024-01-03", now}
	mustRefill(t, dir, append([]string{"run", "--target", "prod", "--yes", "--quiet"}, days...)...)

	write(t, dir, "models/mart.sql", fmt.Sprintf(mart, 2))
	r := mustRefill(t, dir, append([]string{"run", "mart", "--defer", "prod", "--yes"}, days...)...)
	if want := fmt.Sprintf("base -> `%sprod`.`base`", p); !strings.Contains(r.stderr, want) {
		t.Errorf("the run does not say it deferred %q:\n%s", want, r.stderr)
	}
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	one := func(q string) string {
		res, err := ch.Query(t.Context(), q, adapters.Tag{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(res.Rows[0][0])
	}
	if got := one(fmt.Sprintf("SELECT sum(total) FROM `%sdev`.`mart`", p)); got != "270" { // 3 days of 2 x 45
		t.Errorf("dev's mart sums %s, want 270", got)
	}
	if got := one(fmt.Sprintf("SELECT count() FROM system.tables WHERE database = '%sdev' AND name = 'base'", p)); got != "0" {
		t.Errorf("dev built its own base table")
	}
	// Its diff against prod's mart: every day changed, as in prod.
	r = mustRefill(t, dir, append([]string{"diff", "mart", "--target", "prod"}, days...)...)
	if !strings.Contains(r.stdout, "3 of 3 partitions differ") {
		t.Errorf("diff in prod:\n%s", r.stdout)
	}
	if r := mustRefill(t, dir, append([]string{"plan", "mart", "--defer", "prod"}, days...)...); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("with --defer, dev's mart is not done:\n%s", r.stdout)
	}
}
