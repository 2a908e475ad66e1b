package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
)

// statusShop builds a shop whose ledger has every state: done, stale,
// missing and failed.
func statusShop(t *testing.T) string {
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	// History through 10 February, as of the 11th.
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-02-10", "--now=2024-02-11")
	execSQL(t, dir, `INSERT INTO raw.orders SELECT 99999, 1, DATE '2024-02-05', TIMESTAMP '2024-02-05 10:00:00', 50, 'bogus', 'eu'`)
	refill(t, dir, "run", "staging.orders", "--partitions", "2024-02-05", now, "--mode", "all")
	edit(t, dir, "models/marts/monthly_revenue.sql", "count(*) AS days", "count(*) AS days_counted")
	return dir
}

func TestStatusPicture(t *testing.T) {
	t.Parallel()
	dir := statusShop(t)
	r := mustRefill(t, dir, "status", now, "--no-color")
	adaptertest.Golden(t, "testdata/status.txt", maskRuns(r.stdout))
	// The --html page: TestStatusHTMLPage, and TestStatusPageInBrowser.
}

// maskRuns replaces what differs between test runs in status output (run
// IDs, wall-clock times, durations) with placeholders.
func maskRuns(s string) string {
	s = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`).ReplaceAllString(s, "RUN_ID                 ")
	s = regexp.MustCompile(`20[2-9]\d-\d\d-\d\d \d\d:\d\d:\d\d  \S+ `).ReplaceAllString(s, "YYYY-MM-DD HH:MM:SS  TOOK")
	return s
}

func TestInitScaffoldsAWorkingProject(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "analytics")
	r := refill(t, ".", "init", dir)
	if r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	for _, f := range []string{"refill.yml", "models/daily_events.sql", "models/daily_events.test.yml", "seeds/raw/events.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init did not create %s", f)
		}
	}
	mustRefill(t, dir, "validate")
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--yes")
	if st := mustRefill(t, dir, "status", "--no-color"); !strings.Contains(st.stdout, "ddddddd") {
		t.Errorf("status after init and run:\n%s", st.stdout)
	}
	if r := mustRefill(t, dir, "test"); !strings.Contains(r.stdout, "0 failed") {
		t.Errorf("refill test on a new project:\n%s", r.stdout)
	}
	if r := refill(t, ".", "init", dir); r.code != exitUsage {
		t.Errorf("init over an existing project: exit %d", r.code)
	}
}

func TestVerboseShowsSQLWithSecretsRedacted(t *testing.T) {
	t.Setenv("SHOP_DB_PASSWORD", "hunter2-secret")
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	r := mustRefill(t, dir, "run", "staging.orders", "--partitions", "2024-01-02", now, "--verbose", "--var", "note=hunter2-secret")
	if !strings.Contains(r.stderr, "-- sql\nCREATE TABLE \"refill_stages\".\"refill_stage\".") || !strings.Contains(r.stderr, "DELETE FROM \"staging\".\"orders\"") {
		t.Errorf("--verbose does not show the statements:\n%s", r.stderr)
	}
	// A DSN's password never appears, not even in a connection error.
	write(t, dir, "refill.yml", readFile(t, dir, "refill.yml")+"") // unchanged
	t.Setenv("SNOWFLAKE_DSN", "refill_user:hunter2-secret@nowhere.invalid/DB/ANALYTICS?loginTimeout=1&account=nowhere")
	r = refill(t, dir, "plan", "--target", "prod", now)
	if r.code != exitWarehouse {
		t.Errorf("unreachable Snowflake: exit %d, want %d\n%s", r.code, exitWarehouse, r.stderr)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("a secret was printed:\n%s", out)
		}
	}
	if !strings.Contains(r.stderr, "--offline") {
		t.Errorf("the connection error does not suggest --offline:\n%s", r.stderr)
	}
}

func TestCompletionAndManPages(t *testing.T) {
	t.Parallel()
	r := mustRefill(t, ".", "completion", "bash")
	if !strings.Contains(r.stdout, "__start_refill") {
		t.Errorf("bash completion:\n%.200s", r.stdout)
	}
	dir := t.TempDir()
	mustRefill(t, ".", "man", dir)
	b, err := os.ReadFile(filepath.Join(dir, "refill-run.1"))
	if err != nil || !strings.Contains(string(b), "--split-failed") || !strings.Contains(string(b), "EXAMPLE") {
		t.Errorf("refill-run.1: %v\n%.300s", err, b)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	for _, args := range [][]string{
		{"plan", "--from", "2024-13-01"},
		{"plan", "--frm", "2024-01-01"},
		{"plan", "no_such_model"},
		{"run", "--mode", "sometimes"},
		{"plan", "--from", "2024-02-01", "--to", "2024-01-01"},
		{"render", "marts.daily_revenue"},
		{"plan", "--target", "nope"},
	} {
		r := refill(t, dir, args...)
		if r.code != exitUsage || r.stderr == "" {
			t.Errorf("refill %v: exit %d, stderr %q; want 2 with a message", args, r.code, r.stderr)
		}
	}
	if r := refill(t, dir, "plan", "no_such_model"); !strings.Contains(r.stderr, `unknown model "no_such_model"`) {
		t.Errorf("message: %s", r.stderr)
	}
	// A broken model: exit 2, every error listed with file:line, nothing run.
	edit(t, dir, "models/marts/daily_revenue.sql", "grain: day", "grain: dya")
	edit(t, dir, "models/staging/orders.sql", "{{ start }}", "{{ strat }}")
	r := refill(t, dir, "run", now)
	if r.code != exitUsage || !strings.Contains(r.stderr, "models/marts/daily_revenue.sql:4:8: unknown grain") ||
		!strings.Contains(r.stderr, "models/staging/orders.sql:16:24: template: unknown name strat") ||
		strings.Contains(r.stderr, "unknown name start") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "warehouse.duckdb")); err == nil {
		t.Error("a run with model errors created the warehouse")
	}
}

func TestPlanEstimatesAndMaxPartitions(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	r := mustRefill(t, dir, "plan", "staging.orders", "--from", "2024-02-01", "--to", "2024-02-28", now, "--estimate", "--output", "json")
	var p planOutput
	if err := jsonUnmarshal(r.stdout, &p); err != nil {
		t.Fatal(err)
	}
	want := query(t, dir, `SELECT count(*) FROM raw.orders WHERE order_date >= DATE '2024-02-01' AND order_date < DATE '2024-02-29'`).(int64)
	if len(p.Estimates) != 1 || p.Estimates[0].Rows == nil || *p.Estimates[0].Rows < want/4 || *p.Estimates[0].Rows > want*2 {
		t.Errorf("estimate %+v for a window of %d source rows", p.Estimates, want)
	}
	if r := refill(t, dir, "plan", "--estimate", "--offline"); r.code != exitUsage {
		t.Errorf("--estimate --offline: exit %d", r.code)
	}
	r = refill(t, dir, "run", "staging.orders", "--from", "2024-02-01", "--to", "2024-02-28", now, "--max-partitions", "10")
	if r.code != exitUsage || !strings.Contains(r.stderr, "28 partitions, more than --max-partitions 10") {
		t.Errorf("--max-partitions: exit %d\n%s", r.code, r.stderr)
	}
	if n := query(t, dir, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill'`); n != int64(0) {
		t.Errorf("a refused run created the ledger")
	}
	mustRefill(t, dir, "run", "staging.orders", "--from", "2024-02-01", "--to", "2024-02-28", now, "--max-partitions", "10", "--yes", "-q")
}

