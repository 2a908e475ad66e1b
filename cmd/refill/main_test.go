package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// shop copies the example project into a temporary folder, applying
// changes (file path -> new content), and returns the folder.
func shop(t testing.TB, changes map[string]string) string {
	t.Helper()
	return project(t, "shop", changes)
}

// project copies the example project testdata/name into a temporary
// folder, applying changes (file path -> new content), and returns the
// folder.
func project(t testing.TB, name string, changes map[string]string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasSuffix(rel, ".duckdb") || strings.Contains(rel, ".duckdb.") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, text := range changes {
		write(t, dst, rel, text)
	}
	return dst
}

func write(t testing.TB, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// result is one in-process invocation of refill.
type result struct {
	code           int
	stdout, stderr string
}

// refill runs the CLI in-process in project dir.
func refill(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--project", dir}, args...)
	code := Do(context.Background(), nil, full, strings.NewReader(""), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// refillEnv runs the CLI in-process in project dir with env as the whole
// environment refill.yml's ${VAR}s read, whatever the test's own.
func refillEnv(t *testing.T, dir string, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	code := a.do(append([]string{"--project", dir}, args...))
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func mustRefill(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := refill(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("refill %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// now pins the clock after the shop's last order, so runs are reproducible.
const now = "--now=2024-05-01"

// janNow pins the clock at the end of January: January is then the shop's
// whole history, so its all-time models (customer_lifetime,
// revenue_by_region) can be built from January alone.
const janNow = "--now=2024-02-01"

// query opens the project's DuckDB file (refill must not be holding it)
// and returns the first column of the first row of q.
func query(t *testing.T, dir, q string) any {
	t.Helper()
	rows := queryRows(t, dir, q)
	if len(rows) == 0 {
		return nil
	}
	return rows[0][0]
}

func queryRows(t *testing.T, dir, q string) [][]any {
	t.Helper()
	db, err := sql.Open("duckdb", filepath.Join(dir, "warehouse.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dbRows(t, db, q)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// execSQL runs a statement on the project's DuckDB file.
func execSQL(t *testing.T, dir, stmt string) {
	t.Helper()
	db, err := sql.Open("duckdb", filepath.Join(dir, "warehouse.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func osReadFile(dir, rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, rel))
	return string(b), err
}
