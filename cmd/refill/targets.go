package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/check"
)

// This file is the only place that picks concrete adapters.

// targetAccess says how a command uses the warehouse.
type targetAccess int

const (
	readOnly  targetAccess = iota // plan, status: never write, never create
	readWrite                     // run, seed
)

// engines are the engines refill runs on, in the order in which a
// project's files meet them: in messages (needs adapter: (duckdb,
// clickhouse or snowflake)) and in a declared column's native types, which
// a model's version lists in this order. Reordering them changes
// fingerprints. Everything refill knows of an engine is in its row.
var engines = []adapters.Engine{duckdb.Engine(), clickhouse.Engine(), snowflake.Engine()}

// withAdapters returns opts with what the engines add to a project's
// files: their target settings, their blocks of model settings and their
// names, so that models refuses every other key.
func withAdapters(opts models.LoadOptions) models.LoadOptions {
	opts.Adapters = nil
	for _, e := range engines {
		opts.Adapters = append(opts.Adapters, e.Keys())
	}
	return opts
}

// engineOf returns the engine named name.
func engineOf(name string) (adapters.Engine, bool) {
	i := slices.IndexFunc(engines, func(e adapters.Engine) bool { return e.Info.Name == name })
	if i < 0 {
		return adapters.Engine{}, false
	}
	return engines[i], true
}

// open connects to target t of the project in dir.
func (a *app) open(e adapters.Engine, t *models.Target, dir string, access targetAccess, holder string) (adapters.Adapter, error) {
	return e.Open(a.ctx, t, adapters.OpenOptions{Dir: dir, ReadOnly: access == readOnly, Holder: holder,
		Log: a.sqlLog(), LookupEnv: a.getenv, Configure: a.configure})
}

// checkTarget validates a target's settings for its adapter and returns
// the adapter.
func checkTarget(t *models.Target) (adapters.Engine, error) {
	e, ok := engineOf(t.Adapter)
	if !ok {
		var names []string
		for _, e := range engines {
			names = append(names, e.Info.Name)
		}
		slices.Sort(names)
		return e, t.Errorf("adapter", "unknown adapter %q in target %s (want %s)", t.Adapter, t.Name, strings.Join(names, ", "))
	}
	if t.DSN != "" && !e.DSN {
		return e, t.Errorf("dsn", "dsn does not apply to %s targets", t.Adapter)
	}
	for _, key := range slices.Sorted(maps.Keys(t.Settings)) {
		if t.Settings[key] != "" && !slices.Contains(e.TargetKeys, key) {
			return e, t.Errorf(key, "%s does not apply to %s targets", key, t.Adapter)
		}
	}
	if e.DSN && !t.Has("dsn") {
		return e, t.Errorf("dsn", "target %s needs dsn: (the %s connection string, usually from an environment variable)", t.Name, t.Adapter)
	}
	return e, nil
}

// checkProject refuses a target on which project p cannot run: models
// whose tables collide with refill's schemas or the project's sources,
// and settings the adapter rejects for p.
func checkProject(p *models.Project, t *models.Target) error {
	e, err := checkTarget(t)
	if err != nil {
		return err
	}
	_, schema := e.Dialect(t)
	s := models.TargetSchemas{Default: schema, Ledger: t.LedgerSchema, Stage: t.StageSchema}
	if err := p.CheckNames(s); err != nil {
		return err
	}
	if e.CheckTarget != nil {
		return e.CheckTarget(t, p, s)
	}
	return nil
}

// dialectFor returns a target's dialect and default schema without
// connecting, for render and offline plans.
func dialectFor(t *models.Target) (models.Dialect, string, error) {
	e, err := checkTarget(t)
	if err != nil {
		return nil, "", err
	}
	d, schema := e.Dialect(t)
	return d, schema, nil
}

// sandbox is where refill test runs the models and unit tests: an empty
// in-memory database of the engine that can open one. DuckDB is the one
// engine linked into the binary (the only one with a Sandbox), so refill
// test needs no server and runs on DuckDB.
func sandbox() check.Sandbox {
	i := slices.IndexFunc(engines, func(e adapters.Engine) bool { return e.Sandbox != nil })
	e := engines[i]
	_, schema := e.Dialect(&models.Target{Adapter: e.Info.Name})
	return check.Sandbox{Adapter: e.Info.Name, Name: e.Title, Schema: schema, Open: e.Sandbox}
}
