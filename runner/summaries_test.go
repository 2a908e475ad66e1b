package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// countingLedger counts the records planning reads.
type countingLedger struct {
	*duckdb.Adapter
	read int
}

func (c *countingLedger) QueryPartitions(ctx context.Context, q adapters.RecordQuery) ([]adapters.Record, error) {
	recs, err := c.Adapter.QueryPartitions(ctx, q)
	c.read += len(recs)
	return recs, err
}

// TestPlanFromSummaries plans the example shop, after each of a series of
// changes to its ledger and tables, twice: from the ledger's monthly
// summaries and the records they cannot vouch for (as refill plans), and
// from every record. The plans must be the same; with nothing to do the
// first reads no record of a time-partitioned model, and after a recent
// change fewer than half of them.
func TestPlanFromSummaries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	e.run(plan.Selection{}, runner.RunOptions{})
	total := int(e.count("SELECT count(*) FROM refill.partitions"))
	c := &countingLedger{Adapter: e.db}
	r := e.with(c)
	sels := []plan.Selection{
		{},
		{Select: []string{"+marts.monthly_revenue"}},
		{Select: []string{"+marts.rolling_revenue"}},
		{Select: []string{"staging.orders+"}, From: "2024-02-10", To: "2024-03-05"},
		{Select: []string{"marts.daily_revenue+"}},
		{Mode: plan.ModeMissing},
		{Mode: plan.ModeFailed},
		{Lookback: ptr(3)},
	}
	same := func(step string, few bool) {
		t.Helper()
		// Planned soon after the data (summaries by month) and two years
		// later (by year).
		clocks := append(sels, sels...)
		if testing.Short() {
			clocks = sels // the second clock, two years on, without -short
		}
		for i, sel := range clocks {
			sel.Now = jan2024
			if i >= len(sels) {
				sel.Now, few = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), false
			}
			c.read = 0
			full := bothWays(t, e, r, sel, step)
			if i%len(sels) == 0 && step != "built" && len(full.Steps())+len(full.Blocked()) == 0 {
				t.Errorf("%s: nothing to do", step)
			}
			// (A scheduled run with a lookback reruns recent orders, so
			// the whole-table and list models reading every order may
			// run: planning them reads every record of orders.)
			if few && sel.Lookback == nil && c.read*2 >= total {
				t.Errorf("%s, %+v: planning read %d of %d records", step, sel, c.read, total)
			}
		}
	}
	same("built", true)
	c.read = 0
	// Nothing to do but refreshing marts.customer_lifetime, which reads a
	// source: that reads no record of staging.orders either, whose
	// summaries prove it built.
	if pl, err := r.Plan(ctx, plan.Selection{Now: jan2024}); err != nil || len(pl.Steps()) != 1 || pl.Steps()[0].Reason != plan.ReasonRefresh {
		t.Fatalf("built: %v, steps %v", err, stepKeys(pl.Steps()))
	}
	// Only the list and whole-table models' records are read.
	if want := int(e.count("SELECT count(*) FROM refill.partitions WHERE window_start IS NULL")); c.read != want {
		t.Errorf("a plan with nothing to do read %d records, want %d (those without a window)", c.read, want)
	}
	for _, change := range []struct {
		name, sql string
		few       bool // the change is recent: planning reads few records
	}{
		{"a recent record built by another version",
			"UPDATE refill.partitions SET fingerprint = 'old' WHERE model = 'staging.orders' AND partition_key = '2024-04-28'", true},
		{"an upstream partition republished in January",
			"UPDATE refill.partitions SET published_at = TIMESTAMP '2030-01-01 00:00:00' WHERE model = 'staging.orders' AND partition_key = '2024-01-17'", false},
		{"a record built by another version in February",
			"UPDATE refill.partitions SET fingerprint = 'old' WHERE model = 'marts.daily_revenue' AND partition_key = '2024-02-11'", false},
		{"a failure in January",
			"UPDATE refill.partitions SET state = 'failed', error = 'boom' WHERE model = 'staging.orders' AND partition_key = '2024-01-05'", false},
		{"a pending publication in April",
			"UPDATE refill.partitions SET state = 'pending' WHERE model = 'marts.monthly_revenue' AND partition_key = '2024-04'", false},
		{"a day of a cumulative model republished after the next day was built",
			"UPDATE refill.partitions SET published_at = TIMESTAMP '2030-03-01 00:00:00' WHERE model = 'marts.customer_revenue_to_date' AND partition_key = '2024-02-10'", false},
		{"a list partition failed",
			"UPDATE refill.partitions SET state = 'failed' WHERE model = 'marts.revenue_by_region' AND partition_key = 'eu'", true},
		// Last: the ledger is restored, the tables are not.
		{"a record and its rows gone in March",
			"DELETE FROM refill.partitions WHERE model = 'marts.rolling_revenue' AND partition_key = '2024-03-20'; DELETE FROM marts.rolling_revenue WHERE day = DATE '2024-03-20'", false},
		{"rows deleted from an old partition",
			"DELETE FROM marts.daily_revenue WHERE order_date = DATE '2024-01-09'", false},
	} {
		// Each change alone, on the ledger as built.
		for _, q := range []string{"CREATE OR REPLACE TABLE refill.built AS SELECT * FROM refill.partitions", change.sql} {
			if _, err := e.db.DB().Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		same(change.name, change.few)
		for _, q := range []string{"DELETE FROM refill.partitions", "INSERT INTO refill.partitions SELECT * FROM refill.built"} {
			if _, err := e.db.DB().Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// bothWays plans sel with r from the ledger's summaries (as refill plans)
// and from every record, reports any difference, and returns the plan
// from every record.
func bothWays(t *testing.T, e *env, r *runner.Runner, sel plan.Selection, step string) *plan.Plan {
	t.Helper()
	fast, err := r.Plan(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := r.Facts(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	full, err := plan.NewPlanFacts(e.project, e.runner.Scope, *facts, sel)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := planLines(fast), planLines(full); got != want {
		t.Errorf("%s, %+v: from the summaries:\n%s\nfrom every record:\n%s", step, sel, got, want)
	}
	return full
}

func ptr[T any](v T) *T { return &v }

func planLines(p *plan.Plan) string {
	var b strings.Builder
	for _, st := range append(append([]plan.Step{}, p.Steps()...), p.Blocked()...) {
		fmt.Fprintf(&b, "%s %s %s: %s", st.Model.Name, st.Partition.Key, st.Reason, st.Detail)
		if !st.Horizon.IsZero() {
			fmt.Fprintf(&b, " (horizon %s)", st.Horizon.Format(time.RFC3339))
		}
		b.WriteString("\n")
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// Planned in the middle of a month, the summaries cut the month at the
// day (adapters.SummaryQuery.Recent), so that its complete days are
// proven done and a plan with nothing to do reads no record of a
// time-partitioned model. Two of the planner's paths had counted on
// reading the month's records: a whole-table model's horizon was the end
// of its upstream's last proven day rather than its start (as the day's
// record gives it), and a daily model proven whole left out of a leading
// + the whole-table model it reads, which refreshes.
func TestPlanFromSummariesMidMonth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"models/marts/lifetime_daily.sql": "/* refill\npartition_by: order_date\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT o.order_date, count(*) AS orders, max(l.revenue) AS top FROM {{ ref(\"staging.orders\") }} AS o " +
			"JOIN {{ ref(\"marts.customer_lifetime\") }} AS l ON l.customer_id = o.customer_id " +
			"WHERE o.order_date >= {{ start }} AND o.order_date < {{ end }} GROUP BY o.order_date",
		// Never built: a whole table missing.
		"models/marts/order_totals.sql": "SELECT count(*) AS orders FROM {{ ref(\"staging.orders\") }}",
		// A delay moves the cut back a day until 02:00.
		"models/marts/late_daily.sql": "/* refill\npartition_by: order_date\ngrain: day\nstart: 2024-01-01\ndelay: 2h\n*/\n" +
			"SELECT order_date, count(*) AS orders FROM {{ ref(\"staging.orders\") }} " +
			"WHERE order_date >= {{ start }} AND order_date < {{ end }} GROUP BY order_date",
	})
	built := time.Date(2024, 4, 20, 0, 30, 0, 0, time.UTC)
	if s := e.run(plan.Selection{Now: built, Exclude: []string{"marts.order_totals"}}, runner.RunOptions{}); s.Failed+s.Blocked != 0 || s.Succeeded == 0 {
		t.Fatalf("the first run: %+v", s)
	}
	c := &countingLedger{Adapter: e.db}
	r := e.with(c)
	for _, now := range []time.Time{built, built.Add(2 * time.Hour), time.Date(2024, 4, 22, 12, 0, 0, 0, time.UTC)} {
		for _, sel := range []plan.Selection{
			{},
			{Select: []string{"+marts.lifetime_daily"}},
			{Select: []string{"marts.customer_lifetime"}},
			{Select: []string{"marts.order_totals"}, From: "2024-04-01", To: "2024-04-10"},
			{Select: []string{"+marts.monthly_revenue"}},
			{Select: []string{"staging.orders+"}, From: "2024-04-10", To: "2024-04-21"},
			{Mode: plan.ModeMissing},
			{Lookback: ptr(2)},
		} {
			sel.Now = now
			bothWays(t, e, r, sel, "mid-month")
		}
	}
	lines := planLines(bothWays(t, e, r, plan.Selection{Now: built, Select: []string{"+marts.lifetime_daily"}}, "mid-month"))
	for _, want := range []string{"marts.customer_lifetime all refresh", "marts.lifetime_daily 2024-01-01 upstream"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the plan of +marts.lifetime_daily lacks %q:\n%s", want, lines)
		}
	}
	// Built for a range, a whole table reads the orders through the last
	// one built, 19 April, as its record says.
	lines = planLines(bothWays(t, e, r, plan.Selection{Now: built, Select: []string{"marts.order_totals"}, From: "2024-04-01", To: "2024-04-10"}, "mid-month"))
	if want := "marts.order_totals all missing:  (horizon 2024-04-19T00:00:01Z)\n"; lines != want {
		t.Errorf("the plan of marts.order_totals in April is\n%s\nwant\n%s", lines, want)
	}
	// With nothing to do, only the list and whole-table models' records
	// are read. (Without marts.lifetime_daily: a daily model reading a
	// whole table that refreshes may rerun whole, and has its records and
	// those of what it reads read.)
	delete(e.fsys, "models/marts/lifetime_daily.sql")
	delete(e.fsys, "models/marts/order_totals.sql")
	delete(e.fsys, "models/marts/late_daily.sql")
	e.load()
	r = e.with(c)
	for _, now := range []time.Time{built, built.Add(time.Hour)} {
		c.read = 0
		if p := bothWays(t, e, r, plan.Selection{Now: now}, "nothing to do"); len(p.Steps()) != 1 || p.Steps()[0].Model.Name != "marts.customer_lifetime" {
			t.Errorf("at %s the plan is\n%s", now, planLines(p))
		}
		if want := int(e.count("SELECT count(*) FROM refill.partitions WHERE window_start IS NULL")); c.read != want {
			t.Errorf("at %s a plan with nothing to do read %d records, want %d (those without a window)", now, c.read, want)
		}
	}
}

// Summaries pair a model's records with its upstream's on the coarser of
// their grains. Weeks from Sunday and fiscal years over a daily model
// were paired with SQL the warehouse could not run (DuckDB: extract
// specifier "sunday_week" not recognized), so that once they were built
// every plan failed.
func TestPlanFromSummariesOfWeeksFromSundayAndFiscalYears(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"models/marts/sunday_weeks.sql": "/* refill\npartition_by: week\ngrain: week\nweek_start: sunday\nstart: 2023-12-31\nend: 2024-04-27\n*/\n" +
			"SELECT CAST({{ start }} AS DATE) AS week, sum(amount) AS revenue FROM {{ ref(\"staging.orders\") }} WHERE order_date >= {{ start }} AND order_date < {{ end }}",
		"models/marts/fiscal_years.sql": "/* refill\npartition_by: fy\ngrain: year\nfiscal_year_start: april\nstart: 2023-04-01\nend: 2024-03-31\n*/\n" +
			"SELECT CAST({{ start }} AS DATE) AS fy, sum(amount) AS revenue FROM {{ ref(\"staging.orders\") }} WHERE order_date >= {{ start }} AND order_date < {{ end }}",
	})
	sel := plan.Selection{Now: jan2024}
	if s := e.run(sel, runner.RunOptions{}); s.Failed+s.Blocked != 0 || s.Succeeded == 0 {
		t.Fatalf("the first run: %+v", s)
	}
	bothWays(t, e, e.runner, sel, "built")
	// A day republished makes its week stale, both ways.
	if _, err := e.db.DB().Exec("UPDATE refill.partitions SET published_at = TIMESTAMP '2030-01-01 00:00:00' WHERE model = 'staging.orders' AND partition_key = '2024-01-10'"); err != nil {
		t.Fatal(err)
	}
	lines := planLines(bothWays(t, e, e.runner, sel, "a day republished"))
	if !strings.Contains(lines, "marts.sunday_weeks 2024-01-07 upstream") || !strings.Contains(lines, "marts.fiscal_years 2023-04 upstream") {
		t.Errorf("after a day was republished the plan is\n%s", lines)
	}
}

// A model's start moved later leaves records outside its range: the next
// run removes those partitions and rebuilds what read them, down the
// graph. Planned from the summaries, the models downstream read only
// their recent records, so the readers of the removed partitions (and of
// the partitions rebuilt because of them) were left out: an oracle run
// found hourly's start moved, daily's old days rebuilt, and the rolling
// days reading them not.
func TestPlanFromSummariesAfterAStartMovedLater(t *testing.T) {
	t.Parallel()
	// Days without orders make days of revenue without rows.
	const daily = "models/marts/daily_revenue.sql"
	e := newEnv(t, map[string]string{daily: strings.Replace(string(shopFS(t, nil)[daily].Data), "  - row_count: {min: 1}\n", "", 1)})
	sel := plan.Selection{Now: jan2024}
	e.run(sel, runner.RunOptions{})
	total := int(e.count("SELECT count(*) FROM refill.partitions"))
	const path = "models/staging/orders.sql"
	e.fsys[path].Data = []byte(strings.Replace(string(e.fsys[path].Data), "start: 2024-01-01", "start: 2024-03-01", 1))
	e.load()
	c := &countingLedger{Adapter: e.db}
	r := e.with(c)
	lines := planLines(bothWays(t, e, r, sel, "moved"))
	for _, want := range []string{
		"staging.orders 2024-01-01 remove",
		"marts.daily_revenue 2024-02-29 upstream",
		// Rolling days read the six days before them: through March 6.
		"marts.rolling_revenue 2024-01-01 upstream",
		"marts.rolling_revenue 2024-03-06 upstream",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("the plan after the start moved lacks %q:\n%s", want, lines)
		}
	}
	for _, sel := range []plan.Selection{
		{Now: jan2024, Select: []string{"marts.rolling_revenue"}},
		{Now: jan2024, Select: []string{"+marts.rolling_revenue"}, From: "2024-02-20", To: "2024-03-10"},
		{Now: jan2024, Mode: plan.ModeMissing},
	} {
		bothWays(t, e, r, sel, "moved")
	}
	if s := e.run(sel, runner.RunOptions{}); s.Failed+s.Blocked != 0 {
		t.Fatalf("the run after the start moved: %+v", s)
	}
	// Once removed, the old partitions hold nothing to do: planning reads
	// few records again.
	c.read = 0
	bothWays(t, e, r, sel, "removed")
	if c.read*2 >= total {
		t.Errorf("after the removals planning read %d of %d records", c.read, total)
	}
}
