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
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	r := mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", now)
	if !strings.Contains(r.stdout, "98 succeeded, 0 failed, 0 skipped") {
		t.Fatalf("first run:\n%s", r.stdout)
	}
	checksum := func() string {
		return fmt.Sprint(queryRows(t, dir, `SELECT count(*), sum(revenue), sum(orders) FROM marts.daily_revenue`))
	}
	before := checksum()
	r = mustRefill(t, dir, "plan", "--from", "2024-01-01", "--to", "2024-01-31", now, "--output", "json")
	var plan planOutput
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 0 {
		t.Errorf("second plan has %d steps, want 0: %+v", len(plan.Steps), plan.Steps[0])
	}
	r = mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", now)
	if !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("second run did something:\n%s", r.stdout)
	}
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", now, "--mode", "all")
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
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now)
	// The model now also counts returns: its SQL changed.
	path := filepath.Join(dir, "models", "marts", "daily_revenue.sql")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "count(*) AS orders,", "count(*) AS orders, count(DISTINCT customer_id) AS customers,", 1)), 0o644)

	r := mustRefill(t, dir, "plan", "marts.daily_revenue", "--from", "2024-01-01", "--to", "2024-01-10", now, "--output", "json")
	var plan planOutput
	json.Unmarshal([]byte(r.stdout), &plan)
	if len(plan.Steps) != 10 {
		t.Fatalf("plan has %d steps, want 10:\n%s", len(plan.Steps), r.stdout)
	}
	for _, s := range plan.Steps {
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
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-05", now)
	before := fmt.Sprint(queryRows(t, dir, `SELECT count(*), sum(amount) FROM staging.orders`))
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
	if after := fmt.Sprint(queryRows(t, dir, `SELECT count(*), sum(amount) FROM staging.orders`)); after != before {
		t.Errorf("target changed: %s -> %s", before, after)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'staging.orders' AND state = 'failed' AND error LIKE 'verification failed%'`); n != int64(5) {
		t.Errorf("%v failed ledger rows, want 5", n)
	}
}

func TestSQLErrorAtOnePartition(t *testing.T) {
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
	if !strings.Contains(r.stdout, "staging.orders 2024-01-10: Conversion Error") {
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
