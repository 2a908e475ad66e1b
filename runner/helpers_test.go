package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// shopFS returns the example project as an in-memory tree that tests may
// change, with the given files added or replaced.
func shopFS(t *testing.T, changes map[string]string) fstest.MapFS {
	t.Helper()
	fsys, _ := adaptertest.Shop(t, duckdb.Engine())
	for k, v := range changes {
		if v == "" {
			delete(fsys, k)
			continue
		}
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

// env is a project loaded against a fresh DuckDB database with seeds.
type env struct {
	t       *testing.T
	fsys    fstest.MapFS
	project *models.Project
	db      *duckdb.Adapter
	runner  *runner.Runner
	path    string
}

var jan2024 = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC) // "now" for the shop: after its last order

func newEnv(t *testing.T, changes map[string]string) *env {
	t.Helper()
	e := &env{t: t, fsys: shopFS(t, changes), path: filepath.Join(t.TempDir(), "w.duckdb")}
	db, err := duckdb.Open(context.Background(), duckdb.Config{Path: e.path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.load()
	seeds, err := e.project.LoadSeeds(e.fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		if err := db.LoadSeed(context.Background(), s, s.Relation); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// loadOptions load the test projects, whose targets may set DuckDB's
// settings (a path).
var loadOptions = models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}}

// load (re)loads the project from e.fsys.
func (e *env) load() {
	e.t.Helper()
	p, err := models.Load(e.fsys, loadOptions)
	if err != nil {
		e.t.Fatal(err)
	}
	e.project = p
	e.runner = &runner.Runner{Reader: plan.Reader{Project: p, Adapter: e.db, Scope: &models.Scope{Dialect: e.db.Dialect(), Schema: "main", Vars: p.Vars}}, Target: "dev"}
}

func (e *env) with(a adapters.Adapter) *runner.Runner {
	r := *e.runner
	r.Adapter = a
	return &r
}

func (e *env) plan(sel plan.Selection) *plan.Plan {
	e.t.Helper()
	if sel.Now.IsZero() {
		sel.Now = jan2024
	}
	p, err := e.runner.Plan(context.Background(), sel)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) run(sel plan.Selection, opts runner.RunOptions) *runner.Summary {
	e.t.Helper()
	s, err := e.runner.Run(context.Background(), e.plan(sel), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// query returns the rows of q.
func (e *env) query(q string) [][]any {
	e.t.Helper()
	res, err := e.db.Query(context.Background(), q, adapters.Tag{})
	if err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return res.Rows
}

func (e *env) count(q string) int64 {
	e.t.Helper()
	return adapters.Int(e.query(q)[0][0])
}

func (e *env) records(model string) map[string]adapters.Record {
	e.t.Helper()
	recs, err := e.db.Partitions(context.Background(), []string{model})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]adapters.Record{}
	for _, r := range recs {
		out[r.Partition] = r
	}
	return out
}
