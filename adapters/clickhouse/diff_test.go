package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/models"
)

// TestDiffCounts compares small tables whose differences are known: a
// duplicated row, NULLs in values, a changed value, a row only on each
// side, both matched by key and whole (as DuckDB's test of the same name).
func TestDiffCounts(t *testing.T) {
	s := schemas(t)
	a := open(t, s, nil)
	ctx := context.Background()
	db := a.Dialect().QuoteIdent(s.Default)
	rows := func(vals ...string) string {
		q := ""
		for i, v := range vals {
			if i > 0 {
				q += " UNION ALL "
			}
			q += "SELECT " + v
		}
		return q
	}
	// k, v, x (Nullable), d
	row := func(k, v, x, d string) string {
		return "toInt64(" + k + ") AS k, toString('" + v + "') AS v, CAST(" + x + " AS Nullable(Float64)) AS x, toDate('" + d + "') AS d"
	}
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + db,
		"CREATE TABLE " + db + ".old (k Int64, v String, x Nullable(Float64), d Date) ENGINE = MergeTree() ORDER BY d",
		"CREATE TABLE " + db + ".new (k Int64, v String, x Nullable(Float64), d Date) ENGINE = MergeTree() ORDER BY d",
		"INSERT INTO " + db + ".old " + rows(row("1", "a", "10.5", "2024-01-01"), row("2", "b", "NULL", "2024-01-01"), row("2", "b", "NULL", "2024-01-01"),
			row("3", "c", "1", "2024-01-01"), row("4", "d", "1", "2024-01-01"), row("9", "other day", "100", "2024-01-02")),
		"INSERT INTO " + db + ".new " + rows(row("1", "a", "10.5", "2024-01-01"), row("2", "b", "NULL", "2024-01-01"),
			row("3", "c", "2", "2024-01-01"), row("5", "e", "7", "2024-01-01")),
	} {
		if _, err := a.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old := models.Relation{Schema: s.Default, Name: "old"}
	cols, err := a.Columns(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	req := adapters.DiffRequest{Table: old, Query: "SELECT k, v, x, d FROM " + db + ".new", Columns: cols, Examples: 5,
		Window: adapters.Window{Column: "d", Start: day, End: day.AddDate(0, 0, 1), Location: time.UTC}}
	adaptertest.CheckDiffs(t, a, req, []adaptertest.DiffCase{
		// Whole rows: the second 2, 3 and 4 only old; the new 3 and 5
		// only new; 1 and a 2 the same.
		{Key: nil, OnlyOld: 3, OnlyNew: 2, Changed: 0, Same: 2, SumOld: 12.5, SumNew: 19.5},
		// By k: the duplicated 2 matches twice; 3 changed (x 1 -> 2),
		// 4 only old, 5 only new.
		{Key: []string{"k"}, OnlyOld: 1, OnlyNew: 1, Changed: 1, Same: 3, SumOld: 12.5, SumNew: 19.5},
	})
}
