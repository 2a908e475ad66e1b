package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunTwiceWritesEachPartitionOnce(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	r := mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", janNow)
	if !strings.Contains(r.stdout, "129 succeeded, 0 failed, 0 skipped") {
		t.Fatalf("first run:\n%s", r.stdout)
	}
	checksum := func() string {
		return fmt.Sprint(queryRows(t, dir, `SELECT count(*), round(sum(revenue), 6), sum(orders) FROM marts.daily_revenue`))
	}
	before := checksum()
	r = mustRefill(t, dir, "plan", "--from", "2024-01-01", "--to", "2024-01-31", janNow, "--output", "json")
	var pl planOutput
	if err := json.Unmarshal([]byte(r.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps) != 0 {
		t.Errorf("second plan has %d steps, want 0: %+v", len(pl.Steps), pl.Steps[0])
	}
	r = mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", janNow)
	if !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("second run did something:\n%s", r.stdout)
	}
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", janNow, "--mode", "all")
	if after := checksum(); after != before {
		t.Errorf("--mode all changed the data: %s -> %s", before, after)
	}
	if n := query(t, dir, `SELECT count(*) FROM (SELECT order_id FROM staging.orders GROUP BY order_id HAVING count(*) > 1)`); n != int64(0) {
		t.Errorf("%v duplicated orders after --mode all", n)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'marts.daily_revenue' AND state = 'done'`); n != int64(31) {
		t.Errorf("ledger has %v done daily_revenue partitions, want 31", n)
	}
}

func TestChangedSQLMakesPartitionsStale(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now)
	// The model now also counts returns: its SQL changed.
	path := filepath.Join(dir, "models", "marts", "daily_revenue.sql")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "count(*) AS orders,", "count(*) AS orders, count(DISTINCT customer_id) AS customers,", 1)), 0o644)

	r := mustRefill(t, dir, "plan", "marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now, "--output", "json")
	var pl planOutput
	json.Unmarshal([]byte(r.stdout), &pl)
	if len(pl.Steps) != 10 {
		t.Fatalf("plan has %d steps, want 10:\n%s", len(pl.Steps), r.stdout)
	}
	for _, s := range pl.Steps {
		if s.Reason != "stale" {
			t.Errorf("%s %s: reason %s, want stale", s.Model, s.Partition, s.Reason)
		}
	}
	r = mustRefill(t, dir, "status", "marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now, "--output", "json")
	var st struct {
		Models []struct {
			Model      string
			Partitions []struct{ Partition, State string }
		}
	}
	json.Unmarshal([]byte(r.stdout), &st)
	if len(st.Models) != 1 || len(st.Models[0].Partitions) != 10 {
		t.Fatalf("status:\n%s", r.stdout)
	}
	for _, p := range st.Models[0].Partitions {
		if p.State != "stale" {
			t.Errorf("status %s = %s, want stale", p.Partition, p.State)
		}
	}
	text := mustRefill(t, dir, "status", "marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now, "--no-color")
	if !strings.Contains(text.stdout, "ssssssssss") {
		t.Errorf("status strip does not show 10 stale partitions:\n%s", text.stdout)
	}
}

func TestRowsOutsideTheWindowAreRefused(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now)
	before := fmt.Sprint(queryRows(t, dir, `SELECT count(*), round(sum(amount), 6) FROM staging.orders`))
	// A bug: the window's upper bound is off by one day.
	write(t, dir, "models/staging/orders.sql", `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
*/
SELECT order_id, customer_id, order_date, amount, status, region
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date <= {{ end }}`)
	r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now, "--mode", "all")
	if r.code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "verification failed") || !strings.Contains(r.stdout, "outside") {
		t.Errorf("no verification message:\n%s", r.stdout)
	}
	if after := fmt.Sprint(queryRows(t, dir, `SELECT count(*), round(sum(amount), 6) FROM staging.orders`)); after != before {
		t.Errorf("target changed: %s -> %s", before, after)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'staging.orders' AND state = 'failed' AND error LIKE 'verification failed%'`); n != int64(5) {
		t.Errorf("%v failed ledger rows, want 5", n)
	}
}

func TestSQLErrorAtOnePartition(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-20", now)
	old := query(t, dir, `SELECT sum(amount) FROM staging.orders WHERE order_date = DATE '2024-01-10'`)
	// The new version doubles amounts, and fails on 2024-01-10.
	write(t, dir, "models/staging/orders.sql", `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
*/
SELECT order_id, customer_id, order_date, amount * {{ partition == "2024-01-10" ? raw("CAST('boom' AS INTEGER)") : 2 }} AS amount, status, region
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}`)
	r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-20", now, "--concurrency", "1")
	if r.code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "staging.orders 2024-01-10: models/staging/orders.sql:6:55: Conversion Error") {
		t.Errorf("the warehouse's error is not on screen:\n%s", r.stdout)
	}
	ledger := queryRows(t, dir, `SELECT partition_key, state, error FROM refill.partitions WHERE model = 'staging.orders' ORDER BY partition_key`)
	for _, row := range ledger {
		key, state := row[0].(string), row[1].(string)
		want := "done"
		if key == "2024-01-10" {
			want = "failed"
			if msg, _ := row[2].(string); !strings.Contains(msg, "Conversion Error") {
				t.Errorf("ledger error for %s = %q", key, msg)
			}
		}
		if state != want {
			t.Errorf("%s is %s, want %s", key, state, want)
		}
	}
	if got := query(t, dir, `SELECT sum(amount) FROM staging.orders WHERE order_date = DATE '2024-01-10'`); fmt.Sprint(got) != fmt.Sprint(old) {
		t.Errorf("the failed window changed: %v -> %v", old, got)
	}
	if got := query(t, dir, `SELECT count(*) FROM raw.orders r JOIN staging.orders s USING (order_id) WHERE s.order_date = DATE '2024-01-09' AND s.amount <> r.amount * 2`); got != int64(0) {
		t.Errorf("%v rows of 2024-01-09 were not rewritten", got)
	}
}

