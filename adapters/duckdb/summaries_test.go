package duckdb_test

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// TestKeptSummaries: a run's adapter keeps the summaries it computes and a
// later plan, read-only, reads them instead of scanning the ledger; any
// change to the ledger, even by hand, makes them be computed again.
func TestKeptSummaries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	var mu sync.Mutex
	var log []string
	open := func(readOnly bool) *duckdb.Adapter {
		a, err := duckdb.Open(ctx, duckdb.Config{Path: path, ReadOnly: readOnly, Log: func(s string) {
			mu.Lock()
			log = append(log, s)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// summarize returns the summaries of q, and whether the ledger was
	// scanned for them (rather than the kept ones read).
	q := adapters.SummaryQuery{Models: []string{"up", "down"}, Edges: []adapters.Edge{{Down: "down", Up: "up", Grain: models.Day}}}
	summarize := func(a *duckdb.Adapter) ([]adapters.RecordSummary, bool) {
		t.Helper()
		mu.Lock()
		log = nil
		mu.Unlock()
		sums, err := a.SummarizePartitions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return sums, slices.ContainsFunc(log, func(s string) bool { return strings.Contains(s, "GROUP BY") })
	}

	a := open(false)
	if err := a.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	records := adaptertest.DailyPair(40)
	if err := a.RecordPartitions(ctx, records); err != nil {
		t.Fatal(err)
	}
	first, scanned := summarize(a)
	if !scanned || len(first) != 4 {
		t.Fatalf("first summaries: scanned %v, %d summaries, want 4 (2 models x 2 months)", scanned, len(first))
	}
	if again, scanned := summarize(a); scanned || !slices.Equal(again, first) {
		t.Fatalf("asked again: scanned %v, %v, want %v from the kept ones", scanned, again, first)
	}
	// By hand, behind refill's back: up's 2024-02-03 republished after
	// down read it.
	if _, err := a.DB().ExecContext(ctx, `UPDATE refill.partitions SET published_at = published_at + INTERVAL 1 DAY WHERE model = 'up' AND partition_key = '2024-02-03'`); err != nil {
		t.Fatal(err)
	}
	changed, scanned := summarize(a)
	stale := 0
	for _, s := range changed {
		stale += int(s.Stale)
	}
	if !scanned || stale != 1 {
		t.Fatalf("after a hand edit: scanned %v, %d stale, want the ledger scanned and 1 stale: %v", scanned, stale, changed)
	}
	a.Close()

	// A plan opens the file read-only: it reads what the run kept.
	ro := open(true)
	defer ro.Close()
	if got, scanned := summarize(ro); scanned || !slices.Equal(got, changed) {
		t.Fatalf("read-only: scanned %v, %v, want %v from the kept ones", scanned, got, changed)
	}
	// Another query (the grain of the edge changed): computed.
	q.Edges[0].Grain = models.Month
	if _, scanned := summarize(ro); !scanned {
		t.Fatalf("another query was answered with the kept summaries of the first")
	}
}
