package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// BenchmarkNothingToDoClickHouse is BenchmarkNothingToDo on the ClickHouse
// server in CLICKHOUSE_DSN: the scheduled refill plan and refill run of
// 1,000 daily models over 3,650 days of history, all built, in-process,
// the ledger's read included. The ledger (3.65 million records) and the
// tables are written by ClickHouse itself, as a daily schedule would have
// left them. The first plan computes the ledger's summaries (plans keep
// nothing); the run keeps them, and the plan after it reads them kept.
func BenchmarkNothingToDoClickHouse(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 3.65-million-row ledger")
	}
	dsn := adaptertest.ClickHouseServer.Env(b)[0]
	const n, days = 1000, 3650
	schema := fmt.Sprintf("refill_nothing_%d", os.Getpid())
	ctx := context.Background()
	a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn, Schema: schema, LedgerSchema: schema + "_refill"})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	exec := func(q string) {
		if _, err := a.DB().ExecContext(ctx, q); err != nil {
			b.Fatalf("%.300s: %v", q, err)
		}
	}
	drop := func() {
		for _, s := range []string{schema, schema + "_refill", schema + "_raw"} {
			exec("DROP DATABASE IF EXISTS " + s)
		}
	}
	drop()
	defer drop()

	dir := b.TempDir()
	write(b, dir, "refill.yml", fmt.Sprintf("targets:\n  dev: {adapter: clickhouse, dsn: \"${CLICKHOUSE_DSN}\", schema: %s, ledger_schema: %s_refill}\n", schema, schema))
	for i := 0; i < n; i++ {
		from := fmt.Sprintf(`{{ source("%s_raw.events") }}`, schema)
		if i%10 != 0 {
			from = fmt.Sprintf(`{{ ref("m%04d") }}`, i-1)
		}
		write(b, dir, fmt.Sprintf("models/m%04d.sql", i), fmt.Sprintf(
			"/* refill\npartition_by: d\ngrain: day\nstart: 2015-01-01\n*/\nSELECT d, count() AS n FROM %s\nWHERE d >= {{ start }} AND d < {{ end }}\nGROUP BY d", from))
	}
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{}))
	if err != nil {
		b.Fatal(err)
	}
	if err := a.SetupLedger(ctx); err != nil {
		b.Fatal(err)
	}
	exec("CREATE DATABASE " + schema)
	exec("CREATE DATABASE " + schema + "_raw")
	exec("CREATE TABLE " + schema + "_raw.events (d Date) ENGINE = MergeTree() PARTITION BY toYYYYMM(d) ORDER BY d")
	// Day k of model i (in build order) started i seconds after the day
	// ended, and was published then.
	scope := &models.Scope{Dialect: a.Dialect(), Schema: schema, Vars: p.Vars, Target: "dev"}
	names, fps := make([]string, len(p.Graph.Order)), make([]string, len(p.Graph.Order))
	for i, m := range p.Graph.Order {
		names[i], fps[i] = "'"+m.Name+"'", "'"+m.Version(scope).Fingerprint+"'"
		// (By year: ClickHouse 26 refuses an INSERT into more than 100
		// partitions, and ten years of months are 120.)
		exec(fmt.Sprintf("CREATE TABLE %s.%s (d Date, n UInt64) ENGINE = MergeTree() PARTITION BY toYear(d) ORDER BY d", schema, m.Name))
		exec(fmt.Sprintf("INSERT INTO %s.%s SELECT toDate('2015-01-01') + number, 1 FROM numbers(%d)", schema, m.Name, days))
	}
	exec(fmt.Sprintf(`INSERT INTO %s_refill.partitions
SELECT arrayElement([%s], i + 1), toString(day), 'done', arrayElement([%s], i + 1), 1, 'bench', 1,
       toDateTime(day, 'UTC'), toDateTime(day + 1, 'UTC'), toDateTime(day + 1, 'UTC') + i, toDateTime(day + 1, 'UTC') + i,
       toDateTime(day + 1, 'UTC') + i, NULL, NULL, 1
FROM (SELECT intDiv(number, %d) AS i, toDate('2015-01-01') + (number %% %d) AS day FROM numbers(%d))`,
		schema, strings.Join(names, ", "), strings.Join(fps, ", "), days, days, n*days))

	for _, step := range nothingToDoSteps(days) {
		name, cmd := step[0], step[1:]
		b.Run(fmt.Sprintf("history=%dd/%s", days, name), func(b *testing.B) {
			var peak uint64
			var stdout, stderr strings.Builder
			for b.Loop() {
				stdout.Reset()
				stderr.Reset()
				stop := sampleHeap(&peak)
				code := Do(context.Background(), nil, append([]string{"--project", dir}, cmd...), strings.NewReader(""), &stdout, &stderr)
				stop()
				if code != 0 {
					b.Fatalf("refill %s: exit %d\n%.2000s", cmd[0], code, stderr.String())
				}
			}
			if cmd[0] == "plan" && !strings.Contains(stdout.String(), `"steps": []`) && !strings.Contains(stdout.String(), `"steps":[]`) {
				b.Fatalf("refill plan planned something:\n%.1500s", stdout.String())
			}
			b.ReportMetric(float64(n*days), "partitions")
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		})
	}
}
