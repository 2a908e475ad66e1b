package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
)

const (
	benchRows = 10_000_000
	benchDays = 365
)

// benchModel is one day of the generated source, lightly transformed.
const benchModel = `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT id, d, user_id, amount * 1.1 AS amount
FROM {{ source("src.events") }}
WHERE d >= {{ start }} AND d < {{ end }}`

// BenchmarkBackfill compares, on one DuckDB file with a 10-million-row
// source over 365 days, in one run:
//
//	(a) refill, one partition at a time (concurrency 1, and the default 2)
//	(b) refill in batch mode: one statement for the whole range
//	(c) by hand: one INSERT ... SELECT over the whole range
//	(d) by hand: a loop of one DELETE+INSERT transaction per day
//
// and reports a/d, b/c and refill's own overhead per partition.
func BenchmarkBackfill(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 10 million rows several times")
	}
	ctx := context.Background()
	dir := b.TempDir()
	a, err := duckdb.Open(ctx, duckdb.Config{Path: filepath.Join(dir, "bench.duckdb")})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	db := a.DB()
	mustExec := func(q string) {
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	mustExec("CREATE SCHEMA src")
	mustExec(fmt.Sprintf(`CREATE TABLE src.events AS SELECT range AS id, DATE '2024-01-01' + CAST(range %% %d AS INTEGER) AS d,
		range %% 100000 AS user_id, CAST(range %% 997 AS DOUBLE) / 10 AS amount FROM range(%d)`, benchDays, benchRows))
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")}}
	for _, name := range []string{"per_partition", "per_partition_c2", "batched"} {
		fsys["models/"+name+".sql"] = &fstest.MapFile{Data: []byte(benchModel)}
	}
	p, err := models.Load(fsys, models.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r := &runner.Runner{Project: p, Target: "dev", Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: "main"}}
	sel := func(model string) runner.Selection {
		return runner.Selection{Select: []string{model}, From: "2024-01-01", To: "2024-12-30", Now: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
	}
	refill := func(model string, opts runner.RunOptions) time.Duration {
		plan, err := r.Plan(ctx, sel(model))
		if err != nil {
			b.Fatal(err)
		}
		if len(plan.Steps) != benchDays {
			b.Fatalf("%s: %d steps", model, len(plan.Steps))
		}
		start := time.Now()
		s, err := r.Run(ctx, plan, opts)
		if err != nil || s.Failed > 0 || s.Succeeded != benchDays {
			b.Fatalf("%s: %+v %v", model, s, err)
		}
		return time.Since(start)
	}
	body := "SELECT id, d, user_id, amount * 1.1 AS amount FROM src.events"
	var ta, ta2, tb, tc, td time.Duration
	for b.Loop() {
		for _, t := range []string{"main.hand_once", "main.hand_loop", "main.per_partition", "main.per_partition_c2", "main.batched"} {
			mustExec("DROP TABLE IF EXISTS " + t)
		}
		mustExec("DROP SCHEMA IF EXISTS refill CASCADE")
		// (c) one INSERT ... SELECT over the whole range.
		mustExec("CREATE TABLE main.hand_once AS " + body + " LIMIT 0")
		start := time.Now()
		mustExec(body2insert("main.hand_once", body, "2024-01-01", "2024-12-31"))
		tc = time.Since(start)
		// (d) a DELETE+INSERT transaction per day.
		mustExec("CREATE TABLE main.hand_loop AS " + body + " LIMIT 0")
		start = time.Now()
		day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < benchDays; i++ {
			from, to := day.Format("2006-01-02"), day.AddDate(0, 0, 1).Format("2006-01-02")
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Exec(fmt.Sprintf("DELETE FROM main.hand_loop WHERE d >= DATE '%s' AND d < DATE '%s'", from, to)); err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Exec(body2insert("main.hand_loop", body, from, to)); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			day = day.AddDate(0, 0, 1)
		}
		td = time.Since(start)
		ta = refill("per_partition", runner.RunOptions{Concurrency: 1})
		ta2 = refill("per_partition_c2", runner.RunOptions{})
		tb = refill("batched", runner.RunOptions{Batch: benchDays})
	}
	// The same work: every variant holds the same rows.
	want := checksum(b, db, "main.hand_once")
	for _, t := range []string{"main.hand_loop", "main.per_partition", "main.per_partition_c2", "main.batched"} {
		if got := checksum(b, db, t); got != want {
			b.Fatalf("%s holds %s, want %s", t, got, want)
		}
	}
	b.ReportMetric(ta.Seconds(), "a-refill-per-partition-s")
	b.ReportMetric(ta2.Seconds(), "a2-refill-per-partition-concurrency2-s")
	b.ReportMetric(tb.Seconds(), "b-refill-batch-s")
	b.ReportMetric(tc.Seconds(), "c-hand-insert-select-s")
	b.ReportMetric(td.Seconds(), "d-hand-loop-s")
	b.ReportMetric(ta.Seconds()/td.Seconds(), "a/d")
	b.ReportMetric(ta2.Seconds()/td.Seconds(), "a2/d")
	b.ReportMetric(tb.Seconds()/tc.Seconds(), "b/c")
	b.ReportMetric(float64((ta-td).Microseconds())/benchDays/1000, "overhead-ms/partition")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

func body2insert(table, body, from, to string) string {
	return fmt.Sprintf("INSERT INTO %s %s WHERE d >= DATE '%s' AND d < DATE '%s'", table, body, from, to)
}

func checksum(b *testing.B, db *sql.DB, table string) string {
	var n, ids int64
	var amount float64
	if err := db.QueryRow("SELECT count(*), sum(id), round(sum(amount), 2) FROM "+table).Scan(&n, &ids, &amount); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("%d rows, ids %d, amount %.2f", n, ids, amount)
}

// BenchmarkNothingToDo runs a scheduled refill plan and refill run
// in-process on a project of 1,000 daily models (chains of ten) whose
// DuckDB ledger and tables hold every partition of their history, built
// the way a daily schedule builds them (each day after the day ends, each
// model after the one it reads): the whole command, the ledger's read
// included. It does so at 365 and 3,650 days of history, so that the
// memory a plan takes can be seen not to grow with history.
func BenchmarkNothingToDo(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 3.65-million-row ledger")
	}
	for _, days := range []int{365, 3650} {
		dir := nothingToDoProject(b, 1000, days)
		now := "--now=" + time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days).Add(time.Hour).Format(time.RFC3339)
		for _, cmd := range [][]string{{"plan", now, "--output", "json"}, {"run", now, "--yes", "--quiet"}} {
			b.Run(fmt.Sprintf("history=%dd/%s", days, cmd[0]), func(b *testing.B) {
				var peak uint64
				var stdout strings.Builder
				for b.Loop() {
					stdout.Reset()
					stop := sampleHeap(&peak)
					code := Do(context.Background(), nil, append([]string{"--project", dir}, cmd...), strings.NewReader(""), &stdout, io.Discard)
					stop()
					if code != 0 {
						b.Fatalf("refill %s: exit %d", cmd[0], code)
					}
				}
				if cmd[0] == "plan" && !strings.Contains(stdout.String(), `"steps": []`) && !strings.Contains(stdout.String(), `"steps":[]`) {
					b.Fatalf("refill plan planned something:\n%.500s", stdout.String())
				}
				b.ReportMetric(float64(1000*days), "partitions")
				b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			})
		}
	}
}

