package clickhouse

import (
	"testing"

	"github.com/refill/refill/adapters"
)

func TestEstimateFromExplain(t *testing.T) {
	// EXPLAIN ESTIMATE's columns, as ClickHouse 21.9+ returns them.
	res := &adapters.Result{Columns: []string{"database", "table", "parts", "rows", "marks"},
		Rows: [][]any{{"raw", "orders", int64(3), int64(120000), int64(15)}, {"raw", "customers", int64(1), int64(200), int64(1)}}}
	e, err := estimateFrom(res)
	if err != nil || e.Rows != 120200 || e.Bytes != -1 {
		t.Errorf("estimate = %+v, %v", e, err)
	}
	for v, want := range map[string]bool{"18.16.1": false, "21.8.3": false, "21.9.1": true, "23.8.2.7": true, "x": false} {
		if got := versionAtLeast(v, 21, 9); got != want {
			t.Errorf("versionAtLeast(%q) = %v", v, got)
		}
	}
}
