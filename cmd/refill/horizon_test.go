package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPartitionsKeepNamedModels: --partitions never drops a whole-table
// model (its one partition covers every period), nor a list model named on
// the command line (all its values, unless the keys name some); a list
// model matched by a path glob whose values it does not name is left out
// with a note.
func TestPartitionsKeepNamedModels(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	pl := func(args ...string) planOutput {
		t.Helper()
		r := mustRefill(t, dir, append([]string{"plan", now, "--output", "json"}, args...)...)
		var p planOutput
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keys := func(p planOutput) string {
		var out []string
		for _, st := range append(p.Steps, p.Blocked...) {
			out = append(out, st.Model+" "+st.Partition)
		}
		return strings.Join(out, ", ")
	}
	if got := keys(pl("marts.customer_lifetime", "--partitions", "2024-01-05")); got != "marts.customer_lifetime all" {
		t.Errorf("a whole-table model named with --partitions plans %q", got)
	}
	if got := keys(pl("marts.revenue_by_region", "--partitions", "2024-01-05")); got != "marts.revenue_by_region eu, marts.revenue_by_region us, marts.revenue_by_region apac" {
		t.Errorf("a list model named with --partitions of dates plans %q", got)
	}
	if got := keys(pl("marts.revenue_by_region", "--partitions", "eu")); got != "marts.revenue_by_region eu" {
		t.Errorf("a list model named with --partitions of one value plans %q", got)
	}
	p := pl("staging.orders", "marts/revenue_*", "--partitions", "2024-01-05")
	if got := keys(p); got != "staging.orders 2024-01-05" || len(p.Notes) != 1 ||
		!strings.Contains(p.Notes[0], "marts.revenue_by_region: left out: --partitions names none of its values (eu, us, apac)") {
		t.Errorf("a list model matched by a glob: plans %q, notes %q", got, p.Notes)
	}
}

// TestRefillTestSamplesListModelsThroughItsHorizon: a list model over an
// hourly model costs refill test the sample's hours, not every hour to
// today; every model of the sample runs.
func TestRefillTestSamplesListModelsThroughItsHorizon(t *testing.T) {
	t.Parallel()
	dir := shop(t, map[string]string{
		"models/staging/hourly_orders.sql": strings.Replace(strings.Replace(hourlyOrders, "start: 2024-04-01", "start: 2024-01-01", 1), "end: 2024-04-30T23\n", "", 1),
		"models/marts/hourly_by_region.sql": `/* refill
partition_by: region
values: [eu, us, apac]
*/
SELECT {{ partition }} AS region, CAST(count(*) AS BIGINT) AS hours FROM {{ ref("staging.hourly_orders") }}`,
	})
	started := time.Now()
	r := mustRefill(t, dir, "test", "--now=2026-12-03T05:00:00Z")
	took := time.Since(started)
	for _, want := range []string{
		"ok       run       staging.hourly_orders  (72 partitions ran (2024-01-01T00 .. 2024-01-03T23))",
		"ok       run       marts.hourly_by_region  (3 partitions ran (eu .. apac))",
		"0 failed, 0 skipped in",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("refill test does not say %q:\n%s", want, r.stdout)
		}
	}
	t.Logf("refill test took %s", took)
	// A sample that reaches no partition of a model says so, and fails
	// unless allowed.
	if r := refill(t, dir, "test", "--now=2026-12-03T05:00:00Z", "--from", "2023-06-01", "--exclude", "marts.revenue_by_region"); r.code != exitFailed ||
		!strings.Contains(r.stdout, "not run  run       marts.daily_revenue") || strings.Contains(r.stdout, "marts.revenue_by_region") {
		t.Errorf("a sample before every start: exit %d\n%s", r.code, r.stdout)
	}
	if r := refill(t, dir, "test", "--now=2026-12-03T05:00:00Z", "--from", "2023-06-01", "--allow-unsampled"); r.code != 0 {
		t.Errorf("--allow-unsampled: exit %d\n%s", r.code, r.stdout)
	}
}
