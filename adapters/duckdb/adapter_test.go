package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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

// inMemory opens an in-memory database, closed when t ends.
func inMemory(t *testing.T) *duckdb.Adapter {
	t.Helper()
	a, err := duckdb.Open(t.Context(), duckdb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestTransient(t *testing.T) {
	t.Parallel()
	a := inMemory(t)
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

// TestRecordsFromJSON: many records are inserted from one JSON text, a few
// as VALUES; both write the same rows, NULLs, microseconds and every kind
// of character included.
func TestRecordsFromJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := inMemory(t)
	if err := a.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	records := func(model string) []adapters.Record {
		var out []adapters.Record
		for i := range 40 {
			at := start.Add(time.Duration(i) * 1001 * time.Microsecond)
			r := adapters.Record{Model: model, Partition: fmt.Sprintf("p%02d", i), State: adapters.RecordDone, Fingerprint: "f",
				Rows: int64(i), RunID: "r", Attempts: i % 3, WindowStart: at.Truncate(time.Hour), WindowEnd: at.Truncate(time.Hour).Add(time.Hour),
				StartedAt: at, FinishedAt: at.Add(time.Second), PublishedAt: at.Add(time.Second)}
			switch i % 4 {
			case 1:
				r.State, r.Rows, r.PublishedAt = adapters.RecordFailed, 0, time.Time{}
				r.Error = "it's \"broken\":\n\t'quotes', \\backslashes\\, <html> & ünïcode ✓ \u2028"
			case 2:
				r.WindowStart, r.WindowEnd, r.Watermark = time.Time{}, time.Time{}, "w'1"
			case 3:
				r.State = adapters.RecordPending
			}
			out = append(out, r)
		}
		return out
	}
	if err := a.RecordPartitions(ctx, records("json")); err != nil {
		t.Fatal(err)
	}
	for _, r := range records("values") {
		if err := a.RecordPartitions(ctx, []adapters.Record{r}); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(model string) string {
		res, err := a.Query(ctx, "SELECT * EXCLUDE (model) FROM refill.partitions WHERE model = '"+model+"' ORDER BY partition_key", adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 40 {
			t.Fatalf("%s: %d records, want 40", model, len(res.Rows))
		}
		return fmt.Sprintf("%#v", res.Rows)
	}
	if got, want := rows("json"), rows("values"); got != want {
		t.Errorf("records inserted from JSON:\n%s\nas VALUES:\n%s", got, want)
	}
}
