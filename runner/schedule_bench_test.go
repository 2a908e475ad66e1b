package runner

import (
	"runtime"
	"testing"
	"time"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/internal/scale"
	"github.com/refill/refill/runner/plan"
)

// BenchmarkInitialBackfillBookkeeping measures what a run holds for the
// initial backfill of 1,000 daily models over ten years (3.65 M
// partitions), the warehouse aside: the plan, the partition DAG and its
// units (schedule), each partition settled, and the summary. live-MB is the
// heap still in use once the summary is made, the plan's included.
func BenchmarkInitialBackfillBookkeeping(b *testing.B) {
	p := scale.Project(b, 1000, models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}})
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main", Vars: p.Vars}
	sel := plan.Selection{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), To: "2024-12-30"} // 3,652 days
	var live uint64
	var s *Summary
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		pl, err := plan.NewPlan(p, scope, nil, sel)
		if err != nil {
			b.Fatal(err)
		}
		e := &execution{r: &Runner{}, plan: pl, observe: func(Event) {}, summary: &Summary{}}
		e.dag = schedule(pl, func(*models.Model) int { return 1 })
		for _, n := range e.nodes {
			e.settle(n, PartitionResult{Status: Succeeded, Rows: 1})
		}
		s = e.finish()
		runtime.GC()
		runtime.ReadMemStats(&after)
		live = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(e)
	}
	if s.Succeeded != 3652*1000 {
		b.Fatalf("%d partitions succeeded, want %d", s.Succeeded, 3652*1000)
	}
	b.ReportMetric(float64(s.Succeeded), "partitions")
	b.ReportMetric(float64(live)/1e6, "live-MB")
}
