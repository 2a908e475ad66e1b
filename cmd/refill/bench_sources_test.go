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

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
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
// BenchmarkSourceCheckClickHouse is the same on the ClickHouse server in
// CLICKHOUSE_DSN.
func BenchmarkSourceCheck(b *testing.B) {
	if testing.Short() {
		b.Skip("scans millions of rows")
	}
	file := filepath.Join(b.TempDir(), "warehouse.duckdb")
	sourceCheck(b, sourceBench{
		target: func(schema string) string {
			return fmt.Sprintf("{adapter: duckdb, path: %q, schema: %s, ledger_schema: %s_refill}", file, schema, schema)
		},
		exec: func(stmts ...string) {
			a, err := duckdb.Open(context.Background(), duckdb.Config{Path: file})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			for _, q := range stmts {
				for _, s := range strings.Split(q, ";") {
					if _, err := a.DB().Exec(s); err != nil {
						b.Fatalf("%s: %v", s, err)
					}
				}
			}
		},
		raw: "raw",
		create: `CREATE SCHEMA raw; CREATE TABLE raw.trips AS SELECT range AS trip_id, range % 5000 AS driver,
			TIMESTAMP '2022-01-01' + to_microseconds(range * STEP) AS started_at, CAST(range % 997 AS DOUBLE) / 10 AS fare,
			TIMESTAMP '2022-01-01 01:00:00' + to_microseconds(range * STEP) AS loaded_at FROM range(ROWS)`,
		late: `INSERT INTO raw.trips SELECT -1 - i, 1, TIMESTAMP '2022-01-01 12:00:00' + to_days(CAST(i * 97 AS INTEGER)), 9.5,
			TIMESTAMP '2024-09-27 02:00:00' FROM range(10) AS t(i)`,
	})
}

func BenchmarkSourceCheckClickHouse(b *testing.B) {
	adaptertest.ClickHouseServer.Env(b)
	ch := adaptertest.ClickHouseServer.Open(b, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	p := fmt.Sprintf("bsrc%d_", os.Getpid())
	defer func() {
		for _, db := range []string{"raw", "hash", "hash_refill", "hash_stage", "loaded", "loaded_refill", "loaded_stage"} {
			ch.DB().Exec("DROP DATABASE IF EXISTS `" + p + db + "`")
		}
	}()
	sourceCheck(b, sourceBench{
		target: func(schema string) string {
			return fmt.Sprintf("{adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", schema: %s%s, ledger_schema: %s%s_refill, stage_schema: %s%s_stage}",
				p, schema, p, schema, p, schema)
		},
		exec: func(stmts ...string) {
			for _, q := range stmts {
				for _, s := range strings.Split(q, ";") {
					if _, err := ch.DB().Exec(s); err != nil {
						b.Fatalf("%s: %v", s, err)
					}
				}
			}
		},
		raw: p + "raw",
		create: `CREATE DATABASE ` + p + `raw; CREATE TABLE ` + p + `raw.trips ENGINE = MergeTree PARTITION BY toYYYYMM(started_at) ORDER BY (started_at)
			AS SELECT toInt64(number) AS trip_id, toInt64(number % 5000) AS driver,
			toDateTime('2022-01-01 00:00:00', 'UTC') + intDiv(number * STEP, 1000000) AS started_at, (number % 997) / 10 AS fare,
			toDateTime('2022-01-01 01:00:00', 'UTC') + intDiv(number * STEP, 1000000) AS loaded_at FROM numbers(ROWS)`,
		late: `INSERT INTO ` + p + `raw.trips SELECT -1 - toInt64(number), 1, toDateTime('2022-01-01 12:00:00', 'UTC') + number * 97 * 86400, 9.5,
			toDateTime('2024-09-27 02:00:00', 'UTC') FROM numbers(10)`,
	})
}

// sourceBench is what BenchmarkSourceCheck needs of an engine.
type sourceBench struct {
	target       func(schema string) string // a target's settings, its tables in schema
	exec         func(stmts ...string)
	raw          string // the source's schema
	create, late string // the source (STEP and ROWS replaced), the late rows
}

func sourceCheck(b *testing.B, e sourceBench) {
	rows, rounds := envInt(b, "REFILL_BENCH_SOURCE_ROWS", 10_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 3)
	ctx := context.Background()
	dir := b.TempDir()
	// A row every 8.64 s over 1,000 days from 2022-01-01, loaded an hour
	// after it started.
	step := int64(1000 * 86400 * 1_000_000 / rows)
	e.exec(strings.NewReplacer("STEP", fmt.Sprint(step), "ROWS", fmt.Sprint(rows)).Replace(e.create))
	project := func(name, schema, source string) string {
		p := filepath.Join(dir, name)
		yml := fmt.Sprintf("targets:\n  dev: %s\n%s", e.target(schema), source)
		for rel, text := range map[string]string{"refill.yml": yml, "models/daily.sql": `/* refill
partition_by: d
grain: day
start: 2022-01-01
batch: 30
*/
SELECT {{ cast_date(ident("started_at")) }} AS d, driver % 10 AS zone, count(*) AS trips, sum(fare) AS fares
FROM {{ source("` + e.raw + `.trips") }}
WHERE started_at >= {{ cast_timestamp(start) }} AND started_at < {{ cast_timestamp(end) }}
GROUP BY {{ cast_date(ident("started_at")) }}, driver % 10
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
	none := project("none", "hash", "")
	hash := project("hash", "hash", "sources:\n  "+e.raw+".trips: {time_column: started_at}\n")
	loaded := project("loaded", "loaded", "sources:\n  "+e.raw+".trips: {time_column: started_at, loaded_at: loaded_at}\n")
	const now = "--now=2024-09-27"
	do := func(out io.Writer, p string, args ...string) {
		var errb bytes.Buffer
		if code := Do(ctx, nil, append([]string{"--project", p}, args...), strings.NewReader(""), out, &errb); code != 0 {
			b.Fatalf("refill %s in %s: exit %d\n%s", strings.Join(args, " "), filepath.Base(p), code, errb.String())
		}
	}
	for _, p := range []string{hash, loaded} {
		start := time.Now()
		do(io.Discard, p, "run", now, "--yes", "--quiet")
		b.Logf("the backfill of 1,000 days (%s) took %.1fs", filepath.Base(p), time.Since(start).Seconds())
	}
	// Ten late rows, loaded now, on ten days spread over the history.
	e.exec(e.late)
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
	for k, v := range interleave(b, rounds, []variant{
		{"run-none", timed(none, rerun...)}, {"run-hash", timed(hash, rerun...)}, {"run-loaded", timed(loaded, rerun...)},
	}) {
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
