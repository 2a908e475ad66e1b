package duckdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// TestDiffCounts compares small tables whose differences are known: a
// duplicated row, NULLs in values and keys, a changed value, a row only
// on each side, both matched by key and whole.
func TestDiffCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := inMemory(t)
	if _, err := a.DB().Exec(`CREATE TABLE old AS SELECT * FROM (VALUES
		(1, 'a', 10.5, DATE '2024-01-01'), (2, 'b', NULL, DATE '2024-01-01'), (2, 'b', NULL, DATE '2024-01-01'),
		(3, 'c', 1, DATE '2024-01-01'), (NULL, 'n', 1, DATE '2024-01-01'), (4, 'd', 1, DATE '2024-01-01'),
		(9, 'other day', 100, DATE '2024-01-02')) AS t(k, v, x, d)`); err != nil {
		t.Fatal(err)
	}
	// New: 1 unchanged, one of the two 2s, 3 changed (x 1 -> 2), the NULL
	// key unchanged, 4 gone, 5 new. The other day is outside the window.
	query := `SELECT * FROM (VALUES (1, 'a', 10.5, DATE '2024-01-01'), (2, 'b', NULL, DATE '2024-01-01'),
		(3, 'c', 2, DATE '2024-01-01'), (NULL, 'n', 1, DATE '2024-01-01'), (5, 'e', 7, DATE '2024-01-01')) AS t(k, v, x, d)`
	cols, err := a.Columns(ctx, models.Relation{Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	req := adapters.DiffRequest{Table: models.Relation{Name: "old"}, Query: query, Columns: cols, Examples: 5,
		Window: adapters.Window{Column: "d", Start: day, End: day.AddDate(0, 0, 1), Location: time.UTC}}
	adaptertest.CheckDiffs(t, a, req, []adaptertest.DiffCase{
		// Whole rows: the second 2, 3 and 4 only old; the new 3 and 5
		// only new; 1, a 2 and the NULL key the same.
		{Key: nil, OnlyOld: 3, OnlyNew: 2, Changed: 0, Same: 3, SumOld: 13.5, SumNew: 20.5},
		// By k: the duplicated 2 matches twice (k is not unique in the
		// old); 3 changed; 4 only old; 5 only new.
		{Key: []string{"k"}, OnlyOld: 1, OnlyNew: 1, Changed: 1, Same: 4, SumOld: 13.5, SumNew: 20.5},
	})
}

// TestDiffScansEachSideOnce reads DuckDB's plan of the diff statement,
// matched by key and whole: one scan of the table and one of what the
// query reads, whatever the examples and sums it also returns.
func TestDiffScansEachSideOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var last string
	a, err := duckdb.Open(ctx, duckdb.Config{Log: func(s string) { last = s }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, q := range []string{
		`CREATE TABLE old AS SELECT range AS k, range % 7 AS x, DATE '2024-01-01' + CAST(range % 2 AS INTEGER) AS d FROM range(1000)`,
		`CREATE TABLE src AS SELECT * FROM old`,
	} {
		if _, err := a.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	cols, err := a.Columns(ctx, models.Relation{Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, key := range [][]string{{"k"}, nil} {
		req := adapters.DiffRequest{Table: models.Relation{Name: "old"}, Query: "SELECT * FROM src WHERE d = DATE '2024-01-01'", Columns: cols,
			Key: key, Examples: 3, Window: adapters.Window{Column: "d", Start: day, End: day.AddDate(0, 0, 1), Location: time.UTC}}
		res, err := a.Diff(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Same != 500 || res.Differs() {
			t.Errorf("key %v: %+v, want 500 rows the same", key, res)
		}
		rows, err := a.DB().Query("EXPLAIN " + last)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(v)
		}
		rows.Close()
		p := plan.String()
		if n, old, src := strings.Count(p, "SEQ_SCAN"), strings.Count(p, `main."old"`), strings.Count(p, "main.src"); n != 2 || old != 1 || src != 1 {
			t.Errorf("key %v: %d scans, of old %d and of src %d, want one of each:\n%s", key, n, old, src, p)
		}
	}
}
