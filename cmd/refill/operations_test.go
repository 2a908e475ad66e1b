package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/models"
)

// The tests of this file walk the operations on models that change (a full
// refresh, start: and end: edits, accept) on every kind of model, each
// checked against the model's recomputation (recompute) and against what
// status says.

const cumulative = "marts.customer_revenue_to_date"

// shopCheck compares every table of the shop in dir with its
// recomputation over the partitions the ledger holds, at now.
func shopCheck(t *testing.T, dir, now string) {
	t.Helper()
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{LookupEnv: func(string) (string, bool) { return "x", true }}))
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, r := range queryRows(t, dir, `SELECT model, partition_key FROM refill.partitions WHERE state = 'done'`) {
		held[r[0].(string)+" "+r[1].(string)] = true
	}
	clock, err := time.Parse(time.RFC3339, strings.TrimPrefix(now, "--now=")+"T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	// Through the clock: every partition the ledger holds, and no other.
	for _, diff := range recompute(t, dir, p, clock, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), held, nil) {
		t.Error(diff)
	}
}

// statusStates returns every partition's state as status --output json
// gives it, by "model key".
func statusOf(t *testing.T, dir string, args ...string) map[string]string {
	t.Helper()
	r := mustRefill(t, dir, append([]string{"status", "--output", "json"}, args...)...)
	var st struct {
		Models []struct {
			Model      string
			Partitions []struct{ Partition, State string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range st.Models {
		for _, p := range m.Partitions {
			out[m.Model+" "+p.Partition] = p.State
		}
	}
	return out
}

// TestFullRefreshOfACumulativeModel: a full refresh rebuilds a chain in
// order from its start (it used to wait on itself, skip every day, and
// exit 0), and so does on_schema_change: rebuild after a new column.
func TestFullRefreshOfACumulativeModel(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+"+cumulative, "--from", "2024-01", "--to", "2024-01", janNow)
	r := mustRefill(t, dir, "run", cumulative, "--full-refresh", janNow, "--yes", "--output", "json")
	var out runOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Succeeded != 31 || out.Skipped != 0 || out.Failed != 0 {
		t.Errorf("a full refresh of the chain: %d succeeded, %d skipped, %d failed; want 31, 0, 0", out.Succeeded, out.Skipped, out.Failed)
	}
	checkRunningTotals(t, dir, "after a full refresh")
	// A new column, rebuilt by on_schema_change: rebuild.
	edit(t, dir, "models/marts/customer_revenue_to_date.sql", "depends_on_past: self", "depends_on_past: self\non_schema_change: rebuild")
	edit(t, dir, "models/marts/customer_revenue_to_date.sql", "  revenue_to_date: double", "  revenue_to_date: double\n  one: integer")
	edit(t, dir, "models/marts/customer_revenue_to_date.sql", "sum(revenue) AS revenue_to_date", "sum(revenue) AS revenue_to_date, 1 AS one")
	if p := mustRefill(t, dir, "plan", cumulative, janNow); !strings.Contains(p.stdout, "rebuild") {
		t.Fatalf("the new column does not plan a rebuild:\n%s", p.stdout)
	}
	mustRefill(t, dir, "run", cumulative, janNow, "--yes")
	if n := query(t, dir, `SELECT count(*) FROM marts.customer_revenue_to_date WHERE one = 1`); n == int64(0) {
		t.Errorf("the rebuild did not bring the new column")
	}
	checkRunningTotals(t, dir, "after a rebuild")
	// plan --full-refresh previews exactly what run --full-refresh does.
	p := mustRefill(t, dir, "plan", cumulative, "--full-refresh", janNow, "--output", "json")
	var pl planOutput
	if err := json.Unmarshal([]byte(p.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	r = mustRefill(t, dir, "run", cumulative, "--full-refresh", janNow, "--yes", "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps) != 31 || pl.Steps[0].Reason != "rebuild" || len(out.Partitions) != len(pl.Steps) {
		t.Errorf("plan --full-refresh has %d steps (%v), run --full-refresh ran %d", len(pl.Steps), pl.Steps[0], len(out.Partitions))
	}
}

// TestStartAndEndEdits: moving a cumulative model's start later removes
// the days before it (rows and records) and restarts its chain there, so
// that its first day reads an empty day before it; moving it back builds
// them again; moving end: earlier removes the days after it; status shows
// the days outside before the run removes them.
func TestStartAndEndEdits(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+"+cumulative, "+marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	file := "models/marts/customer_revenue_to_date.sql"
	edit(t, dir, file, "start: 2024-01-01", "start: 2024-01-05")
	st := statusOf(t, dir, cumulative, "--from", "2024-01", "--to", "2024-01", janNow)
	if st[cumulative+" 2024-01-02"] != "outside" || st[cumulative+" 2024-01-05"] != "stale" || st[cumulative+" 2024-01-20"] != "stale" {
		t.Errorf("after start: moved later, status says 01-02 %q, 01-05 %q, 01-20 %q; want outside, stale, stale",
			st[cumulative+" 2024-01-02"], st[cumulative+" 2024-01-05"], st[cumulative+" 2024-01-20"])
	}
	p := mustRefill(t, dir, "plan", cumulative, "--from", "2024-01", "--to", "2024-01", janNow)
	if !strings.Contains(p.stdout, "remove: outside the model's range (start: 2024-01-05") {
		t.Errorf("the plan does not say it removes the days before start:\n%s", p.stdout)
	}
	mustRefill(t, dir, "run", cumulative, "--from", "2024-01", "--to", "2024-01", janNow)
	if n := query(t, dir, `SELECT count(*) FROM marts.customer_revenue_to_date WHERE order_date < DATE '2024-01-05'`); n != int64(0) {
		t.Errorf("%v rows before the new start remain", n)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = '`+cumulative+`' AND partition_key < '2024-01-05' AND state <> 'removed'`); n != int64(0) {
		t.Errorf("%v records before the new start are not removed", n)
	}
	shopCheck(t, dir, "--now=2024-02-01")
	// Back to 1 January: the days before are built again, the chain too.
	edit(t, dir, file, "start: 2024-01-05", "start: 2024-01-01")
	mustRefill(t, dir, "run", cumulative, "--from", "2024-01", "--to", "2024-01", janNow)
	checkRunningTotals(t, dir, "after start: moved back")
	// end: earlier removes the days after it; a date is its whole day.
	edit(t, dir, "models/marts/daily_revenue.sql", "end: 2024-04-30", "end: 2024-01-20")
	st = statusOf(t, dir, "marts.daily_revenue", janNow)
	if st["marts.daily_revenue 2024-01-25"] != "outside" {
		t.Errorf("after end: moved earlier, status says 01-25 %q, want outside", st["marts.daily_revenue 2024-01-25"])
	}
	mustRefill(t, dir, "run", "marts.daily_revenue", "--from", "2024-01-21", "--to", "2024-01-31", janNow, "--mode", "all")
	if n := query(t, dir, `SELECT count(*) FROM marts.daily_revenue WHERE order_date > DATE '2024-01-20'`); n != int64(0) {
		t.Errorf("%v rows after the new end remain", n)
	}
	if p := mustRefill(t, dir, "plan", "marts.daily_revenue", janNow); !strings.Contains(p.stdout, "Nothing to do") {
		t.Errorf("after the removal the plan is not empty:\n%s", p.stdout)
	}
	// Rewriting what the removed days read does not build them again (it
	// did: the ledger's removed records were taken for built ones).
	mustRefill(t, dir, "run", "staging.orders", "marts.daily_revenue", "--from", "2024-01-15", "--to", "2024-01-31", janNow, "--mode", "all")
	if n := query(t, dir, `SELECT count(*) FROM marts.daily_revenue WHERE order_date > DATE '2024-01-20'`); n != int64(0) {
		t.Errorf("%v rows after the new end are back once staging.orders was rewritten", n)
	}
	if p := mustRefill(t, dir, "plan", "marts.daily_revenue", janNow); !strings.Contains(p.stdout, "Nothing to do") {
		t.Errorf("after rewriting staging.orders the plan is not empty:\n%s", p.stdout)
	}
	shopCheck(t, dir, "--now=2024-02-01")
}

// TestEndDateCoversItsDay: end: as a date means through that day at every
// grain: for an hourly model, its last hour.
func TestEndDateCoversItsDay(t *testing.T) {
	t.Parallel()
	p, err := models.Load(os.DirFS(shop(t, map[string]string{"models/staging/hourly_orders.sql": strings.Replace(hourlyOrders, "end: 2024-04-30T23", "end: 2024-04-02", 1)})),
		withAdapters(models.LoadOptions{LookupEnv: func(string) (string, bool) { return "x", true }}))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := p.Model("staging.hourly_orders")
	if got := m.Config.End; !got.Equal(time.Date(2024, 4, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("end: 2024-04-02 of an hourly model ends at %v, want the end of that day", got)
	}
}

// TestStatusIsTransitive: after a day of a cumulative model is
// republished, every day after it, which carried it forward, is stale in
// status too (it said done while holding wrong totals), as the plan says.
func TestStatusIsTransitive(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+"+cumulative, "--from", "2024-01-01", "--to", "2024-01-10", janNow)
	execSQL(t, dir, `INSERT INTO raw.orders VALUES (99998, 7, DATE '2024-01-03', TIMESTAMP '2024-01-03 10:00:00', 100, 'placed', 'eu')`)
	mustRefill(t, dir, "run", "staging.orders", "--partitions", "2024-01-03", "--mode", "all", janNow)
	st := statusOf(t, dir, cumulative, "--from", "2024-01-01", "--to", "2024-01-10", janNow)
	for _, day := range []string{"2024-01-03", "2024-01-04", "2024-01-10"} {
		if st[cumulative+" "+day] != "stale" {
			t.Errorf("%s %s is %q, want stale", cumulative, day, st[cumulative+" "+day])
		}
	}
	if st[cumulative+" 2024-01-02"] != "done" {
		t.Errorf("%s 2024-01-02 is %q, want done", cumulative, st[cumulative+" 2024-01-02"])
	}
	// What status calls stale is what the plan runs.
	p := mustRefill(t, dir, "plan", cumulative, "--from", "2024-01-01", "--to", "2024-01-10", janNow, "--output", "json")
	var pl planOutput
	if err := json.Unmarshal([]byte(p.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	planned := map[string]bool{}
	for _, s := range pl.Steps {
		planned[s.Model+" "+s.Partition] = true
	}
	for k, s := range st {
		if (s == "done") == planned[k] {
			t.Errorf("%s: status %s, planned %v", k, s, planned[k])
		}
	}
}

// TestForwardOnlyNoteIsTheLedgers: the forward-only note counts the
// partitions still holding rows of the replaced version: none after a full
// refresh; and an accept that stopped after its records and before its
// version claims nothing.
func TestForwardOnlyNoteIsTheLedgers(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "marts.daily_revenue", "+marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	edit(t, dir, "models/marts/daily_revenue.sql", "AS revenue", "AS revenue, 1 AS one")
	// An accept whose version write fails: its records are written first.
	rec := recorder.New()
	rec.FailWhen(func(e recorder.Entry) error {
		if strings.Contains(e.SQL, `"versions"`) && strings.HasPrefix(e.SQL, "INSERT") {
			return adapters.ErrOutsideWindow // any failure
		}
		return nil
	})
	a := &app{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &strings.Builder{}, getenv: os.LookupEnv,
		configure: func(cfg any) {
			if c, ok := cfg.(*duckdb.Config); ok {
				c.Connector = rec.Wrap
			}
		}}
	if code := a.do([]string{"--project", dir, "accept", "marts.daily_revenue", janNow, "--yes"}); code == 0 {
		t.Fatalf("the accept whose version write failed exited 0")
	}
	if p := mustRefill(t, dir, "plan", "marts.daily_revenue", janNow); strings.Contains(p.stdout, "forward-only") || !strings.Contains(p.stdout, "Nothing to do") {
		t.Errorf("an accept that never recorded its version is noted, or its records were not written first:\n%s", p.stdout)
	}
	// Another change, accepted whole.
	edit(t, dir, "models/marts/daily_revenue.sql", "1 AS one", "2 AS one")
	mustRefill(t, dir, "accept", "marts.daily_revenue", janNow, "--yes")
	if p := mustRefill(t, dir, "plan", "marts.daily_revenue", janNow); !strings.Contains(p.stdout, "forward-only since") || !strings.Contains(p.stdout, "31 partition(s) keep rows") {
		t.Errorf("the plan after accept does not note it:\n%s", p.stdout)
	}
	mustRefill(t, dir, "run", "marts.daily_revenue", "--full-refresh", janNow, "--yes")
	if p := mustRefill(t, dir, "plan", "marts.daily_revenue", janNow); strings.Contains(p.stdout, "forward-only") {
		t.Errorf("after a full refresh the plan still notes a forward-only change:\n%s", p.stdout)
	}
}

// TestRemovedModelsArePruned: a deleted model's table and records are
// listed by status, and refill prune drops them; prune refuses a model
// the project has.
func TestRemovedModelsArePruned(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.monthly_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	if err := os.Remove(dir + "/models/marts/monthly_revenue.sql"); err != nil {
		t.Fatal(err)
	}
	s := mustRefill(t, dir, "status", janNow)
	if !strings.Contains(s.stdout, "In the ledger, no longer in the project") || !strings.Contains(s.stdout, "marts.monthly_revenue  marts.monthly_revenue  1") {
		t.Errorf("status does not list the deleted model:\n%s", s.stdout)
	}
	if r := refill(t, dir, "prune", "marts.daily_revenue", "--yes"); r.code != exitUsage || !strings.Contains(r.stderr, "is a model of the project") {
		t.Errorf("prune of a model the project has: exit %d\n%s", r.code, r.stderr)
	}
	if r := refill(t, dir, "prune", "marts.monthly_revenue"); r.code != exitUsage || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("prune without --yes off a terminal: exit %d\n%s", r.code, r.stderr)
	}
	mustRefill(t, dir, "prune", "marts.monthly_revenue", "--yes")
	if n := query(t, dir, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'marts' AND table_name = 'monthly_revenue'`); n != int64(0) {
		t.Errorf("prune left the table")
	}
	if s := mustRefill(t, dir, "status", janNow); strings.Contains(s.stdout, "no longer in the project") {
		t.Errorf("status lists the pruned model:\n%s", s.stdout)
	}
}

// TestRollupsWaitOnlyForWhatTheyRead: a New York weekly model over New
// York days waits for the days of its week, not for the day after it,
// whose window ends later in UTC.
func TestRollupsWaitOnlyForWhatTheyRead(t *testing.T) {
	t.Parallel()
	dir := shop(t, map[string]string{
		"models/ny/days.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ntimezone: America/New_York\npartition_type: date\n*/\n" +
			"SELECT {{ start }} AS d, count(*) AS n FROM {{ source(\"raw.orders\") }} WHERE order_ts >= {{ cast_timestamp(start) }} AND order_ts < {{ cast_timestamp(end) }}",
		"models/ny/weeks.sql": "/* refill\npartition_by: w\ngrain: week\nstart: 2024-01-01\ntimezone: America/New_York\npartition_type: date\n*/\n" +
			"SELECT {{ start }} AS w, coalesce(sum(n), 0) AS n FROM {{ ref(\"ny.days\") }} WHERE d >= {{ start }} AND d < {{ end }}",
	})
	mustRefill(t, dir, "seed")
	// Monday 8 January at 05:30 UTC: New York's Sunday 7th is complete
	// (at 05:00), Monday 8th is not.
	at := "--now=2024-01-08T05:30:00Z"
	p := mustRefill(t, dir, "plan", "+ny.weeks", at, "--output", "json")
	var pl planOutput
	if err := json.Unmarshal([]byte(p.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range pl.Steps {
		found = found || s.Model == "ny.weeks" && s.Partition == "2024-W01"
	}
	if !found {
		t.Errorf("the week of 1 January waits for a day it does not read: %s", p.stdout)
	}
}
