package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNumericFlags: a numeric flag whose value means nothing is refused
// with exit 2 before anything opens the warehouse, whichever command takes
// it; a flag left out keeps its default.
func TestNumericFlags(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lookback", "-5"}, "--lookback -5: want 0 or more"},
		{[]string{"plan", "--lookback", "-1"}, "--lookback -1: want 0 or more"},
		{[]string{"run", "--concurrency", "0"}, "--concurrency 0: want 1 or more"},
		{[]string{"run", "-j", "-2"}, "--concurrency -2: want 1 or more"},
		{[]string{"run", "--batch", "0"}, "--batch 0: want 1 or more"},
		{[]string{"run", "--max-partitions", "0"}, "--max-partitions 0: want 1 or more"},
		{[]string{"run", "--retries", "-1"}, "--retries -1: want 0 or more"},
		{[]string{"run", "--retry-delay", "-1s"}, "--retry-delay -1s: want a duration of 0 or more"},
		{[]string{"run", "--wait", "-1m"}, "--wait -1m0s: want a duration of 0 or more"},
	} {
		r := refill(t, dir, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("refill %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "warehouse.duckdb")); !os.IsNotExist(err) {
		t.Errorf("a refused flag created the warehouse: %v", err)
	}
	// --lookback 0 is a value (no lookback), not the default.
	mustRefill(t, dir, "seed")
	if r := mustRefill(t, dir, "plan", "--lookback", "0", "staging.orders", janNow); !strings.Contains(r.stdout, "(no lookback)") {
		t.Errorf("plan --lookback 0 still plans lookback partitions:\n%s", r.stdout)
	}
}

// TestVersion: --version names refill's, Go's, DuckDB's and every
// driver's version.
func TestVersion(t *testing.T) {
	t.Parallel()
	r := refill(t, t.TempDir(), "--version")
	if r.code != 0 {
		t.Fatalf("--version: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"refill ", "go1.", "DuckDB library      v1.", "github.com/duckdb/duckdb-go/v2 v2.",
		"github.com/ClickHouse/clickhouse-go/v2 v2.", "github.com/snowflakedb/gosnowflake v1."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--version lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestVersionNamesTheCommit: a binary built as the Makefile builds it
// names the commit it was built from, for bug reports.
func TestVersionNamesTheCommit(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	describe, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Fatalf("git describe: %v", err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if want := "refill " + strings.TrimSpace(string(describe)) + ","; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("--version = %q (%v), want it to start %q", out, err, want)
	}
}

// TestUnknownCommand: a misspelt command is a usage error (exit 2) that
// suggests the command meant.
func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	r := refill(t, t.TempDir(), "stats")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown command "stats": did you mean status?`) {
		t.Errorf("refill stats: exit %d\n%s", r.code, r.stderr)
	}
	if r := refill(t, t.TempDir(), "xyzzy"); r.code != exitUsage || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("refill xyzzy: exit %d\n%s", r.code, r.stderr)
	}
}

// TestUnknownFlag: a misspelt flag suggests the flag meant, the
// command's own or a global one.
func TestUnknownFlag(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"run --form 2024-01":     "unknown flag: --form: did you mean --from?",
		"plan --partitons x":     "unknown flag: --partitons: did you mean --partitions?",
		"status --projcet x":     "unknown flag: --projcet: did you mean --project?",
		"validate --zzzzzzzzzzz": "unknown flag: --zzzzzzzzzzz\n",
	} {
		r := refill(t, t.TempDir(), strings.Fields(args)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("refill %s: exit %d\n%s\nwant %q", args, r.code, r.stderr, want)
		}
	}
}

// TestHelpListsCommands: every command the README documents is in --help,
// man included.
func TestHelpListsCommands(t *testing.T) {
	t.Parallel()
	r := refill(t, t.TempDir(), "--help")
	for _, c := range []string{"validate", "plan", "run", "status", "render", "seed", "graph", "test", "init", "accept", "man", "completion"} {
		if !strings.Contains(r.stdout, "\n  "+c+" ") {
			t.Errorf("--help does not list %s:\n%s", c, r.stdout)
		}
	}
}

// TestSnowflakeDriverIsQuiet: a failed Snowflake login is reported by
// refill alone; the driver's own log lines (time=... level=error ...) do
// not reach stderr.
func TestSnowflakeDriverIsQuiet(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  sf:\n    adapter: snowflake\n"+
		"    dsn: refill:not-a-password@refill-ci-no-such-account/DB/SCH?loginTimeout=5\n")
	write(t, dir, "models/m.sql", "/* refill\n*/\nSELECT 1 AS x\n")
	cmd := exec.Command(bin, "--project", dir, "plan", "--target", "sf")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitWarehouse || !strings.Contains(stderr.String(), "cannot connect") {
		t.Fatalf("plan against an unreachable account: exit %d (%v)\n%s", code, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "level=") {
		t.Errorf("the driver's log reached stderr:\n%s", stderr.String())
	}
}

// TestLedgerErrorsAreRedacted: a secret a failed statement quotes (here a
// template var whose value is a secret-named environment variable's) is
// masked in the ledger's error columns as in everything refill prints,
// which name the failed step and statement.
func TestLedgerErrorsAreRedacted(t *testing.T) {
	t.Setenv("SHOP_API_TOKEN", "hunter2-secret")
	dir := shop(t, map[string]string{"models/staging/orders.sql": `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
*/
SELECT order_date, CAST(error({{ var("note") }}) AS INTEGER) AS x
FROM {{ source("raw.orders") }} WHERE order_date >= {{ start }} AND order_date < {{ end }}`})
	mustRefill(t, dir, "seed") // seeding needs no var of a model
	r := refill(t, dir, "run", "staging.orders", "--partitions", "2024-01-02", now, "--var", "note=hunter2-secret")
	if r.code != exitFailed {
		t.Fatalf("run: exit %d, want %d\n%s%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	got := fmt.Sprint(query(t, dir, `SELECT string_agg(error, ' ') FROM refill.partitions`))
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "***") {
		t.Errorf("the ledger's error column holds %q; want the secret masked", got)
	}
	if strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Errorf("a secret was printed:\n%s%s", r.stdout, r.stderr)
	}
	// The failure names its step and the statement's first line, without
	// --verbose, on the screen and in the ledger.
	const where = `stage: CREATE TABLE "refill_stages"."refill_stage"."staging__orders__`
	if !strings.Contains(r.stdout, where) || !strings.Contains(got, where) {
		t.Errorf("the failure does not say where it happened (%s):\n%s\nledger: %s", where, r.stdout, got)
	}
}

// TestNothingToDoSaysWhatIsLeftOut: a plan with nothing to do says that
// the partitions still open are left out, and when they complete.
func TestNothingToDoSaysWhatIsLeftOut(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--now=2024-02-01T12:00:00Z", "--yes", "--quiet")
	r := mustRefill(t, dir, "plan", "staging.orders", "--now=2024-02-01T12:00:00Z")
	if !strings.Contains(r.stdout, "Nothing to do") || !strings.Contains(r.stdout, "Partitions still open at 2024-02-01 12:00 UTC are left out") {
		t.Errorf("plan:\n%s", r.stdout)
	}
}

// TestRenderBatchOnlyWhereRunBatches: render shows a batch statement only
// for a model run would batch.
func TestRenderBatchOnlyWhereRunBatches(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	r := refill(t, dir, "render", "marts.monthly_revenue", "--partition", "2024-01,2024-02")
	if r.code != exitUsage || !strings.Contains(r.stderr, "marts.monthly_revenue declares no batch:") {
		t.Errorf("render of a batch of an unbatched model: exit %d\n%s", r.code, r.stderr)
	}
	if r := mustRefill(t, dir, "render", "marts.daily_revenue", "--partition", "2024-01-01,2024-01-02"); !strings.Contains(r.stdout, "2024-01-01..2024-01-02") {
		t.Errorf("render of a batch of a batched model:\n%s", r.stdout)
	}
}

// TestFailuresAreGrouped: partitions failing alike are one line of the
// summary, with a count and a hint, not one line each.
func TestFailuresAreGrouped(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil) // not seeded: raw.orders does not exist
	r := refill(t, dir, "run", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-31", janNow)
	if r.code != exitFailed {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	for _, want := range []string{"Failed partitions (31):", "staging.orders 31 partitions, from 2024-01-01 to 2024-01-31: ", "hint: a table it reads does not exist"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Catalog Error"); n > 2 {
		t.Errorf("the same error is printed %d times:\n%s", n, out)
	}
}

// TestUnsetVarBlocksOnlyItsModel: a model reading a var with no value
// stops the commands that select it, at the var's position, and nothing
// else.
func TestUnsetVarBlocksOnlyItsModel(t *testing.T) {
	t.Parallel()
	dir := shop(t, map[string]string{"models/marts/by_segment.sql": "SELECT {{ var(\"segment\") }} AS segment"})
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--partitions", "2024-01-02", janNow)
	want := `models/marts/by_segment.sql:1:11: var("segment") is not set`
	for _, args := range [][]string{{"run", janNow}, {"plan", "marts.by_segment", janNow}, {"render", "marts.by_segment"}, {"validate"}} {
		r := refill(t, dir, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("refill %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// TestCompletion completes the project's names: models and tags for
// MODEL arguments, targets, and partition keys of the named model.
func TestCompletion(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"run", "marts.d"}, []string{"marts.daily_revenue"}, "staging.orders"},
		{[]string{"plan", "tag:"}, []string{"tag:finance", "tag:core"}, "marts.daily_revenue"},
		{[]string{"plan", "--exclude", "stag"}, []string{"staging.orders"}, "marts."},
		{[]string{"status", "--target", ""}, []string{"dev", "clickhouse", "prod"}, "marts."},
		{[]string{"status", "marts.m"}, []string{"marts.monthly_revenue"}, "staging."},
		{[]string{"render", "marts.revenue_by_region", "--partition", ""}, []string{"eu", "us", "apac"}, "2024"},
		{[]string{"render", "marts.monthly_revenue", "--partition", "2024-0"}, []string{"2024-01", "2024-04"}, "2024-01-01"},
		{[]string{"run", "staging.orders", "--partitions", "2024-01-02,2024-01-0"}, []string{"2024-01-02,2024-01-03"}, "marts."},
	} {
		r := refill(t, dir, append([]string{"__complete"}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w+"\n") {
				t.Errorf("completing %q: %q missing from\n%s", tc.args, w, r.stdout)
			}
		}
		if strings.Contains(r.stdout, tc.not) {
			t.Errorf("completing %q offers %q:\n%s", tc.args, tc.not, r.stdout)
		}
	}
}

// TestDefaultRangeEndsAtEnd: the plan header says where the default range
// ends, and a model's end: bounds it however late the clock is.
func TestDefaultRangeEndsAtEnd(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	r := mustRefill(t, dir, "plan", "staging.orders", "--offline", "--now=2024-09-01", "--output", "json")
	var pl struct {
		Steps []struct{ Partition string } `json:"steps"`
	}
	if err := jsonUnmarshal(r.stdout, &pl); err != nil || len(pl.Steps) == 0 {
		t.Fatalf("plan: %v\n%s", err, r.stdout)
	}
	if last := pl.Steps[len(pl.Steps)-1].Partition; last != "2024-04-30" {
		t.Errorf("the default range of a model with end: 2024-04-30 ends at %s in September", last)
	}
	r = mustRefill(t, dir, "plan", "staging.orders", "--offline", "--now=2024-09-01")
	if !strings.Contains(r.stdout, "range: each model's start through its last complete partition at 2024-09-01 00:00 UTC, or its end: if earlier") {
		t.Errorf("the plan header does not say where the range ends:\n%s", r.stdout)
	}
}
