package duckdb_test

import (
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/recorder"
)

// TestPublishFaults fails each operation of a publication of two tables
// in turn: DuckDB's guarantee is that a publication is one transaction,
// so every failure leaves both tables and the ledger as they were.
func TestPublishFaults(t *testing.T) {
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
