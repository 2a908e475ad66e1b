package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// layers are the packages of refill from the bottom up (as
// docs/architecture.md draws them): a package may import only packages of
// lower floors, and the engines are imported by cmd/refill alone.
var layers = []struct {
	floor int
	dirs  []string
}{
	{0, []string{"models"}},
	{1, []string{"adapters", "adapters/recorder", "runner/internal/scale"}},
	{2, []string{"adapters/internal/sqlkit", "adapters/snowflake/internal/nominicore"}},
	{3, []string{"adapters/duckdb", "adapters/clickhouse", "adapters/snowflake", "adapters/adaptertest"}},
	{4, []string{"runner/plan"}},
	{5, []string{"runner"}},
	{6, []string{"runner/check", "cmd/refill/internal/statuspage"}},
	{7, []string{"cmd/refill/internal/junit"}},
	{8, []string{"cmd/refill"}},
}

var engineDirs = map[string]bool{"adapters/duckdb": true, "adapters/clickhouse": true, "adapters/snowflake": true}

// TestImportsPointDown reads the imports of every package's non-test
// files and refuses an arrow up (or sideways into an engine).
func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	const module = "github.com/refill/refill/"
	floorOf := map[string]int{}
	for _, f := range layers {
		for _, d := range f.dirs {
			floorOf[d] = f.floor
		}
	}
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		from, ok := floorOf[dir]
		if !ok {
			t.Errorf("%s: package %s has no floor in this test: give it one (and a place in docs/architecture.md)", rel, dir)
			return nil
		}
		seen[dir] = true
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range file.Imports {
			to, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module)
			if !ok || to == dir {
				continue
			}
			switch {
			case engineDirs[to] && dir != "cmd/refill":
				t.Errorf("%s imports the engine %s: only cmd/refill picks engines", rel, to)
			case floorOf[to] >= from:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports point down", rel, from, to, floorOf[to])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range floorOf {
		if !seen[dir] {
			t.Errorf("%s has a floor but no package: drop it from the list", dir)
		}
	}
}
