package enginetest

import (
	"os"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
)

// TestCapabilities checks the table of optional interfaces in the adapters
// package's doc comment against what each engine's adapter implements.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	engines := []struct {
		name    string
		adapter adapters.Adapter
	}{{"duckdb", (*duckdb.Adapter)(nil)}, {"clickhouse", (*clickhouse.Adapter)(nil)}, {"snowflake", (*snowflake.Adapter)(nil)}}
	implements := map[string]func(adapters.Adapter) bool{
		"Classifier":       func(a adapters.Adapter) bool { _, ok := a.(adapters.Classifier); return ok },
		"Estimator":        func(a adapters.Adapter) bool { _, ok := a.(adapters.Estimator); return ok },
		"RowCounter":       func(a adapters.Adapter) bool { _, ok := a.(adapters.RowCounter); return ok },
		"ShapeDescriber":   func(a adapters.Adapter) bool { _, ok := a.(adapters.ShapeDescriber); return ok },
		"Differ":           func(a adapters.Adapter) bool { _, ok := a.(adapters.Differ); return ok },
		"CrossReader":      func(a adapters.Adapter) bool { _, ok := a.(adapters.CrossReader); return ok },
		"PartStater":       func(a adapters.Adapter) bool { _, ok := a.(adapters.PartStater); return ok },
		"StageSummarizer":  func(a adapters.Adapter) bool { _, ok := a.(adapters.StageSummarizer); return ok },
		"StageCleaner":     func(a adapters.Adapter) bool { _, ok := a.(adapters.StageCleaner); return ok },
		"Overlayer":        func(a adapters.Adapter) bool { _, ok := a.(adapters.Overlayer); return ok },
		"Rebuilder":        func(a adapters.Adapter) bool { _, ok := a.(adapters.Rebuilder); return ok },
		"DirectPublisher":  func(a adapters.Adapter) bool { _, ok := a.(adapters.DirectPublisher); return ok },
		"Seeder":           func(a adapters.Adapter) bool { _, ok := a.(adapters.Seeder); return ok },
		"Pruner":           func(a adapters.Adapter) bool { _, ok := a.(adapters.Pruner); return ok },
		"Deferrer":         func(a adapters.Adapter) bool { _, ok := a.(adapters.Deferrer); return ok },
		"LedgerSummarizer": func(a adapters.Adapter) bool { _, ok := a.(adapters.LedgerSummarizer); return ok },
	}
	src, err := os.ReadFile("../../adapters/adapter.go")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "//\trole       optional             duckdb  clickhouse  snowflake\n")
	if !ok {
		t.Fatal("adapters/adapter.go has no table of optional interfaces")
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "//\t"))
		if !strings.HasPrefix(line, "//\t") || len(f) != 2+len(engines) {
			break
		}
		is, ok := implements[f[1]]
		if !ok {
			t.Errorf("the table lists %s, which this test does not know", f[1])
			continue
		}
		seen[f[1]] = true
		for i, e := range engines {
			if got, says := is(e.adapter), f[2+i] == "yes"; got != says {
				t.Errorf("the table says %s implements %s: %v; it does: %v", e.name, f[1], says, got)
			}
		}
	}
	for name := range implements {
		if !seen[name] {
			t.Errorf("the table does not list %s", name)
		}
	}
}