// nothingToDoProject writes a project of n daily models over days days
// with a DuckDB warehouse holding all of it, and returns its folder.
func nothingToDoProject(b *testing.B, n, days int) string {
	b.Helper()
	dir := b.TempDir()
	write(b, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\n")
	for i := 0; i < n; i++ {
		from := `{{ source("raw.events") }}`
		if i%10 != 0 {
			from = fmt.Sprintf(`{{ ref("m%04d") }}`, i-1)
		}
		write(b, dir, fmt.Sprintf("models/m%04d.sql", i), fmt.Sprintf(
			"/* refill\npartition_by: d\ngrain: day\nstart: 2015-01-01\n*/\nSELECT d, count(*) AS n FROM %s\nWHERE d >= {{ start }} AND d < {{ end }}\nGROUP BY d", from))
	}
	p, err := models.Load(os.DirFS(dir), models.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	a, err := duckdb.Open(ctx, duckdb.Config{Path: filepath.Join(dir, "warehouse.duckdb")})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if err := a.SetupLedger(ctx); err != nil {
		b.Fatal(err)
	}
	mustExec := func(q string) {
		if _, err := a.DB().Exec(q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	mustExec("CREATE SCHEMA raw")
	mustExec("CREATE TABLE raw.events (d DATE)")
	// The ledger: day d of model i started d+1 days and i seconds after
	// 2015-01-01 and was published half a second later.
	csvPath := filepath.Join(dir, "ledger.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		b.Fatal(err)
	}
	w := csv.NewWriter(f)
	scope := &models.Scope{Dialect: a.Dialect(), Schema: "main", Vars: p.Vars}
	first := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	const ts = "2006-01-02 15:04:05.000"
	for i, m := range p.Graph.Order {
		fp := m.Version(scope).Fingerprint
		for _, part := range m.Partitions(first, first.AddDate(0, 0, days-1)) {
			started := part.End.Add(time.Duration(i) * time.Second)
			published := started.Add(500 * time.Millisecond)
			w.Write([]string{m.Name, part.Key, "done", fp, "1", "bench", "1",
				part.Start.Format(ts), part.End.Format(ts), started.Format(ts), published.Format(ts), published.Format(ts), "", ""})
		}
		mustExec(fmt.Sprintf("CREATE TABLE main.%s AS SELECT DATE '2015-01-01' + CAST(range AS INTEGER) AS d, CAST(1 AS BIGINT) AS n FROM range(%d)", m.Name, days))
	}
	w.Flush()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	mustExec(fmt.Sprintf("COPY refill.partitions FROM '%s' (HEADER false, NULLSTR '')", csvPath))
	return dir
}

// sampleHeap records the peak HeapInuse until the returned func is called.
func sampleHeap(peak *uint64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > *peak {
				*peak = ms.HeapInuse
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// BenchmarkRefillTest times refill test on the example project.
func BenchmarkRefillTest(b *testing.B) {
	dir := shop(b, nil)
	for b.Loop() {
		if code := Do(context.Background(), nil, []string{"--project", dir, "test"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("refill test: exit %d", code)
		}
	}
}

// variant is one way of doing a benchmark's work; run does it once and
// returns the time the work took (setup excluded).
type variant struct {
	name string
	run  func() time.Duration
}

// interleave runs rounds of the variants in turn (A B C A B C ...), so that
// whatever else the machine does affects all of them alike, logs every
// round, and returns each variant's median.
func interleave(b *testing.B, rounds int, vs []variant) map[string]time.Duration {
	b.Helper()
	times := map[string][]time.Duration{}
	for i := 0; i < rounds; i++ {
		line := fmt.Sprintf("round %d:", i+1)
		for _, v := range vs {
			d := v.run()
			times[v.name] = append(times[v.name], d)
			line += fmt.Sprintf("  %s %.3fs", v.name, d.Seconds())
		}
		b.Log(line)
	}
	med := map[string]time.Duration{}
	for name, ts := range times {
		slices.Sort(ts)
		med[name] = ts[len(ts)/2]
		if len(ts)%2 == 0 {
			med[name] = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
		}
	}
	return med
}