func TestGraphOutput(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	r := mustRefill(t, dir, "graph")
	for _, want := range []string{
		"staging.orders  (day by order_date)  models/staging/orders.sql\n  <- source raw.orders",
		"marts.rolling_revenue  (day by day)  models/marts/rolling_revenue.sql\n  <- marts.daily_revenue (and 6 partitions back)",
		"marts.revenue_by_region  (list by region)",
		"marts.customer_lifetime  (whole table)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("graph lacks %q:\n%s", want, r.stdout)
		}
	}
	dot := mustRefill(t, dir, "graph", "staging.orders+", "--output", "dot")
	for _, want := range []string{"digraph refill {", `"staging.orders" -> "marts.daily_revenue";`, `"raw.orders" [shape=cylinder];`} {
		if !strings.Contains(dot.stdout, want) {
			t.Errorf("dot lacks %q:\n%s", want, dot.stdout)
		}
	}
	if strings.Contains(dot.stdout, "raw.customers\" ->") == false {
		t.Errorf("dot does not show the customers source:\n%s", dot.stdout)
	}
}

func TestSnowflakeOffline(t *testing.T) {
	dir := shop(t, nil)
	r := mustRefill(t, dir, "render", "marts.daily_revenue", "--partition", "2024-01-02", "--target", "prod")
	for _, want := range []string{"target prod (snowflake)", `FROM "STAGING"."ORDERS"`, `order_date >= '2024-01-02'::DATE AND order_date < '2024-01-03'::DATE`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("render --target prod lacks %q:\n%s", want, r.stdout)
		}
	}
	// No DSN, no connection: --offline plans from the model files alone.
	p := mustRefill(t, dir, "plan", "--target", "prod", "--offline", "--from", "2024-01-01", "--to", "2024-01-02", now, "--output", "json")
	var pl planOutput
	if err := jsonUnmarshal(p.stdout, &pl); err != nil {
		t.Fatal(err)
	}
	// Two days of each daily model; the whole-table and list models read
	// them through the range's horizon; the month reaches past the range
	// and is left out.
	if pl.Adapter != "snowflake" || !pl.PublishTogether || len(pl.Steps) != 12 || len(pl.Blocked) != 0 || !strings.Contains(pl.Guarantee, "transaction") ||
		len(pl.Notes) != 1 || !strings.Contains(pl.Notes[0], "marts.monthly_revenue: left out 1 partition(s) that reach past the range's end") {
		t.Errorf("offline Snowflake plan: %+v", pl)
	}
	// Without --offline it needs the DSN, and says so.
	if r := refill(t, dir, "plan", "--target", "prod", now); r.code != exitUsage || !strings.Contains(r.stderr, "SNOWFLAKE_DSN is not set") {
		t.Errorf("plan --target prod without a DSN: exit %d\n%s", r.code, r.stderr)
	}
}

