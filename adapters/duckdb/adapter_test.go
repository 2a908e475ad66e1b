package duckdb_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
)

func TestConformance(t *testing.T) {
	adaptertest.Run(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		a, err := duckdb.Open(context.Background(), duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb"),
			Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	})
}