func TestResumeRepeatsTheSelection(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-20", now)
	// A bad row arrives for 2024-01-10: its status fails the model's
	// accepted_values audit. A forced rewrite of the 20 days stops there.
	execSQL(t, dir, `INSERT INTO raw.orders SELECT 99999, 1, DATE '2024-01-10', TIMESTAMP '2024-01-10 10:00:00', 50, 'bogus', 'eu'`)
	r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-20", now, "--mode", "all",
		"--concurrency", "1", "--fail-fast", "--output", "json")
	if r.code != exitFailed {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sum runOutput
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 9 || sum.Failed != 1 || sum.Skipped != 10 {
		t.Fatalf("first run: %d succeeded, %d failed, %d skipped", sum.Succeeded, sum.Failed, sum.Skipped)
	}
	if e := *sum.Partitions[9].Error; !strings.Contains(e, "audit failed") || !strings.Contains(e, "bogus") {
		t.Errorf("2024-01-10 failed with %q", e)
	}
	// The data is fixed. A plain rerun takes only the failed day; resuming
	// repeats the forced selection, skipping the days the run finished.
	execSQL(t, dir, `DELETE FROM raw.orders WHERE order_id = 99999`)
	plain := mustRefill(t, dir, "plan", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-20", now, "--output", "json")
	var pp planOutput
	json.Unmarshal([]byte(plain.stdout), &pp)
	if len(pp.Steps) != 1 || pp.Steps[0].Partition != "2024-01-10" {
		t.Errorf("a plain plan takes %v, want only 2024-01-10", pp.Steps)
	}
	r = mustRefill(t, dir, "run", "--resume", sum.RunID, "--output", "json")
	var resumed runOutput
	json.Unmarshal([]byte(r.stdout), &resumed)
	var keys []string
	for _, p := range resumed.Partitions {
		keys = append(keys, p.Partition)
	}
	if resumed.Succeeded != 11 || len(keys) != 11 || keys[0] != "2024-01-10" || keys[10] != "2024-01-20" {
		t.Errorf("resume ran %v, want 2024-01-10 .. 2024-01-20", keys)
	}
	// Resuming an unknown run is a usage error; so is adding a selection.
	if r := refill(t, dir, "run", "--resume", "nope"); r.code != exitUsage || !strings.Contains(r.stderr, "no run nope") {
		t.Errorf("unknown run: exit %d: %s", r.code, r.stderr)
	}
	if r := refill(t, dir, "run", "--resume", sum.RunID, "--from", "2024-01-01"); r.code != exitUsage {
		t.Errorf("--resume with --from: exit %d", r.code)
	}
}

func TestModeFailedRerunsOnlyFailures(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	orders := filepath.Join(dir, "models", "staging", "orders.sql")
	good, _ := os.ReadFile(orders)
	write(t, dir, "models/staging/orders.sql", strings.Replace(string(good), "AND status <> 'test'",
		"AND status <> 'test' AND CASE WHEN order_date = DATE '2024-01-03' THEN CAST('x' AS INTEGER) = 1 ELSE TRUE END", 1))
	if r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now); r.code != exitFailed {
		t.Fatalf("exit %d", r.code)
	}
	os.WriteFile(orders, good, 0o644)
	// The fix changes the SQL, so every day is stale now; --mode failed
	// takes only the failed one.
	r := mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now, "--mode", "failed", "--output", "json")
	var out runOutput
	json.Unmarshal([]byte(r.stdout), &out)
	if len(out.Partitions) != 1 || out.Partitions[0].Partition != "2024-01-03" || out.Succeeded != 1 {
		t.Errorf("--mode failed ran %+v", out.Partitions)
	}
}

func TestBlockingAuditLeavesTargetUnchanged(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now)
	before := fmt.Sprint(queryRows(t, dir, `SELECT count(*), round(sum(amount), 6) FROM staging.orders WHERE order_date = DATE '2024-01-03'`))
	execSQL(t, dir, `INSERT INTO raw.orders SELECT 99999, 1, DATE '2024-01-03', TIMESTAMP '2024-01-03 10:00:00', 50, 'bogus', 'eu'`)
	// A warn-level audit reports without blocking.
	edit(t, dir, "models/staging/orders.sql", "  - unique: [order_id]", "  - unique: [order_id]\n  - row_count: {max: 1}\n    severity: warn")
	r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now, "--mode", "all")
	if r.code != exitFailed {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "staging.orders 2024-01-03: audit failed: accepted_values(status) (models/staging/orders.sql:14): status has values outside [placed shipped returned]: bogus (1 rows)") {
		t.Errorf("no audit failure message:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "warning: staging.orders 2024-01-01..2024-01-05: audit row_count: 2024-01-01 has") {
		t.Errorf("no warning for the warn-level audit:\n%s", r.stdout)
	}
	if after := fmt.Sprint(queryRows(t, dir, `SELECT count(*), round(sum(amount), 6) FROM staging.orders WHERE order_date = DATE '2024-01-03'`)); after != before {
		t.Errorf("the audited window changed: %s -> %s", before, after)
	}
	rows := queryRows(t, dir, `SELECT partition_key, state FROM refill.partitions WHERE model = 'staging.orders' ORDER BY 1`)
	for _, row := range rows {
		want := "done"
		if row[0] == "2024-01-03" {
			want = "failed"
		}
		if row[1] != want {
			t.Errorf("%v is %v, want %s", row[0], row[1], want)
		}
	}
}
