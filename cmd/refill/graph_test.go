package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// ranPartitions returns the model/partition pairs a JSON run summary ran.
func ranPartitions(t *testing.T, stdout string) (map[string]bool, runOutput) {
	t.Helper()
	var out runOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	ran := map[string]bool{}
	for _, p := range out.Partitions {
		if p.Status != "succeeded" {
			t.Errorf("%s %s %s: %v", p.Model, p.Partition, p.Status, p.Error)
		}
		ran[p.Model+" "+p.Partition] = true
	}
	return ran, out
}

func days(model, from, to string) []string {
	var out []string
	f, _ := time.Parse("2006-01-02", from)
	l, _ := time.Parse("2006-01-02", to)
	for d := f; !d.After(l); d = d.AddDate(0, 0, 1) {
		out = append(out, model+" "+d.Format("2006-01-02"))
	}
	return out
}

func TestBackfillPropagatesDownstreamInOrder(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)

	pl := mustRefill(t, dir, "plan", "staging.orders+", "--from", "2024-01-10", "--to", "2024-01-12", janNow, "--mode", "all")
	if !strings.Contains(pl.stdout, "selection: staging.orders+ -> staging.orders, marts.customer_lifetime, marts.customer_revenue_to_date, marts.daily_revenue") {
		t.Errorf("plan does not print the expanded selection:\n%s", pl.stdout)
	}
	if !strings.Contains(pl.stdout, "2024-01-13 .. 2024-01-18  6      upstream: reads marts.daily_revenue, which this run rewrites") {
		t.Errorf("plan does not show the rolling model's upstream reason:\n%s", pl.stdout)
	}

	r := mustRefill(t, dir, "run", "staging.orders+", "--from", "2024-01-10", "--to", "2024-01-12", janNow, "--mode", "all", "--output", "json")
	ran, out := ranPartitions(t, r.stdout)
	var want []string
	want = append(want, days("staging.orders", "2024-01-10", "2024-01-12")...)
	want = append(want, days("marts.daily_revenue", "2024-01-10", "2024-01-12")...)
	want = append(want, days("marts.rolling_revenue", "2024-01-10", "2024-01-18")...)          // 7-day windows reading the 10th..12th
	want = append(want, days("marts.customer_revenue_to_date", "2024-01-10", "2024-01-31")...) // each day carries the one before
	want = append(want, "marts.monthly_revenue 2024-01", "marts.customer_lifetime all",
		"marts.revenue_by_region eu", "marts.revenue_by_region us", "marts.revenue_by_region apac")
	sort.Strings(want)
	var got []string
	for k := range ran {
		got = append(got, k)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ran\n  %v\nwant\n  %v", got, want)
	}

	// Order, from the ledger: every partition started after the upstream
	// partitions it reads were published.
	type span struct{ start, end time.Time }
	led := map[string]span{}
	for _, row := range queryRows(t, dir, fmt.Sprintf(`SELECT model, partition_key, started_at, finished_at FROM refill.partitions WHERE run_id = '%s'`, out.RunID)) {
		led[row[0].(string)+" "+row[1].(string)] = span{row[2].(time.Time), row[3].(time.Time)}
	}
	if len(led) != len(want) {
		t.Fatalf("the ledger has %d rows of the run, want %d", len(led), len(want))
	}
	after := func(down string, ups ...string) {
		for _, up := range ups {
			if led[down].start.Before(led[up].end) {
				t.Errorf("%s started at %s, before %s was published at %s", down, led[down].start, up, led[up].end)
			}
		}
	}
	orders := days("staging.orders", "2024-01-10", "2024-01-12")
	daily := days("marts.daily_revenue", "2024-01-10", "2024-01-12")
	for i := range daily {
		after(daily[i], orders[i])
	}
	after("marts.monthly_revenue 2024-01", daily...)
	after("marts.customer_lifetime all", orders...)
	for _, region := range []string{"eu", "us", "apac"} {
		after("marts.revenue_by_region "+region, orders...)
	}
	cumulative := days("marts.customer_revenue_to_date", "2024-01-10", "2024-01-31")
	for i, d := range cumulative {
		if i < len(orders) {
			after(d, orders[i])
		}
		if i > 0 {
			after(d, cumulative[i-1])
		}
	}
	for _, d := range days("marts.rolling_revenue", "2024-01-10", "2024-01-18") {
		day, _ := time.Parse("2006-01-02", strings.Fields(d)[1])
		for _, up := range daily {
			u, _ := time.Parse("2006-01-02", strings.Fields(up)[1])
			if !u.After(day) && day.Sub(u) <= 6*24*time.Hour {
				after(d, up)
			}
		}
	}
}

