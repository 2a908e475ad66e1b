package duckdb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
)

// TestParser: DuckDB's parser, offline, reports a syntax error at its
// offset, one statement only, and nothing for what it parses, whatever
// tables the statement names, DuckDB's own syntax included.
func TestParser(t *testing.T) {
	t.Parallel()
	p, err := newParser()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	for _, q := range []string{
		"SELECT a FROM no_such_table WHERE x = 1",
		"PIVOT t ON k USING sum(v)",
		"FROM t SELECT a",
		"SELECT * EXCLUDE (x) FROM t UNION BY NAME SELECT 1 AS y",
		"SELECT list_transform([1,2], x -> x + 1), [x * 2 FOR x IN [1,2]]",
		"SELECT * FROM a ASOF JOIN b ON a.t >= b.t",
	} {
		if err := p.Parse(ctx, q); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	q := "SELECT a,\n  CAST(sum(trips AS BIGINT) AS n\nFROM t"
	var se *adapters.StatementError
	if err := p.Parse(ctx, q); !errors.As(err, &se) || se.Offset != strings.Index(q, "AS BIGINT") || !strings.Contains(err.Error(), `syntax error at or near "AS"`) {
		t.Errorf("%q: %v (%+v)", q, err, se)
	}
	if err := p.Parse(ctx, "SELECT 1; SELECT 2"); err == nil || !strings.Contains(err.Error(), "one SELECT statement") {
		t.Errorf("two statements: %v", err)
	}
}

// TestLocated: DuckDB's "LINE n:" and caret become the offset in the
// statement, also when it quotes a long line in part.
func TestLocated(t *testing.T) {
	t.Parallel()
	a, err := Open(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	long := strings.Repeat("1 + ", 60)
	for _, q := range []string{
		"SELECT 1,\n  no_such_column AS n",
		"SELECT\n  " + long + "no_such_column AS n",
	} {
		err := a.run(context.Background(), "stage", q)
		var se *adapters.StatementError
		if !errors.As(err, &se) || se.Offset != strings.Index(q, "no_such_column") {
			t.Errorf("%q: %v, offset %+v; want %d", q, err, se, strings.Index(q, "no_such_column"))
		}
	}
}
