package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// Models that change: a reflowed model is not stale, a changed literal is,
// and plan --explain shows what changed.
func TestReflowedModelIsNotStale(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01", "--to", "2024-01", janNow)
	edit(t, dir, "models/marts/daily_revenue.sql", "SELECT order_date,\n       count(*) AS orders,",
		"-- one row per day\nSELECT   order_date ,\n  count( * ) AS orders , /* all of them */")
	if r := mustRefill(t, dir, "plan", "--from", "2024-01", "--to", "2024-01", janNow); !strings.Contains(r.stdout, "Nothing to do") {
		t.Errorf("a reflowed model is planned:\n%s", r.stdout)
	}
	edit(t, dir, "models/marts/daily_revenue.sql", "status = 'returned'", "status = 'refunded'")
	r := mustRefill(t, dir, "plan", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow, "--explain")
	for _, want := range []string{"31     stale", "marts.daily_revenue: 31 partitions built by version",
		"-       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned",
		"+       sum(CASE WHEN status = 'refunded' THEN amount ELSE 0 END) AS returned"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan --explain lacks %q:\n%s", want, r.stdout)
		}
	}
	// Unified order: a changed line's old text before its new.
	if del, ins := strings.Index(r.stdout, "-       sum(CASE WHEN status = 'returned'"), strings.Index(r.stdout, "+       sum(CASE WHEN status = 'refunded'"); del > ins {
		t.Errorf("the diff prints the new line before the old:\n%s", r.stdout)
	}
	// The reflow itself is not part of the diff's meaning, but the text
	// shown is the model as written.
	if !strings.Contains(r.stdout, "+-- one row per day") && !strings.Contains(r.stdout, " -- one row per day") {
		t.Errorf("the diff does not show the model as written:\n%s", r.stdout)
	}
}