func TestRewrittenUpstreamMakesDownstreamStale(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	// Late data for the 11th, then only the source model is rebuilt.
	execSQL(t, dir, `INSERT INTO raw.orders SELECT 99999, 1, DATE '2024-01-11', TIMESTAMP '2024-01-11 10:00:00', 500, 'placed', 'eu'`)
	mustRefill(t, dir, "run", "staging.orders", "--partitions", "2024-01-11", janNow, "--mode", "all")

	r := mustRefill(t, dir, "plan", "--from", "2024-01", "--to", "2024-01", janNow, "--output", "json")
	var pl planOutput
	json.Unmarshal([]byte(r.stdout), &pl)
	got := map[string]string{}
	for _, s := range pl.Steps {
		got[s.Model+" "+s.Partition] = s.Reason
	}
	want := map[string]string{"marts.daily_revenue 2024-01-11": "upstream", "marts.monthly_revenue 2024-01": "upstream",
		"marts.customer_lifetime all": "upstream", "marts.revenue_by_region eu": "upstream",
		"marts.revenue_by_region us": "upstream", "marts.revenue_by_region apac": "upstream"}
	for _, d := range days("marts.rolling_revenue", "2024-01-11", "2024-01-17") {
		want[d] = "upstream"
	}
	for _, d := range days("marts.customer_revenue_to_date", "2024-01-11", "2024-01-31") {
		want[d] = "upstream" // the 11th reads the orders, every later day the day before
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("plan reasons\n  %v\nwant\n  %v", got, want)
	}
	st := mustRefill(t, dir, "status", "marts.daily_revenue", "--from", "2024-01-10", "--to", "2024-01-12", janNow, "--list", "--no-color")
	if !strings.Contains(st.stdout, "2024-01-11  stale") || !strings.Contains(st.stdout, "upstream staging.orders 2024-01-11 was republished") {
		t.Errorf("status does not show the upstream staleness:\n%s", st.stdout)
	}
	// Running the plan brings everything up to date.
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	if r := mustRefill(t, dir, "plan", "--from", "2024-01", "--to", "2024-01", janNow); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("still work after the rerun:\n%s", r.stdout)
	}
	if got := query(t, dir, `SELECT orders FROM marts.daily_revenue WHERE order_date = DATE '2024-01-11'`); fmt.Sprint(got) != fmt.Sprint(query(t, dir,
		`SELECT count(*) FROM staging.orders WHERE order_date = DATE '2024-01-11'`)) {
		t.Errorf("daily_revenue does not reflect the late order")
	}
}

// checksums summarizes every table of the shop.
func checksums(t *testing.T, dir string) string {
	var b strings.Builder
	for _, q := range []string{
		`SELECT count(*), round(sum(amount), 4) FROM staging.orders`,
		`SELECT count(*), round(sum(revenue), 4), sum(orders) FROM marts.daily_revenue`,
		`SELECT count(*), round(sum(revenue), 4) FROM marts.monthly_revenue`,
		`SELECT count(*), round(sum(revenue_7d), 4) FROM marts.rolling_revenue`,
		`SELECT count(*), round(sum(revenue), 4) FROM marts.revenue_by_region`,
		`SELECT count(*), round(sum(revenue), 4) FROM marts.customer_lifetime`,
		`SELECT count(*), count(DISTINCT fingerprint), max(published_at) FROM refill.partitions WHERE NOT (model = 'marts.daily_revenue' AND partition_key = '2024-01-04')`,
	} {
		fmt.Fprintln(&b, queryRows(t, dir, q))
	}
	return b.String()
}

