package recorder_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/refill/refill/adapters/recorder"
)

// open returns a database on a fake warehouse that answers "SELECT n" with
// one row holding n and fails statements containing "bad".
func open(t *testing.T, r *recorder.Recorder) *sql.DB {
	db := sql.OpenDB(r.Fake(func(query string, args []any) (*recorder.Rows, error) {
		if strings.Contains(query, "bad") {
			return nil, errors.New("syntax error")
		}
		if n, ok := strings.CutPrefix(query, "SELECT "); ok {
			return &recorder.Rows{Columns: []recorder.Column{{Name: "n", Type: "TEXT"}}, Values: [][]driver.Value{{n}}}, nil
		}
		return nil, nil
	}))
	t.Cleanup(func() { db.Close() })
	return db
}

func TestLogAndFailures(t *testing.T) {
	t.Parallel()
	r := recorder.New()
	db := open(t, r)
	ctx := context.Background()
	r.Note("a transaction")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?)", "x'y"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := tx.QueryRowContext(ctx, "SELECT 7").Scan(&got); err != nil || got != "7" {
		t.Fatalf("query: %q, %v", got, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "bad statement"); err == nil {
		t.Fatal("the warehouse's error was lost")
	}
	want := `-- a transaction
-- begin
INSERT INTO t VALUES (?); -- args: "x'y"
SELECT 7;
-- commit
bad statement; -- failed: syntax error
`
	if s := r.String(); s != want {
		t.Errorf("log:\n%s\nwant:\n%s", s, want)
	}

	// The third operation from now fails instead of reaching the
	// warehouse; the others run.
	r.Reset()
	boom := errors.New("boom")
	r.FailAt(3, boom)
	tx, _ = db.BeginTx(ctx, nil)
	_, err1 := tx.ExecContext(ctx, "DELETE FROM t")
	_, err2 := tx.ExecContext(ctx, "INSERT INTO t SELECT 1")
	tx.Rollback()
	if err1 != nil || !errors.Is(err2, boom) {
		t.Errorf("errors %v, %v; want nil, boom", err1, err2)
	}
	entries := r.Entries()
	if len(entries) != 4 || entries[2].N != 3 || !errors.Is(entries[2].Err, boom) || entries[3].Op != recorder.Rollback {
		t.Errorf("entries %+v", entries)
	}
	if stmts := r.Statements(); len(stmts) != 2 || stmts[1] != "INSERT INTO t SELECT 1" {
		t.Errorf("statements %q", stmts)
	}
}

func TestFailedCommitEndsTransaction(t *testing.T) {
	t.Parallel()
	r := recorder.New()
	db := open(t, r)
	ctx := context.Background()
	boom := errors.New("commit lost")
	r.FailWhen(func(e recorder.Entry) error {
		if e.Op == recorder.Commit {
			return boom
		}
		return nil
	})
	tx, _ := db.BeginTx(ctx, nil)
	tx.ExecContext(ctx, "DELETE FROM t")
	if err := tx.Commit(); !errors.Is(err, boom) {
		t.Fatalf("Commit: %v, want the injected failure", err)
	}
	// The connection is usable again: its transaction was rolled back.
	r.FailWhen(nil)
	if _, err := db.ExecContext(ctx, "DELETE FROM t"); err != nil {
		t.Fatal(err)
	}
}
