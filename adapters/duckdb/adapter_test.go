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
	"github.com/refill/refill/models"
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

// TestRecordsByColumn: many records are inserted a column at a time, a few
// as VALUES; both write the same rows, NULLs, microseconds and every kind
// of character included.
func TestRecordsByColumn(t *testing.T) {
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
	// A batch's records: every column but the key the same, NULLs and
	// times among them.
	uniform := func(model string) []adapters.Record {
		var out []adapters.Record
		for i := range 40 {
			out = append(out, adapters.Record{Model: model, Partition: fmt.Sprintf("p%02d", i), State: adapters.RecordDone,
				Fingerprint: "f'", Rows: 7, RunID: "r", Attempts: 1, StartedAt: start, FinishedAt: start.Add(time.Second)})
		}
		return out
	}
	// Two models in one call, written twice: the second replaces the first.
	for range 2 {
		if err := a.RecordPartitions(ctx, append(records("columns"), uniform("uniform")...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range append(records("values"), uniform("uniform_values")...) {
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
	if got, want := rows("columns"), rows("values"); got != want {
		t.Errorf("records inserted by column:\n%s\nas VALUES:\n%s", got, want)
	}
	if got, want := rows("uniform"), rows("uniform_values"); got != want {
		t.Errorf("uniform records inserted by column:\n%s\nas VALUES:\n%s", got, want)
	}
}

// TestCleanStagesDropsOverlays: CleanStages drops a dead run's overlay
// views beside its stages (the conformance suite checks the stages), and
// leaves a live run's.
func TestCleanStagesDropsOverlays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := duckdb.Open(ctx, duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.Query(ctx, "CREATE TABLE src AS SELECT DATE '2024-01-01' AS d, 1 AS v", adapters.Tag{}); err != nil {
		t.Fatal(err)
	}
	const deadRun, liveRun = "20240101T000000Z-dead01", "20240101T000000Z-11fe02"
	target := models.Relation{Schema: "main", Name: "t"}
	overlay := func(runID string) (stage, view string) {
		st, err := a.Stage(ctx, adapters.StageRequest{Model: adaptertest.DayModel("t"), Target: target,
			Query: "SELECT d, v FROM src", Window: adaptertest.Window("2024-01-01", "2024-01-02"),
			Tag: adapters.Tag{RunID: runID, Model: "t", Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := a.Overlay(ctx, target, []*adapters.Stage{st}, false)
		if err != nil {
			t.Fatal(err)
		}
		return st.Relation.Name, v.Name
	}
	deadStage, deadView := overlay(deadRun)
	liveStage, liveView := overlay(liveRun)
	if err := a.CleanStages(ctx, func(token string) bool { return token == adapters.RunToken(deadRun) }); err != nil {
		t.Fatal(err)
	}
	count := func(fn, column, name string) int64 {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT count(*) FROM %s() WHERE %s = '%s'", fn, column, name), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		return adapters.Int(res.Rows[0][0])
	}
	for _, c := range []struct {
		fn, column, name string
		want             int64
	}{
		{"duckdb_views", "view_name", deadView, 0}, {"duckdb_tables", "table_name", deadStage, 0},
		{"duckdb_views", "view_name", liveView, 1}, {"duckdb_tables", "table_name", liveStage, 1},
	} {
		if got := count(c.fn, c.column, c.name); got != c.want {
			t.Errorf("%s holds %d of %s after CleanStages, want %d", c.fn, got, c.name, c.want)
		}
	}
}