func TestPublishTogether(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", janNow)
	before := checksums(t, dir)

	// Amounts change upstream, and one downstream model now emits a row
	// outside its window: nothing may be published, in any table.
	execSQL(t, dir, `UPDATE raw.orders SET amount = amount + 1 WHERE order_date BETWEEN DATE '2024-01-03' AND DATE '2024-01-05'`)
	good := readFile(t, dir, "models/marts/daily_revenue.sql")
	write(t, dir, "models/marts/daily_revenue.sql", strings.Replace(good,
		"GROUP BY order_date", "GROUP BY order_date\nUNION ALL SELECT DATE '2023-01-01', 0, 0, 0 FROM (SELECT 1) WHERE DATE '2024-01-04' >= {{ start }} AND DATE '2024-01-04' < {{ end }}", 1))
	r := refill(t, dir, "run", "staging.orders+", "--from", "2024-01-03", "--to", "2024-01-05", janNow, "--mode", "all", "--publish", "together")
	if r.code != exitFailed {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "marts.daily_revenue 2024-01-04: verification failed") || !strings.Contains(r.stdout, "not published") {
		t.Errorf("the summary does not explain:\n%s", r.stdout)
	}
	if after := checksums(t, dir); after != before {
		t.Errorf("a failed together-publish changed tables:\nbefore\n%s\nafter\n%s", before, after)
	}
	if n := query(t, dir, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill_stage'`); n != int64(0) {
		t.Errorf("%v staging tables or views left behind", n)
	}
	if s := query(t, dir, `SELECT state FROM refill.partitions WHERE model = 'marts.daily_revenue' AND partition_key = '2024-01-04'`); s != "failed" {
		t.Errorf("the refused partition is %v in the ledger, want failed", s)
	}
	write(t, dir, "models/marts/daily_revenue.sql", good)

	// Fixed, the same run publishes every table at once, and downstream
	// models read the new upstream rows before anything is published.
	mustRefill(t, dir, "run", "staging.orders+", "--from", "2024-01-03", "--to", "2024-01-05", janNow, "--publish", "together", "--mode", "all")
	for _, d := range []string{"2024-01-03", "2024-01-04", "2024-01-05"} {
		daily := query(t, dir, fmt.Sprintf(`SELECT round(revenue, 4) FROM marts.daily_revenue WHERE order_date = DATE '%s'`, d))
		want := query(t, dir, fmt.Sprintf(`SELECT round(sum(amount), 4) FROM raw.orders WHERE order_date = DATE '%s' AND amount >= 10 AND status <> 'test'`, d))
		if fmt.Sprint(daily) != fmt.Sprint(want) {
			t.Errorf("%s: daily revenue %v, want %v from the new orders", d, daily, want)
		}
	}
	published := queryRows(t, dir, `SELECT count(DISTINCT published_at) FROM refill.partitions WHERE run_id = (SELECT run_id FROM refill.runs ORDER BY started_at DESC LIMIT 1)`)
	if published[0][0] != int64(1) {
		t.Errorf("a together-publish recorded %v publication times, want 1", published[0][0])
	}
	// Downstream partitions were computed before their upstream's publish
	// time, from its staged rows; published together, they are not stale.
	if r := mustRefill(t, dir, "plan", "--from", "2024-01-01", "--to", "2024-01-31", janNow); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("after a together-publish the plan is not empty:\n%s", r.stdout)
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := osReadFile(dir, rel)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
