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
	"github.com/refill/refill/runner/plan"
)

const benchDays = 365

// benchModel is one day of a generated source, lightly transformed; batch:
// is added for the models run in batch mode.
const benchModel = `/* refill
partition_by: d
grain: day
start: 2024-01-01%s
*/
SELECT id, d, user_id, amount * 1.1 AS amount
FROM {{ source("src.%s") }}
WHERE d >= {{ start }} AND d < {{ end }}`

// BenchmarkBackfill compares refill with hand-written SQL on one DuckDB
// file, backfilling the 365 days of 2024 from a source of
// REFILL_BENCH_ROWS rows (default 10 million), in interleaved rounds
// (REFILL_BENCH_ROUNDS, default 3: c d a1 a b ..., every variant once per
// round) and reports each variant's median and the ratios:
//
//	(a1) refill, one partition at a time (--concurrency 1)
//	(a)  refill, one partition at a time at the default concurrency
//	(b)  refill in batch mode: one unit of the whole year
//	(c)  by hand: one INSERT ... SELECT over the whole year
//	(d)  by hand: a loop of one DELETE+INSERT transaction per day
//
// once with the rows spread over the year in id order (each day's query
// scans the whole source) and once with the source sorted by day (each
// day's query is cheap, so fixed costs show); and (f) the fixed cost of a
// run: a 365-day batch from a 3,650-row source against the hand-written
// INSERT ... SELECT of it.
func BenchmarkBackfill(b *testing.B) {
	if testing.Short() {
		b.Skip("writes millions of rows many times")
	}
	rows, rounds := envInt(b, "REFILL_BENCH_ROWS", 10_000_000), envInt(b, "REFILL_BENCH_ROUNDS", 3)
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
	gen := func(table string, n int, order string) {
		mustExec(fmt.Sprintf(`CREATE TABLE src.%s AS SELECT range AS id, DATE '2024-01-01' + CAST(range %% %d AS INTEGER) AS d,
			range %% 100000 AS user_id, CAST(range %% 997 AS DOUBLE) / 10 AS amount FROM range(%d) %s`, table, benchDays, n, order))
	}
	gen("events", rows, "")
	gen("sorted", rows, "ORDER BY d, id")
	gen("small", 10*benchDays, "")
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")}}
	for _, src := range []string{"events", "sorted", "small"} {
		fsys["models/"+src+".sql"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(benchModel, "", src))}
		fsys["models/"+src+"_batched.sql"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(benchModel, "\nbatch: 365", src))}
	}
	p, err := models.Load(fsys, withAdapters(models.LoadOptions{}))
	if err != nil {
		b.Fatal(err)
	}
	r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: "main"}}, Target: "dev"}
	body := func(src string) string { return "SELECT id, d, user_id, amount * 1.1 AS amount FROM src." + src }
	// Each variant writes its own table, recreated before it runs.
	fresh := func(table, src string) {
		mustExec("DROP TABLE IF EXISTS main." + table)
		mustExec(fmt.Sprintf("CREATE TABLE main.%s AS %s LIMIT 0", table, body(src)))
	}
	// refill runs model (src, or src_batched) into its table.
	refill := func(model string, opts runner.RunOptions) func() time.Duration {
		return func() time.Duration {
			mustExec("DROP TABLE IF EXISTS main." + model)
			if _, err := db.Exec("DELETE FROM refill.partitions WHERE model = '" + model + "'"); err != nil && !strings.Contains(err.Error(), "does not exist") {
				b.Fatal(err)
			}
			pl, err := r.Plan(ctx, plan.Selection{Select: []string{model}, From: "2024-01-01", To: "2024-12-30", Now: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)})
			if err != nil || pl.Len() != benchDays {
				b.Fatalf("%s: %v, %d steps", model, err, pl.Len())
			}
			start := time.Now()
			s, err := r.Run(ctx, pl, opts)
			if err != nil || s.Failed > 0 || s.Succeeded != benchDays {
				b.Fatalf("%s: %+v %v", model, s, err)
			}
			// The partitions of one unit share its duration.
			units := map[time.Duration]bool{}
			for _, p := range s.Partitions {
				units[p.Duration] = true
			}
			if batched := strings.HasSuffix(model, "_batched"); batched != (len(units) == 1) {
				b.Fatalf("%s ran in %d units", model, len(units))
			}
			return time.Since(start)
		}
	}
	once := func(src string) func() time.Duration {
		return func() time.Duration {
			fresh(src+"_once", src)
			start := time.Now()
			mustExec(body2insert("main."+src+"_once", body(src), "2024-01-01", "2024-12-31"))
			return time.Since(start)
		}
	}
	loop := func(src string) func() time.Duration {
		return func() time.Duration {
			fresh(src+"_loop", src)
			start := time.Now()
			day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := 0; i < benchDays; i++ {
				from, to := day.Format("2006-01-02"), day.AddDate(0, 0, 1).Format("2006-01-02")
				tx, err := db.Begin()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Exec(fmt.Sprintf("DELETE FROM main.%s_loop WHERE d >= DATE '%s' AND d < DATE '%s'", src, from, to)); err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Exec(body2insert("main."+src+"_loop", body(src), from, to)); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				day = day.AddDate(0, 0, 1)
			}
			return time.Since(start)
		}
	}
	var vs []variant
	for _, src := range []string{"events", "sorted"} {
		vs = append(vs,
			variant{src + "/c", once(src)},
			variant{src + "/d", loop(src)},
			variant{src + "/a1", refill(src, runner.RunOptions{Concurrency: 1})},
			variant{src + "/a", refill(src, runner.RunOptions{})},
			variant{src + "/b", refill(src+"_batched", runner.RunOptions{})},
		)
	}
	vs = append(vs, variant{"small/c", once("small")}, variant{"small/b", refill("small_batched", runner.RunOptions{})})
	med := interleave(b, rounds, vs)
	// The same work: every variant holds the same rows.
	for _, src := range []string{"events", "sorted", "small"} {
		want := checksum(b, db, "main."+src+"_once")
		for _, t := range []string{src + "_loop", src, src + "_batched"} {
			if src == "small" && t != "small_batched" {
				continue
			}
			if got := checksum(b, db, "main."+t); got != want {
				b.Fatalf("%s holds %s, want %s", t, got, want)
			}
		}
	}
	ratio := func(x, y string) float64 { return med[x].Seconds() / med[y].Seconds() }
	for _, src := range []string{"events", "sorted"} {
		for _, v := range []string{"a1", "a", "b", "c", "d"} {
			b.ReportMetric(med[src+"/"+v].Seconds(), src+"/"+v+"-s")
		}
		b.ReportMetric(ratio(src+"/a1", src+"/d"), src+"/a1/d")
		b.ReportMetric(ratio(src+"/a", src+"/d"), src+"/a/d")
		b.ReportMetric(ratio(src+"/b", src+"/c"), src+"/b/c")
		b.ReportMetric(float64((med[src+"/a1"]-med[src+"/d"]).Microseconds())/benchDays/1000, src+"/overhead-ms/partition")
	}
	b.ReportMetric(med["small/b"].Seconds()*1000, "small/b-ms")
	b.ReportMetric(med["small/c"].Seconds()*1000, "small/c-ms")
	b.ReportMetric(float64((med["small/b"]-med["small/c"]).Microseconds())/1000, "fixed-cost-ms")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

