package duckdb_test

import (
	"path/filepath"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/recorder"
)

// TestStatements records what the adapter issues for each kind of call a
// backfill makes, against a real database: testdata/statements.sql is that
// log, and every statement in it ran without an error.
func TestStatements(t *testing.T) {
	t.Parallel()
	rec := recorder.New()
	got := adaptertest.Script(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openRecorded(t, s, rec)
	})
	adaptertest.Golden(t, "testdata/statements.sql", got)
}

// openRecorded opens a database file in a temporary directory with the
// given schemas, its connections recorded by rec.
func openRecorded(t *testing.T, s adaptertest.Schemas, rec *recorder.Recorder) *duckdb.Adapter {
	t.Helper()
	a, err := duckdb.Open(t.Context(), duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb"), Schema: s.Default,
		LedgerSchema: s.Ledger, StageSchema: s.Stage, Connector: rec.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
