package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
)

// brokenModel is a model with a syntax error on line 15 (two
// expressions without a comma, the second at column 12), after lines whose expressions render longer
// than they are written.
const brokenModel = `/* refill
description: a model whose line 15 has a syntax error
partition_by: d
grain: day
start: 2024-01-01
end: 2024-01-02
*/
-- line 8
-- line 9
-- line 10
SELECT
  {{ start }} AS d,
  {{ var("k") }} AS k,
  1 AS a,
  count(*) 1 AS n
FROM (SELECT 1 AS one) AS t
GROUP BY 1, 2, 3
`

// unboundModel refers on line 13 to a column its FROM lacks: DuckDB
// parses it and fails binding it, at run time.
const unboundModel = `/* refill
partition_by: d
grain: day
start: 2024-01-01
end: 2024-01-02
*/
-- 7
-- 8
-- 9
-- 10
SELECT
  {{ start }} AS d,
  no_such_column AS n
FROM (SELECT 1 AS one) AS t
`

// TestSQLErrorsPointAtTheModelLine: validate parses every model with
// DuckDB's parser and a syntax error is reported at the model file's line
// and column, with the line and a caret, with no warehouse; run reports
// the warehouse's errors (syntax or binding) at the file's line too.
func TestSQLErrorsPointAtTheModelLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: w.duckdb}\nvars: {k: 1}\n")
	write(t, dir, "models/x.sql", brokenModel)
	write(t, dir, "models/y.sql", unboundModel)
	r := refill(t, dir, "validate")
	want := "models/x.sql:15:12: DuckDB's parser: syntax error at or near \"1\"\n      15 |   count(*) 1 AS n\n         |            ^"
	if r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d\n%s\nwant\n%s", r.code, r.stderr, want)
	}
	if strings.Contains(r.stderr, "models/y.sql") {
		t.Errorf("validate reports a model that parses (binding needs the warehouse):\n%s", r.stderr)
	}
	r = refill(t, dir, "run", "--now=2024-02-01", "--yes")
	for _, want := range []string{
		"models/x.sql:15:12: Parser Error: syntax error at or near \"1\"",
		"models/y.sql:13:3: Binder Error: Referenced column \"no_such_column\" not found",
		"13 |   no_such_column AS n",
	} {
		if r.code != exitFailed || !strings.Contains(r.stdout, want) {
			t.Errorf("run: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	// The statement DuckDB quoted (LINE 4: ...) is not the file's.
	if strings.Contains(r.stdout, "LINE ") {
		t.Errorf("run quotes the rendered statement's lines:\n%s", r.stdout)
	}
}

// TestClickHouseSyntaxErrorAtTheModelLine: ClickHouse's "failed at
// position N" is reported at the model file's line.
func TestClickHouseSyntaxErrorAtTheModelLine(t *testing.T) {
	t.Parallel()
	adaptertest.ClickHouseServer.Env(t)
	b := make([]byte, 3)
	rand.Read(b)
	schema := "s" + hex.EncodeToString(b)
	dropClickHouseDatabases(t, schema, schema+"_refill", schema+"_stage")
	dir := t.TempDir()
	// A stage database of its own: another test's ledger takes stages in
	// a shared one for a dead run's and drops them.
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", schema: "+schema+", ledger_schema: "+schema+"_refill, stage_schema: "+schema+"_stage}\nvars: {k: 1}\n")
	write(t, dir, "models/x.sql", brokenModel)
	r := refill(t, dir, "run", "--now=2024-02-01", "--yes")
	if want := "models/x.sql:15:12: "; r.code != exitFailed || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "15 |   count(*) 1 AS n") {
		t.Errorf("run: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestBrokenModelIsLeftOut: a model whose file has an error, and what
// reads it, are left out; commands that do not select them go on, those
// that do (or select everything) exit 2 as before, and status always
// works, listing them.
func TestBrokenModelIsLeftOut(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-03", janNow)
	edit(t, dir, "models/marts/daily_revenue.sql", `ref("staging.orders")`, `ref("staging.orderz")`)

	r := mustRefill(t, dir, "run", "staging.orders", "--from", "2024-01-04", "--to", "2024-01-04", janNow)
	if !strings.Contains(r.stderr, "note: 3 broken models left out") || !strings.Contains(r.stderr, "marts.monthly_revenue: reads marts.daily_revenue, which is broken") {
		t.Errorf("a run of a healthy model does not say what it left out:\n%s", r.stderr)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.partitions WHERE model = 'staging.orders' AND partition_key = '2024-01-04' AND state = 'done'`); n != int64(1) {
		t.Errorf("staging.orders 2024-01-04 was not built: %v records", n)
	}
	for _, args := range [][]string{{"run", janNow}, {"run", "marts.daily_revenue", janNow}, {"run", "daily_revenue+", janNow},
		{"plan", "marts/*", janNow}, {"run", "marts.monthly_revenue", janNow}, {"render", "marts.daily_revenue", "-p", "2024-01-01"}} {
		r := refill(t, dir, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "models/marts/daily_revenue.sql:18:9: ref(\"staging.orderz\"): unknown model") {
			t.Errorf("refill %v: exit %d, want 2 naming the broken line\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r = mustRefill(t, dir, "status", janNow)
	if !strings.Contains(r.stdout, "3 broken models") || !strings.Contains(r.stdout, "marts.daily_revenue    broken  models/marts/daily_revenue.sql:18:9") ||
		!strings.Contains(r.stdout, "staging.orders") {
		t.Errorf("status:\n%s", r.stdout)
	}
	r = mustRefill(t, dir, "status", "--output", "json", "marts.daily_revenue", janNow)
	var st struct {
		Broken  []struct{ Model, Path, Error string } `json:"broken_models"`
		Removed []struct{ Model string }              `json:"removed_models"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Broken) != 3 || st.Broken[0].Model != "marts.daily_revenue" || st.Broken[0].Path != "models/marts/daily_revenue.sql" || len(st.Removed) != 0 {
		t.Errorf("status --output json lists broken %+v and removed %+v; want the 3 broken, none removed (their tables are still the project's)", st.Broken, st.Removed)
	}
	page := filepath.Join(t.TempDir(), "status.html")
	mustRefill(t, dir, "status", "--html", page, janNow)
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "Broken models, left out") || !strings.Contains(string(b), "ref(&#34;staging.orderz&#34;): unknown model") {
		t.Errorf("the status page does not list the broken models (%v)", err)
	}
	// Fixed, everything goes on.
	edit(t, dir, "models/marts/daily_revenue.sql", `ref("staging.orderz")`, `ref("staging.orders")`)
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-04", janNow)
}

// readsUnbuilt reads model a, unbuilt at first, and on line 9 a column a
// lacks.
const readsUnbuilt = `/* refill
partition_by: d
grain: day
start: 2024-01-01
end: 2024-01-02
*/
SELECT
  d,
  n + missing_col AS n
FROM {{ ref("a") }}
WHERE d >= {{ start }} AND d < {{ end }}
`

// TestValidateConnect: validate --connect has the selected target's
// warehouse bind every model's query, without running it or writing: what
// parses but does not bind is reported at the model file (at its line
// where the warehouse says where), a model reading one the warehouse does
// not hold yet is noted instead, and a clean project passes. On DuckDB,
// and on ClickHouse when CLICKHOUSE_DSN is set.
func TestValidateConnect(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"duckdb", "clickhouse"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target := "{adapter: duckdb, path: w.duckdb}"
			if engine == "clickhouse" {
				adaptertest.ClickHouseServer.Env(t)
				b := make([]byte, 3)
				rand.Read(b)
				schema := "v" + hex.EncodeToString(b)
				// A stage database of its own (see above).
				target = "{adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", schema: " + schema + ", ledger_schema: " + schema + "_refill, stage_schema: " + schema + "_stage}"
				dropClickHouseDatabases(t, schema, schema+"_refill", schema+"_stage")
			}
			write(t, dir, "refill.yml", "targets:\n  dev: "+target+"\nvars: {k: 1}\n")
			write(t, dir, "models/a.sql", "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nend: 2024-01-02\n*/\nSELECT {{ start }} AS d, 1 AS n\n")
			write(t, dir, "models/b.sql", readsUnbuilt)
			write(t, dir, "models/y.sql", unboundModel)
			mustRefill(t, dir, "validate") // every model parses

			r := refill(t, dir, "validate", "--connect")
			yAt := "models/y.sql"
			if engine == "duckdb" {
				yAt = "models/y.sql:13:3: Binder Error: Referenced column \"no_such_column\" not found"
			}
			if r.code != exitUsage || !strings.Contains(r.stderr, yAt) || !strings.Contains(r.stderr, "no_such_column") ||
				!strings.Contains(r.stdout, "note: b was not checked against target dev: it reads a, which the warehouse does not hold yet") ||
				strings.Contains(r.stderr, "models/b.sql") || strings.Contains(r.stderr, "models/a.sql") {
				t.Errorf("validate --connect before a is built: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			mustRefill(t, dir, "run", "a", "--now=2024-02-01")
			ledger := mustRefill(t, dir, "status", "--output", "json", "--now=2024-02-01").stdout
			r = refill(t, dir, "validate", "--connect")
			bAt := "models/b.sql"
			if engine == "duckdb" {
				bAt = "models/b.sql:9:7: Binder Error: Referenced column \"missing_col\" not found"
			}
			if r.code != exitUsage || !strings.Contains(r.stderr, bAt) || !strings.Contains(r.stderr, "missing_col") || !strings.Contains(r.stderr, "2 problem(s) found") {
				t.Errorf("validate --connect after a is built: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if after := mustRefill(t, dir, "status", "--output", "json", "--now=2024-02-01").stdout; after != ledger {
				t.Errorf("validate --connect changed what status says:\n%s\n%s", ledger, after)
			}
			write(t, dir, "models/b.sql", strings.Replace(readsUnbuilt, "n + missing_col", "n + 1", 1))
			write(t, dir, "models/y.sql", strings.Replace(unboundModel, "no_such_column", "one", 1))
			if r := mustRefill(t, dir, "validate", "--connect"); !strings.Contains(r.stdout, "OK: 3 models") {
				t.Errorf("validate --connect of a clean project:\n%s", r.stdout)
			}
		})
	}
}