func body2insert(table, body, from, to string) string {
	return fmt.Sprintf("INSERT INTO %s %s WHERE d >= DATE '%s' AND d < DATE '%s'", table, body, from, to)
}

// checksum sums up the rows of table, on DuckDB or ClickHouse: how many,
// their ids and their amounts.
func checksum(b *testing.B, db *sql.DB, table string) string {
	var n, ids any // the engines' own integer types
	var amount float64
	if err := db.QueryRow("SELECT count(*), sum(id), round(sum(amount), 2) FROM "+table).Scan(&n, &ids, &amount); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("%v rows, ids %v, amount %.2f", n, ids, amount)
}

// BenchmarkNothingToDo runs a scheduled refill plan and refill run
// in-process on a project of 1,000 daily models (chains of ten) whose
// DuckDB ledger and tables hold every partition of their history, built
// the way a daily schedule builds them (each day after the day ends, each
// model after the one it reads): the whole command, the ledger's read
// included. It does so at 365 and 3,650 days of history, so that the
// memory a plan takes can be seen not to grow with history. The first
// plan computes the ledger's summaries (plans open the file read-only);
// the run keeps them, and the plan after it reads them kept.
// nothingToDoSteps returns the commands the nothing-to-do benchmarks
// time, each after its name, at days of history from 2015-01-01: a plan
// (computing the ledger's summaries: plans keep nothing), a run (which
// keeps them) and a plan again (reading them kept).
func nothingToDoSteps(days int) [][]string {
	now := "--now=" + time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days).Add(time.Hour).Format(time.RFC3339)
	return [][]string{{"plan", "plan", now, "--output", "json"}, {"run", "run", now, "--yes", "--quiet"}, {"plan-kept", "plan", now, "--output", "json"}}
}

func BenchmarkNothingToDo(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 3.65-million-row ledger")
	}
	for _, days := range []int{365, 3650} {
		dir := chainsProject(b, 1000, days)
		for _, step := range nothingToDoSteps(days) {
			name, cmd := step[0], step[1:]
			b.Run(fmt.Sprintf("history=%dd/%s", days, name), func(b *testing.B) {
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

// BenchmarkInitialPlan runs refill plan in-process on the project
// BenchmarkNothingToDo builds, 1,000 daily models over ten years, before
// anything is built: every one of its 3.65 million partitions is missing.
// The text plan prints a line per model; the JSON plan, a step per
// partition (its contract).
func BenchmarkInitialPlan(b *testing.B) {
	const days = 3650
	dir := chainsProject(b, 1000, 0)
	now := "--now=" + time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days).Add(time.Hour).Format(time.RFC3339)
	for _, output := range []string{"text", "json"} {
		b.Run(output, func(b *testing.B) {
			var peak uint64
			var stdout strings.Builder
			for b.Loop() {
				stdout.Reset()
				stop := sampleHeap(&peak)
				code := Do(context.Background(), nil, []string{"--project", dir, "plan", now, "--output", output}, strings.NewReader(""), &stdout, io.Discard)
				stop()
				if code != 0 {
					b.Fatalf("refill plan: exit %d", code)
				}
			}
			if want := "3650000 partitions in 1000 models"; output == "text" && !strings.Contains(stdout.String(), want) {
				b.Fatalf("refill plan does not say %q:\n%.2000s", want, stdout.String())
			}
			b.ReportMetric(float64(1000*days), "partitions")
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		})
	}
}

// chainsProject writes a project of n daily models (chains of ten, each
// reading the one before) with a DuckDB warehouse holding days days of
// each (none: only the source and the ledger's tables), and returns its
// folder.
func chainsProject(b *testing.B, n, days int) string {
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
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{}))
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
		if days == 0 {
			break
		}
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
	if days > 0 {
		mustExec(fmt.Sprintf("COPY refill.partitions FROM '%s' (HEADER false, NULLSTR '')", csvPath))
	}
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
