package models

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestProjectConfig(t *testing.T) {
	yml := `
models: models
target: dev
targets:
  dev:  {adapter: duckdb, path: warehouse.duckdb, concurrency: 2}
  prod: {adapter: snowflake, dsn: "${SNOWFLAKE_DSN}", warehouse: "${WH:-BIG_WH}"}
vars: {min_amount: 10, who: "${USER_NAME}"}
`
	env := map[string]string{"USER_NAME": "ana"}
	fsys := fstest.MapFS{"refill.yml": {Data: []byte(yml)}, "models/a.sql": {Data: []byte("SELECT 1")}}
	p, err := Load(fsys, LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Vars: map[string]any{"min_amount": 20},
		Adapters: testAdapters})
	if err != nil {
		t.Fatal(err)
	}
	if p.Vars["min_amount"] != 20 || p.Vars["who"] != "ana" {
		t.Errorf("vars = %v", p.Vars)
	}
	dev, err := p.Target("")
	if err != nil || dev.Settings["path"] != "warehouse.duckdb" || dev.Concurrency != 2 || dev.LedgerSchema != "refill" {
		t.Errorf("dev = %+v, %v", dev, err)
	}
	// prod needs SNOWFLAKE_DSN, which is unset: an error only when prod is used.
	_, err = p.Target("prod")
	if err == nil || !strings.Contains(err.Error(), "refill.yml:6:") || !strings.Contains(err.Error(), "SNOWFLAKE_DSN is not set") {
		t.Errorf("Target(prod) error = %v", err)
	}
	if p.Targets["prod"].Settings["warehouse"] != "BIG_WH" {
		t.Errorf("default not applied: %q", p.Targets["prod"].Settings["warehouse"])
	}
	if _, err := p.Target("stage"); err == nil || !strings.Contains(err.Error(), "unknown target") {
		t.Errorf("unknown target: %v", err)
	}
}

func TestProjectConfigErrors(t *testing.T) {
	t.Parallel()
	for yml, want := range map[string]string{
		"targets:\n  dev: {adaptor: duckdb}\n":                 `refill.yml:2:9: unknown key "adaptor" in target dev (did you mean "adapter"?)`,
		"target: prd\ntargets:\n  prod: {adapter: duckdb}\n":   `refill.yml:1:9: target "prd" is not defined under targets: (did you mean "prod"?)`,
		"modles: x\ntargets:\n  dev: {adapter: duckdb}\n":      `refill.yml:1:1: unknown key "modles" in refill.yml (did you mean "models"?)`,
		"targets:\n  dev: {adapter: duckdb, concurrency: 0}\n": `refill.yml:2:39: concurrency must be at least 1`,
		"targets: [\n": `refill.yml`,
		"targets:\n  dev: {adapter: duckdb}\nmodels: elsewhere\n": `models folder "elsewhere" not found`,
	} {
		fsys := fstest.MapFS{"refill.yml": {Data: []byte(yml)}, "models/a.sql": {Data: []byte("SELECT 1")}}
		_, err := Load(fsys, LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Adapters: testAdapters})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", yml, err, want)
		}
	}
}

// TestBrokenModelsLoadWithoutThem: a model file's errors break that model
// and, transitively, what reads it; the project loads without them and
// the error lists the file's errors. An error of the project's fails the
// load.
func TestBrokenModelsLoadWithoutThem(t *testing.T) {
	t.Parallel()
	p, err := load(t, map[string]string{
		"models/a.sql": "SELECT 1 AS x",
		"models/b.sql": "SELECT x FROM {{ ref(\"a\") }} WHERE {{ nope }}",
		"models/c.sql": "SELECT x FROM {{ ref(\"b\") }}",
		"models/d.sql": "SELECT x FROM {{ ref(\"c\") }}",
		"models/e.sql": "SELECT x FROM {{ ref(\"a\") }}",
	})
	var list ErrorList
	if p == nil || !errors.As(err, &list) || len(list) != 1 || list[0].File != "models/b.sql" {
		t.Fatalf("load = %v, %v; want the project and b's error", p, err)
	}
	var healthy, broken []string
	for _, m := range p.Models {
		healthy = append(healthy, m.Name)
	}
	for _, b := range p.Broken {
		broken = append(broken, b.Name+": "+b.Why())
	}
	if strings.Join(healthy, " ") != "a e" || len(broken) != 3 || broken[1] != "c: reads b, which is broken" || broken[2] != "d: reads c, which is broken" {
		t.Errorf("healthy %v, broken %v", healthy, broken)
	}
	if _, err := p.Model("b"); err == nil || p.BrokenModel("b") == nil {
		t.Errorf("b is selectable (%v) or not listed broken", err)
	}
	if p.Graph == nil || len(p.Graph.Downstream(p.ModelByName("a"))) != 1 {
		t.Errorf("the graph of the healthy models is not a -> e")
	}
	// A cycle is the project's error: nothing loads.
	if p, err := load(t, map[string]string{"models/a.sql": "SELECT * FROM {{ ref(\"b\") }}", "models/b.sql": "SELECT * FROM {{ ref(\"a\") }}",
		"models/c.sql": "SELECT {{ nope }}"}); p != nil || err == nil {
		t.Errorf("a project error loaded %v, %v", p, err)
	}
}