// A forward-only change: accept records the new version for the built
// partitions without recomputing them; new partitions use the new SQL.
func TestAcceptForwardOnly(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	before := fmt.Sprint(queryRows(t, dir, `SELECT sum(revenue), max(published_at) FROM marts.daily_revenue JOIN refill.partitions ON model = 'marts.daily_revenue'`))
	edit(t, dir, "models/marts/daily_revenue.sql", "sum(amount) AS revenue", "sum(amount) * 2 AS revenue")
	if r := refill(t, dir, "accept", "marts.daily_revenue", janNow); r.code != exitUsage || !strings.Contains(r.stdout, "* 2 AS revenue") {
		t.Errorf("accept without --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := mustRefill(t, dir, "accept", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow, "--yes")
	if !strings.Contains(r.stdout, "marts.daily_revenue: 31 partitions built by version") {
		t.Errorf("accept:\n%s", r.stdout)
	}
	if after := fmt.Sprint(queryRows(t, dir, `SELECT sum(revenue), max(published_at) FROM marts.daily_revenue JOIN refill.partitions ON model = 'marts.daily_revenue'`)); after != before {
		t.Errorf("accept changed data or publication times: %s -> %s", before, after)
	}
	p := mustRefill(t, dir, "plan", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	if !strings.Contains(p.stdout, "Nothing to") || !strings.Contains(p.stdout, "forward-only since") {
		t.Errorf("plan after accept:\n%s", p.stdout)
	}
	// February, built after the change, uses the new SQL.
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--from", "2024-02-01", "--to", "2024-02-01", "--now=2024-02-02")
	got := queryRows(t, dir, `SELECT round(revenue, 2) FROM marts.daily_revenue WHERE order_date = DATE '2024-02-01'`)
	want := queryRows(t, dir, `SELECT round(2 * sum(amount), 2) FROM staging.orders WHERE order_date = DATE '2024-02-01'`)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("a new partition after accept has %v, want %v (the new SQL)", got, want)
	}
	if s := query(t, dir, `SELECT status FROM refill.runs WHERE status = 'accepted'`); s != "accepted" {
		t.Errorf("the acceptance is not in refill.runs: %v", s)
	}
}

// A schema change refused: exit 1, the difference printed, the table as it was.
func TestSchemaChangeRefused(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	edit(t, dir, "models/marts/daily_revenue.sql", "count(*) AS orders,", "count(*) AS orders, count(DISTINCT customer_id) AS customers,")
	r := refill(t, dir, "run", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	if r.code != exitFailed || !strings.Contains(r.stdout, "schema change refused") || !strings.Contains(r.stdout, "+ customers BIGINT: new") ||
		!strings.Contains(r.stdout, "on_schema_change: append") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
	if n := query(t, dir, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'daily_revenue' AND column_name = 'customers'`); n != int64(0) {
		t.Error("a refused change altered the table")
	}
	edit(t, dir, "models/marts/daily_revenue.sql", "start: 2024-01-01\n", "start: 2024-01-01\non_schema_change: append\n")
	mustRefill(t, dir, "run", "marts.daily_revenue", "--from", "2024-01", "--to", "2024-01", janNow)
	if n := query(t, dir, `SELECT count(*) FROM marts.daily_revenue WHERE customers IS NULL OR customers = 0`); n != int64(0) {
		t.Errorf("%v days without customers after append", n)
	}
}

// A full refresh killed halfway leaves the old table; completed, it
// replaces it.
func TestFullRefreshKilledLeavesTheOldTable(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := crashProject(t)
	mustRefill(t, dir, "run", crashNow)
	base := baseSums(t, dir)
	check := func(k int64) {
		t.Helper()
		for d, got := range dayState(t, dir) {
			if got[0] != 40 || got[1] != k*base[d] {
				t.Fatalf("%s = %v, want 40 rows summing to %d", d, got, k*base[d])
			}
		}
	}
	ledger := func() string {
		return fmt.Sprint(queryRows(t, dir, `SELECT count(*), count(DISTINCT fingerprint), max(published_at) FROM refill.partitions`))
	}
	before := ledger()
	for trial := 0; trial < 3; trial++ {
		// Killed once some partitions are staged (the statement log shows
		// each stage's CREATE), before the table is replaced.
		p := startRun(t, bin, "--project", dir, "run", "m", "--full-refresh", crashNow, "--var", "k=2", "--var", "work=2000000",
			"--concurrency", "2", "--verbose")
		waitFor(t, p.lines, `CREATE TABLE "refill_stages"."refill_stage"`, 5+20*trial)
		p.signal(syscall.SIGKILL)
		if code := p.wait(); code != -1 {
			t.Fatalf("the full refresh finished before the kill (exit %d)", code)
		}
		check(1)
		if after := ledger(); after != before {
			t.Fatalf("a killed full refresh changed the ledger: %s -> %s", before, after)
		}
	}
	// Interrupted (SIGINT) halfway, it stops staging, leaves the old table
	// and says so: exit 130, not success.
	p := startRun(t, bin, "--project", dir, "run", "m", "--full-refresh", crashNow, "--var", "k=2", "--var", "work=2000000",
		"--concurrency", "2", "--verbose")
	waitFor(t, p.lines, `CREATE TABLE "refill_stages"."refill_stage"`, 5)
	p.signal(syscall.SIGINT)
	if code := p.wait(); code != exitInterrupted {
		t.Errorf("an interrupted full refresh exits %d, want %d\n%s", code, exitInterrupted, lastLines(p.out.String(), 10))
	}
	check(1)
	if after := ledger(); after != before {
		t.Fatalf("an interrupted full refresh changed the ledger: %s -> %s", before, after)
	}
	r := mustRefill(t, dir, "run", "m", "--full-refresh", crashNow, "--var", "k=2")
	if !strings.Contains(r.stdout, "79     rebuild: --full-refresh") {
		t.Errorf("full refresh plan:\n%s", r.stdout)
	}
	check(2)
	if n := query(t, dir, `SELECT count(DISTINCT published_at) FROM refill.partitions WHERE model = 'm'`); n != int64(1) {
		t.Errorf("a full refresh published at %v moments", n)
	}
	if n := query(t, dir, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill_stage'`); n != int64(0) {
		t.Errorf("%v stages left", n)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
