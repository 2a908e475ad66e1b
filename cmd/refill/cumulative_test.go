package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// A cumulative model (marts.customer_revenue_to_date reads its own
// previous day) must equal a window function over the whole range,
// however it is run.

// runningTotals returns the model's rows and what a single window query
// over the whole range gives, through the last day the table holds.
func runningTotals(t *testing.T, dir string) (got, want []string) {
	t.Helper()
	text := func(q string) []string {
		var out []string
		for _, r := range queryRows(t, dir, q) {
			out = append(out, fmt.Sprint(r))
		}
		return out
	}
	got = text(`SELECT order_date, customer_id, orders_to_date, round(revenue_to_date, 6) FROM marts.customer_revenue_to_date ORDER BY ALL`)
	want = text(`
WITH last AS (SELECT max(order_date) AS d FROM marts.customer_revenue_to_date),
days AS (SELECT CAST(d AS DATE) AS order_date FROM range(DATE '2024-01-01', (SELECT d FROM last) + 1, INTERVAL 1 DAY) AS t(d)),
first AS (SELECT customer_id, min(order_date) AS f FROM staging.orders GROUP BY 1),
grid AS (SELECT days.order_date, first.customer_id FROM days JOIN first ON days.order_date >= first.f),
daily AS (SELECT order_date, customer_id, count(*) AS n, sum(amount) AS r FROM staging.orders GROUP BY 1, 2)
SELECT g.order_date, g.customer_id, sum(coalesce(n, 0)) OVER w, round(sum(coalesce(r, 0)) OVER w, 6)
FROM grid AS g LEFT JOIN daily USING (order_date, customer_id)
WINDOW w AS (PARTITION BY g.customer_id ORDER BY g.order_date)
ORDER BY ALL`)
	return got, want
}

func checkRunningTotals(t *testing.T, dir, when string) {
	t.Helper()
	got, want := runningTotals(t, dir)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%s: the cumulative model differs from the window query (%d rows, want %d)\n%s", when, len(got), len(want), rowDiff(want, got))
	}
}

func TestCumulativeModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"one at a time", []string{"--concurrency", "1"}},
		{"default concurrency", nil},
		{"concurrency 8", []string{"--concurrency", "8"}},
		{"batch 7", []string{"--batch", "7"}},
		{"publish together", []string{"--publish", "together"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := shop(t, nil)
			mustRefill(t, dir, "seed")
			r := mustRefill(t, dir, append([]string{"run", "+marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-01", janNow}, tc.args...)...)
			if slices.Contains(tc.args, "--batch") && !strings.Contains(r.stdout, "does not batch marts.customer_revenue_to_date") {
				t.Errorf("--batch does not say it leaves the cumulative model unbatched:\n%s", r.stdout)
			}
			checkRunningTotals(t, dir, tc.name)
		})
	}
}

// A late order on an early day recomputes the chain from that day on.
func TestCumulativeModelLateData(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	execSQL(t, dir, `INSERT INTO raw.orders SELECT 99999, 7, DATE '2024-01-05', TIMESTAMP '2024-01-05 10:00:00', 500, 'placed', 'eu'`)
	mustRefill(t, dir, "run", "staging.orders", "--partitions", "2024-01-05", "--mode", "all", janNow)
	p := mustRefill(t, dir, "plan", "marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-01", janNow, "--verbose")
	for _, want := range []string{"marts.customer_revenue_to_date 2024-01-05  upstream", "marts.customer_revenue_to_date 2024-01-31  upstream  reads its own partition before it"} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, p.stdout)
		}
	}
	if strings.Contains(p.stdout, "marts.customer_revenue_to_date 2024-01-04 ") {
		t.Errorf("the days before the late order are planned:\n%s", p.stdout)
	}
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	checkRunningTotals(t, dir, "after the late order")
	// A full refresh gives the same table.
	mustRefill(t, dir, "run", "marts.customer_revenue_to_date", "--full-refresh", janNow)
	checkRunningTotals(t, dir, "after a full refresh")
}