func TestRefillTestReportsUnportableModels(t *testing.T) {
	dir := shop(t, map[string]string{
		"refill.yml": "targets:\n  ch: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN:-clickhouse://127.0.0.1:1/default}\"}\nvars: {min_amount: 10}\n",
		// toYYYYMM exists in ClickHouse only.
		"models/marts/monthly_revenue.sql": "/* refill\npartition_by: month_start\ngrain: month\nstart: 2024-01-01\n*/\n" +
			"SELECT toStartOfMonth(order_date) AS month_start, toYYYYMM(order_date) AS yyyymm, sum(revenue) AS revenue\n" +
			"FROM {{ ref(\"daily_revenue\") }} WHERE order_date >= {{ start }} AND order_date < {{ end }} GROUP BY month_start, yyyymm",
	})
	r := mustRefill(t, dir, "test")
	if !strings.Contains(r.stdout, "skip     run       marts.monthly_revenue") || !strings.Contains(r.stdout, "not portable to DuckDB") ||
		!strings.Contains(r.stdout, "toYYYYMM") {
		t.Errorf("the report does not name the unportable model and why:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "ok       render    marts.monthly_revenue  (partition 2024-01 on ch (clickhouse))") {
		t.Errorf("the model is not rendered for ClickHouse:\n%s", r.stdout)
	}
}

// TestValidateWithoutWarehouseVariables: on a fresh clone, with no
// warehouse variable set, validate passes on the example project and says
// which targets it could not configure; the selected target's unset
// variables are errors naming them; and an error that holds whatever the
// environment is still reported at its line.
func TestValidateWithoutWarehouseVariables(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	r := refillEnv(t, dir, nil, "validate")
	if r.code != 0 {
		t.Fatalf("validate with no variables: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"note: target cluster is not configured here: CLICKHOUSE_CLUSTER_DSN, CLICKHOUSE_CLUSTER are unset",
		"note: target clickhouse is not configured here: CLICKHOUSE_DSN is unset",
		"note: target prod is not configured here: SNOWFLAKE_DSN is unset",
		"OK: 7 models, 4 targets.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("validate does not say %q:\n%s", want, r.stdout)
		}
	}
	all := map[string]string{"CLICKHOUSE_DSN": "clickhouse://127.0.0.1:9000/default", "CLICKHOUSE_CLUSTER_DSN": "clickhouse://127.0.0.1:9000/default",
		"CLICKHOUSE_CLUSTER": "refill", "SNOWFLAKE_DSN": "u@acct/DB"}
	if r := refillEnv(t, dir, all, "validate"); r.code != 0 || strings.Contains(r.stdout, "not configured") {
		t.Errorf("validate with every variable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = refillEnv(t, dir, nil, "validate", "--target", "cluster")
	if r.code != exitUsage || !strings.Contains(r.stderr, "refill.yml:16:14: environment variable CLICKHOUSE_CLUSTER is not set") {
		t.Errorf("validate --target cluster with its variables unset: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	yml, err := os.ReadFile(filepath.Join(dir, "refill.yml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "refill.yml", strings.Replace(string(yml), "layout: sharded ", "layout: shardd  ", 1))
	r = refillEnv(t, dir, nil, "validate")
	if r.code != exitUsage || !strings.Contains(r.stderr, `refill.yml:17:13: unknown layout "shardd"`) {
		t.Errorf("an unknown layout in an unconfigured target: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write(t, dir, "refill.yml", strings.Replace(string(yml), "    cluster: ${CLICKHOUSE_CLUSTER}", "", 1))
	r = refillEnv(t, dir, nil, "validate")
	if r.code != exitUsage || !strings.Contains(r.stderr, "layout applies to a cluster") {
		t.Errorf("a layout without cluster: in an unconfigured target: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestProjectFoundByWalkingUp(t *testing.T) {
	dir := shop(t, nil)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(filepath.Join(dir, "models", "marts")); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if code := Do(t.Context(), nil, []string{"validate"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "OK: 7 models") {
		t.Errorf("validate from models/marts: exit %d %s %s", code, out.String(), errb.String())
	}
	os.Chdir(t.TempDir())
	errb.Reset()
	if code := Do(t.Context(), nil, []string{"plan"}, strings.NewReader(""), &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "no refill.yml in this folder or any above it") {
		t.Errorf("outside a project: exit %d %s", code, errb.String())
	}
}
