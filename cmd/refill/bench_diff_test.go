package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// BenchmarkDiff measures refill diff's statement on one day of
// REFILL_BENCH_DIFF_ROWS rows (default 10 million) in a DuckDB file, one
// row in a hundred changed, against reading each side once, in
// interleaved rounds (REFILL_BENCH_ROUNDS, default 3), medians:
//
//	(scan)   one scan of each side: count and a hash of every row, two statements
//	(key)    the diff matched by a unique key
//	(whole)  the diff of whole rows (no unique_key)
//	(except) the two EXCEPT ALL queries an analyst would write, which count
//	         only old and only new rows and nothing else

func BenchmarkDiff(b *testing.B) {
	if testing.Short() {
		b.Skip("diffs millions of rows")
	}
	rows, rounds := envInt(b, "REFILL_BENCH_DIFF_ROWS", 10_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 3)
	ctx := context.Background()
	a, err := duckdb.Open(ctx, duckdb.Config{Path: filepath.Join(b.TempDir(), "diff.duckdb")})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	db := a.DB()
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE src AS SELECT range AS id, DATE '2024-01-01' AS d, range %% 100000 AS user_id,
			CAST(range %% 997 AS DOUBLE) / 10 AS amount FROM range(%d)`, rows),
		// The table holds the query's rows but for one in a hundred.
		`CREATE TABLE old AS SELECT id, d, user_id, CASE WHEN id % 100 = 0 THEN amount * 1.1 + 1 ELSE amount * 1.1 END AS amount FROM src`,
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	query := "SELECT id, d, user_id, amount * 1.1 AS amount FROM src WHERE d >= DATE '2024-01-01' AND d < DATE '2024-01-02'"
	table := models.Relation{Name: "old"}
	cols, err := a.Columns(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	window := adapters.Window{Column: "d", Start: day, End: day.AddDate(0, 0, 1), Location: time.UTC}
	timed := func(f func()) func() time.Duration {
		return func() time.Duration {
			start := time.Now()
			f()
			return time.Since(start)
		}
	}
	one := func(q string) int64 {
		var n int64
		if err := db.QueryRow(q).Scan(&n); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		return n
	}
	want := int64(rows / 100)
	diff := func(key []string) func() {
		return func() {
			res, err := a.Diff(ctx, adapters.DiffRequest{Table: table, Window: window, Query: query, Columns: cols, Key: key, Examples: 3})
			if err != nil {
				b.Fatal(err)
			}
			if got := res.Changed + res.OnlyOld; got != want {
				b.Fatalf("key %v: %+v, want %d rows changed", key, res, want)
			}
		}
	}
	med := interleave(b, rounds, []variant{
		{"scan", timed(func() {
			one("SELECT count(*) + sum(hash(id, d, user_id, amount)) % 2 FROM old WHERE d >= DATE '2024-01-01' AND d < DATE '2024-01-02'")
			one("SELECT count(*) + sum(hash(id, d, user_id, amount)) % 2 FROM (" + query + ")")
		})},
		{"key", timed(diff([]string{"id"}))},
		{"whole", timed(diff(nil))},
		{"except", timed(func() {
			old := "SELECT id, d, user_id, amount FROM old WHERE d >= DATE '2024-01-01' AND d < DATE '2024-01-02'"
			if n := one(fmt.Sprintf("SELECT count(*) FROM (%s EXCEPT ALL %s)", old, query)); n != want {
				b.Fatalf("EXCEPT ALL: %d rows, want %d", n, want)
			}
			one(fmt.Sprintf("SELECT count(*) FROM (%s EXCEPT ALL %s)", query, old))
		})},
	})
	for _, v := range []string{"scan", "key", "whole", "except"} {
		b.ReportMetric(med[v].Seconds(), v+"-s")
	}
	for _, v := range []string{"key", "whole", "except"} {
		b.ReportMetric(med[v].Seconds()/med["scan"].Seconds(), v+"/scan")
	}
	b.ReportMetric(0, "ns/op")
}