// Killed mid-chain, a rerun finishes it: each day was published before the
// next began.
func TestCumulativeModelKilled(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01", "--to", "2024-02", "--now=2024-03-01")
	p := startRun(t, bin, "--project", dir, "run", "marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-02", "--now=2024-03-01")
	waitFor(t, p.lines, "ok    marts.customer_revenue_to_date", 20)
	p.signal(syscall.SIGKILL)
	p.wait()
	done := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'marts.customer_revenue_to_date' AND state = 'done'`)
	if n, _ := done.(int64); n < 20 || n >= 60 {
		t.Fatalf("%v partitions done when killed; want the kill mid-chain", done)
	}
	checkRunningTotals(t, dir, "after the kill") // what was published is right
	mustRefill(t, dir, "run", "marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-02", "--now=2024-03-01")
	checkRunningTotals(t, dir, "after the rerun")
	if n := query(t, dir, `SELECT max(order_date) FROM marts.customer_revenue_to_date`); fmt.Sprint(n) != "2024-02-29 00:00:00 +0000 UTC" {
		t.Errorf("the chain ends at %v", n)
	}
}

// A day whose previous day was never built is blocked. Run anyway, it is
// recomputed by the run that builds the days before it.
func TestCumulativeModelBlockedWithoutItsPast(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01", "--to", "2024-01", janNow)
	args := []string{"marts.customer_revenue_to_date", "--from", "2024-01-10", "--to", "2024-01-12", janNow}
	p := mustRefill(t, dir, append([]string{"plan"}, args...)...)
	for _, want := range []string{"2024-01-10                1      blocked: reads its own earlier partitions, which are not built (run from the first one)",
		"2024-01-11 .. 2024-01-12  2      blocked: reads its own blocked partitions", "Nothing to run."} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, p.stdout)
		}
	}
	// Nothing of what was asked is built: exit 5, naming what it waits for
	// and the command that builds it.
	if r := refill(t, dir, append([]string{"run"}, args...)...); r.code != exitIncomplete || !strings.Contains(r.stdout, "Nothing to run") ||
		!strings.Contains(r.stdout, "marts.customer_revenue_to_date (3 partitions): waits for marts.customer_revenue_to_date 2024-01-09 (never built)") ||
		!strings.Contains(r.stdout, "to build it: refill run marts.customer_revenue_to_date --from 2024-01-01 --to 2024-01-12") {
		t.Errorf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'marts.customer_revenue_to_date'`); n != int64(0) {
		t.Errorf("the blocked run wrote %v ledger rows", n)
	}
	mustRefill(t, dir, append([]string{"run", "--allow-missing-upstream"}, args...)...)
	r := mustRefill(t, dir, "run", "marts.customer_revenue_to_date", "--from", "2024-01-01", "--to", "2024-01-09", janNow, "--output", "json")
	ran, _ := ranPartitions(t, r.stdout)
	if want := days("marts.customer_revenue_to_date", "2024-01-01", "2024-01-12"); len(ran) != len(want) {
		t.Errorf("building the days before ran %v, want %v", ran, want)
	}
	checkRunningTotals(t, dir, "after building the days before")
}

// A day whose previous day was republished after it was built (by a run
// that died before it recomputed the rest of the chain) is stale.
func TestCumulativeModelStaleAfterItsPast(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-01", janNow)
	// What the ledger holds after such a run published the 5th and died.
	execSQL(t, dir, `UPDATE refill.partitions SET published_at = now() WHERE model = 'marts.customer_revenue_to_date' AND partition_key = '2024-01-05'`)
	st := mustRefill(t, dir, "status", "marts.customer_revenue_to_date", "--from", "2024-01-04", "--to", "2024-01-07", janNow, "--list", "--no-color")
	if !strings.Contains(st.stdout, "2024-01-06  stale") || !strings.Contains(st.stdout, "its own earlier partition 2024-01-05 was republished") ||
		!strings.Contains(st.stdout, "2024-01-05  done") {
		t.Errorf("status:\n%s", st.stdout)
	}
	r := mustRefill(t, dir, "run", "marts.customer_revenue_to_date", "--from", "2024-01", "--to", "2024-01", janNow, "--output", "json")
	ran, _ := ranPartitions(t, r.stdout)
	if want := days("marts.customer_revenue_to_date", "2024-01-06", "2024-01-31"); len(ran) != len(want) || !ran[want[0]] {
		t.Errorf("the rerun ran %v, want %v", ran, want)
	}
	checkRunningTotals(t, dir, "after the rerun")
}
