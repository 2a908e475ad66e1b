package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters/duckdb"
)

// BenchmarkSourceCheck measures what tracked sources cost, on a DuckDB
// source of REFILL_BENCH_SOURCE_ROWS rows (default 10 million) over 1,000
// days, read by one daily model, built through the last day; then ten
// late rows land on ten days spread over its history. In interleaved
// rounds (REFILL_BENCH_ROUNDS, default 3), medians:
//
//	plan-none    the scheduled plan with the source not declared (finds nothing)
//	plan-hash    declared with time_column: one scan of every row, hashed
//	plan-loaded  declared with loaded_at too: the rows loaded since the last
//	             succeeded scheduled run
//	run-none, run-hash, run-loaded
//	             rebuilding 60 days (--mode all, two units of 30): what the
//	             fingerprints taken before each unit add to a run
//
// Both plans that track the source must find exactly the ten days.
func BenchmarkSourceCheck(b *testing.B) {
	if testing.Short() {
		b.Skip("scans millions of rows")
	}
	rows, rounds := envInt(b, "REFILL_BENCH_SOURCE_ROWS", 10_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 3)
	ctx := context.Background()
	dir := b.TempDir()
	hashFile, loadedFile := filepath.Join(dir, "hash.duckdb"), filepath.Join(dir, "loaded.duckdb")
	a, err := duckdb.Open(ctx, duckdb.Config{Path: hashFile})
	if err != nil {
		b.Fatal(err)
	}
	// A row every 8.64 s over 1,000 days from 2022-01-01, loaded an hour
	// after it started.
	step := int64(1000 * 86400 * 1_000_000 / rows)
	for _, q := range []string{
		"CREATE SCHEMA raw",
		fmt.Sprintf(`CREATE TABLE raw.trips AS SELECT range AS trip_id, range %% 5000 AS driver,
			TIMESTAMP '2022-01-01' + to_microseconds(range * %d) AS started_at, CAST(range %% 997 AS DOUBLE) / 10 AS fare,
			TIMESTAMP '2022-01-01 01:00:00' + to_microseconds(range * %d) AS loaded_at FROM range(%d)`, step, step, rows),
	} {
		if _, err := a.DB().Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	a.Close()
	copyFile(b, hashFile, loadedFile)
	project := func(name, file, source string) string {
		p := filepath.Join(dir, name)
		yml := fmt.Sprintf("targets:\n  dev: {adapter: duckdb, path: %q}\n%s", file, source)
		for rel, text := range map[string]string{"refill.yml": yml, "models/daily.sql": `/* refill
partition_by: d
grain: day
start: 2022-01-01
batch: 30
*/
SELECT CAST(started_at AS DATE) AS d, driver % 10 AS zone, count(*) AS trips, sum(fare) AS fares
FROM {{ source("raw.trips") }}
WHERE started_at >= {{ start }} AND started_at < {{ end }}
GROUP BY ALL
`} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(p, rel)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, rel), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return p
	}
	none := project("none", hashFile, "")
	hash := project("hash", hashFile, "sources:\n  raw.trips: {time_column: started_at}\n")
	loaded := project("loaded", loadedFile, "sources:\n  raw.trips: {time_column: started_at, loaded_at: loaded_at}\n")
	const now = "--now=2024-09-27"
	do := func(out io.Writer, p string, args ...string) {
		var errb bytes.Buffer
		if code := Do(ctx, nil, append([]string{"--project", p}, args...), strings.NewReader(""), out, &errb); code != 0 {
			b.Fatalf("refill %s in %s: exit %d\n%s", strings.Join(args, " "), filepath.Base(p), code, errb.String())
		}
	}
	start := time.Now()
	do(io.Discard, hash, "run", now, "--yes", "--quiet")
	b.Logf("the backfill of 1,000 days fingerprinting every unit's rows took %.1fs", time.Since(start).Seconds())
	do(io.Discard, loaded, "run", now, "--yes", "--quiet")
	// Ten late rows, loaded now, on ten days spread over the history.
	for _, file := range []string{hashFile, loadedFile} {
		a, err := duckdb.Open(ctx, duckdb.Config{Path: file})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.DB().Exec(`INSERT INTO raw.trips SELECT -1 - i, 1, TIMESTAMP '2022-01-01 12:00:00' + to_days(CAST(i * 97 AS INTEGER)), 9.5,
			TIMESTAMP '2024-09-27 02:00:00' FROM range(10) AS t(i)`); err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
	for _, c := range []struct {
		p    string
		want int
	}{{none, 0}, {hash, 10}, {loaded, 10}} {
		var out bytes.Buffer
		do(&out, c.p, "plan", now, "--output", "json")
		if got := strings.Count(out.String(), `"reason": "source"`); got != c.want {
			b.Fatalf("the %s plan has %d steps for a changed source, want %d", filepath.Base(c.p), got, c.want)
		}
	}
	timed := func(p string, args ...string) func() time.Duration {
		return func() time.Duration {
			start := time.Now()
			do(io.Discard, p, args...)
			return time.Since(start)
		}
	}
	plan := []string{"plan", now}
	med := interleave(b, rounds, []variant{
		{"plan-none", timed(none, plan...)}, {"plan-hash", timed(hash, plan...)}, {"plan-loaded", timed(loaded, plan...)},
	})
	rerun := []string{"run", now, "--from", "2024-06-01", "--to", "2024-07-30", "--mode", "all", "--yes", "--quiet"}
	maps := interleave(b, rounds, []variant{
		{"run-none", timed(none, rerun...)}, {"run-hash", timed(hash, rerun...)}, {"run-loaded", timed(loaded, rerun...)},
	})
	for k, v := range maps {
		med[k] = v
	}
	for _, v := range []string{"plan-none", "plan-hash", "plan-loaded", "run-none", "run-hash", "run-loaded"} {
		b.ReportMetric(med[v].Seconds(), v+"-s")
	}
	b.ReportMetric(med["plan-hash"].Seconds()/med["plan-none"].Seconds(), "plan-hash/none")
	b.ReportMetric(med["plan-loaded"].Seconds()/med["plan-none"].Seconds(), "plan-loaded/none")
	b.ReportMetric(med["run-hash"].Seconds()/med["run-none"].Seconds(), "run-hash/none")
	b.ReportMetric(med["run-loaded"].Seconds()/med["run-none"].Seconds(), "run-loaded/none")
	b.ReportMetric(0, "ns/op")
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
