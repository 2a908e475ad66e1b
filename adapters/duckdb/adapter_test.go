package duckdb_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
)

func TestConformance(t *testing.T) {
	t.Parallel()
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

func TestTransient(t *testing.T) {
	t.Parallel()
	a, err := duckdb.Open(context.Background(), duckdb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	_, sqlErr := a.Query(ctx, "SELECT * FROM no_such_table", adapters.Tag{})
	_, syntaxErr := a.Query(ctx, "SELEC 1", adapters.Tag{})
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{sqlErr, false},
		{syntaxErr, false},
		{context.Canceled, false},
		{errors.New(`TransactionContext Error: Catalog write-write conflict on create with "refill_stage"`), true},
		{errors.New("Conflict on tuple deletion!"), true},
		{&adapters.TransientError{Err: errors.New("injected")}, true},
	} {
		if got := a.Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	// A real conflict: two transactions deleting the same rows.
	db := a.DB()
	db.Exec("CREATE TABLE c AS SELECT range AS i FROM range(10)")
	tx1, _ := db.Begin()
	tx2, _ := db.Begin()
	_, err1 := tx1.Exec("DELETE FROM c WHERE i < 5")
	_, err2 := tx2.Exec("DELETE FROM c WHERE i < 5")
	tx1.Commit()
	tx2.Rollback()
	if err1 != nil || err2 == nil {
		t.Fatalf("two transactions deleting the same rows did not conflict (%v, %v): the transient classification is untested", err1, err2)
	}
	if !a.Transient(err2) {
		t.Errorf("a real DuckDB conflict is not transient: %v", err2)
	}
}
