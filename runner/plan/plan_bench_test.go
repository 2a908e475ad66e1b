package plan_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/internal/scale"
	"github.com/refill/refill/runner/plan"
)

// doneRecords returns a done record, with the right fingerprint, for every
// partition of every model.
func doneRecords(b testing.TB, p *models.Project, scope *models.Scope, days int) []adapters.Record {
	var out []adapters.Record
	built := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, m := range p.Graph.Order {
		parts := m.Partitions(m.Config.Start, m.Config.Start.AddDate(0, 0, days-1))
		fp := m.Version(scope).Fingerprint
		for _, part := range parts {
			out = append(out, adapters.Record{Model: m.Name, Partition: part.Key, State: adapters.RecordDone, Fingerprint: fp,
				WindowStart: part.Start, WindowEnd: part.End, StartedAt: built, FinishedAt: built, PublishedAt: built})
		}
		built = built.Add(time.Second)
	}
	return out
}

const scaleModels = 1000

// BenchmarkPlan plans 1,000 daily models over 3,650 days with NewPlan, from
// every record: from an empty ledger (every partition missing) and from a
// ledger where everything is done (nothing to do). A plan through
// Runner.Plan reads the ledger's summaries first and few records
// (BenchmarkNothingToDo in cmd/refill measures that, the whole command).
func BenchmarkPlan(b *testing.B) {
	p := scale.Project(b, scaleModels, loadOptions)
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main", Vars: p.Vars}
	sel := plan.Selection{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), To: "2024-12-30"} // 3,652 days from 2015-01-01
	b.Run("empty-ledger", func(b *testing.B) {
		var pl *plan.Plan
		for b.Loop() {
			var err error
			if pl, err = plan.NewPlan(p, scope, nil, sel); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(pl.Len()), "partitions")
		reportHeap(b)
	})
	b.Run("done-ledger", func(b *testing.B) {
		records := doneRecords(b, p, scope, 3652)
		b.ResetTimer()
		var pl *plan.Plan
		for b.Loop() {
			var err error
			if pl, err = plan.NewPlan(p, scope, records, sel); err != nil {
				b.Fatal(err)
			}
		}
		if pl.Len() != 0 {
			b.Fatalf("%d steps planned over a done ledger", pl.Len())
		}
		b.ReportMetric(float64(len(records)), "partitions")
		reportHeap(b)
	})
}

// reportHeap reports the heap in use after the benchmark, in MB.
func reportHeap(b *testing.B) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
}
