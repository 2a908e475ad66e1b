// Package chdb_test runs chdb-server, built from ./cmd/chdb-server, on
// chDB's library and talks to it with clickhouse-go v2, as refill's
// ClickHouse adapter does. The tests skip when the library is not
// installed: run .ci/chdb/install (or set CHDB_LIB_PATH).
package chdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// addr is the running server's address, set by TestMain; skip is why
// there is none.
var addr, skip string

func TestMain(m *testing.M) {
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chdb-server:", err)
		code = 1
	}
	os.Exit(code)
}

// runWithServer builds and starts chdb-server on a fresh data directory,
// runs the tests and stops it.
func runWithServer(m *testing.M) (int, error) {
	lib := libraryPath()
	if lib == "" {
		skip = "chDB's library is not installed: run .ci/chdb/install, or set CHDB_LIB_PATH"
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "chdb-server-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "chdb-server")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/chdb-server").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("building: %v\n%s", err, out)
	}
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	portFile := filepath.Join(dir, "port")
	cmd := exec.Command(bin, "-data", filepath.Join(dir, "data"), "-port-file", portFile, "-v")
	cmd.Env = append(os.Environ(), "CHDB_LIB_PATH="+lib)
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if os.Getenv("CHDB_SERVER_LOG") != "" {
			b, _ := os.ReadFile(logFile.Name())
			os.Stderr.Write(b)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(portFile); err == nil {
			addr = "127.0.0.1:" + strings.TrimSpace(string(b))
			break
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logFile.Name())
			return 0, fmt.Errorf("exited during startup: %v\n%s", err, b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, errors.New("no port after 60 s")
		}
	}
	return m.Run(), nil
}

// libraryPath returns CHDB_LIB_PATH, or the library .ci/chdb/install puts
// in its default cache, or "" if neither exists.
func libraryPath() string {
	if p := os.Getenv("CHDB_LIB_PATH"); p != "" {
		return p
	}
	cache := os.Getenv("CHDB_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(base, "refill", "chdb-26.5.3")
	}
	p := filepath.Join(cache, "node_modules", "@chdb", "lib-linux-x64-gnu", "libchdb.so")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// dsn returns the server's DSN for database, or skips t.
func dsn(t testing.TB, database string) string {
	t.Helper()
	if addr == "" {
		t.Skip(skip)
	}
	return "clickhouse://" + addr + "/" + database
}

// openDB opens a database/sql pool on the server, as refill's adapter does.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	opts, err := clickhouse.ParseDSN(dsn(t, "default"))
	if err != nil {
		t.Fatal(err)
	}
	db := clickhouse.OpenDB(opts)
	t.Cleanup(func() { db.Close() })
	return db
}

// utc reads values in UTC, as refill's adapter does.
func utc(ctx context.Context, opts ...clickhouse.QueryOption) context.Context {
	return clickhouse.Context(ctx, append(opts, clickhouse.WithUserLocation(time.UTC))...)
}

// queryRows runs q and returns its rows as Go values.
func queryRows(t testing.TB, ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) [][]any {
	t.Helper()
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// one runs a query returning one value.
func one(t testing.TB, ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) any {
	t.Helper()
	rows := queryRows(t, ctx, db, query)
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s returned %v, want one value", query, rows)
	}
	return rows[0][0]
}

// mustExec runs statements.
func mustExec(t testing.TB, ctx context.Context, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// exceptionCode returns the code of the *clickhouse.Exception in err, or
// -1.
func exceptionCode(err error) int32 {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return ex.Code
	}
	return -1
}

// database creates a database for t, dropped afterwards.
func database(t *testing.T, db *sql.DB) string {
	t.Helper()
	name := "t_" + strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())) + "_" + strconv.Itoa(os.Getpid())
	mustExec(t, context.Background(), db, "CREATE DATABASE IF NOT EXISTS `"+name+"`")
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS `" + name + "`") })
	return name
}
