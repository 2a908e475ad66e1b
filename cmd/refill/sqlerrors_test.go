package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
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
	if os.Getenv("CLICKHOUSE_DSN") == "" {
		t.Skip("CLICKHOUSE_DSN is not set: start a server with .ci/clickhouse/start (see README)")
	}
	b := make([]byte, 3)
	rand.Read(b)
	schema := "s" + hex.EncodeToString(b)
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", schema: "+schema+", ledger_schema: "+schema+"_refill}\nvars: {k: 1}\n")
	write(t, dir, "models/x.sql", brokenModel)
	r := refill(t, dir, "run", "--now=2024-02-01", "--yes")
	if want := "models/x.sql:15:12: "; r.code != exitFailed || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "15 |   count(*) 1 AS n") {
		t.Errorf("run: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
