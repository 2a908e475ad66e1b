package duckdb_test

import (
	"path/filepath"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/recorder"
)

// TestPublishFaults fails each operation of a publication of two tables
// in turn: DuckDB's guarantee is that a publication is one transaction,
// so every failure leaves both tables and the ledger as they were.
func TestPublishFaults(t *testing.T) {
	t.Parallel()
	rec := recorder.New()
	adaptertest.Faults(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openRecorded(t, s, rec)
	}, func(t *testing.T, f *adaptertest.Fault) {
		f.WantUnchanged()
		// The second table, new, was not created either.
		if cols, err := f.A.Columns(f.Ctx, f.Rel("w")); err != nil || cols != nil {
			t.Errorf("after the failure the new table %s has columns %v (%v), want none", f.Rel("w"), cols, err)
		}
	})
}

// TestEveryStatementFails fails each operation of adaptertest.Script in
// turn: the call that made it must return the failure.
func TestEveryStatementFails(t *testing.T) {
	t.Parallel()
	rec := recorder.New()
	adaptertest.ScriptFaults(t, rec, func(t *testing.T, s adaptertest.Schemas) (adapters.Adapter, error) {
		a, err := duckdb.Open(t.Context(), duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb"), Schema: s.Default,
			LedgerSchema: s.Ledger, StageSchema: s.Stage, Connector: rec.Wrap})
		if err == nil {
			t.Cleanup(func() { a.Close() })
		}
		return a, err
	}, nil)
}
