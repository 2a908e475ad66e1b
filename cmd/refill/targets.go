package main

import (
	"cmp"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
)

// This file is the only place that picks concrete adapters.

// targetAccess says how a command uses the warehouse.
type targetAccess int

const (
	readOnly  targetAccess = iota // plan, status: never write, never create
	readWrite                     // run, seed
)

// adapterKind is everything the CLI knows of one adapter.
type adapterKind struct {
	dsn bool // its targets connect with dsn:
	// settings are the target keys of its own (models.Target.Settings).
	settings []string
	// block checks a model's block of settings for it; nil when it has none.
	block models.BlockFunc
	info  adapters.Info
	// dialect returns the dialect and the default schema, without
	// connecting; open connects.
	dialect func(t *models.Target) (models.Dialect, string)
	open    func(a *app, t *models.Target, dir string, access targetAccess, holder string) (adapters.Adapter, error)
	// check, when set, refuses settings that cannot work with project p.
	check func(t *models.Target, p *models.Project, schemas models.TargetSchemas) error
	// parser, when set, opens a parser of the dialect that needs no
	// connection, for validate.
	parser func() (sqlParser, error)
}

// sqlParser parses one dialect's statements offline.
type sqlParser interface {
	Parse(ctx context.Context, sql string) error
	Close() error
}

// adapterNames are the adapters kindOf knows, in the order in which a
// project's files meet them: in messages (needs adapter: (duckdb,
// clickhouse or snowflake)) and in a declared column's native types, which
// a model's version lists in this order. Reordering them changes
// fingerprints.
var adapterNames = []string{"duckdb", "clickhouse", "snowflake"}

// withAdapters returns opts with what the adapters add to a project's
// files: their target settings, their blocks of model settings and their
// names, so that models refuses every other key.
func withAdapters(opts models.LoadOptions) models.LoadOptions {
	keys := make([]models.AdapterKeys, len(adapterNames))
	for i, name := range adapterNames {
		kind, _ := kindOf(name)
		keys[i] = models.AdapterKeys{Name: name, TargetKeys: kind.settings, Block: kind.block}
	}
	opts.Adapters = keys
	return opts
}

// kindOf describes the adapter named name.
func kindOf(name string) (adapterKind, bool) {
	switch name {
	case "duckdb":
		return adapterKind{
			settings: []string{"path"},
			info:     duckdb.Capabilities(),
			dialect: func(t *models.Target) (models.Dialect, string) {
				return duckdb.Dialect{}, cmp.Or(t.Schema, "main")
			},
			open: func(a *app, t *models.Target, dir string, access targetAccess, holder string) (adapters.Adapter, error) {
				path := cmp.Or(t.Settings["path"], duckdb.DefaultPath)
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				cfg := duckdb.Config{Path: path, ReadOnly: access == readOnly, Schema: t.Schema,
					LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema, Holder: holder, Log: a.sqlLog()}
				a.configureAdapter(&cfg)
				return duckdb.Open(a.ctx, cfg)
			},
			parser: func() (sqlParser, error) { return duckdb.NewParser() },
			check:  duckdb.CheckTarget,
		}, true
	case "clickhouse":
		return adapterKind{
			dsn:      true,
			settings: []string{"cluster", "layout", "sharding_key"},
			block:    clickhouse.CheckBlock,
			info:     clickhouse.Capabilities(),
			dialect: func(t *models.Target) (models.Dialect, string) {
				schema := t.Schema
				if opts, err := clickhouse.ParseDSN(t.DSN); schema == "" && err == nil {
					schema = opts.Auth.Database
				}
				return clickhouse.Dialect{}, cmp.Or(schema, "default")
			},
			open: func(a *app, t *models.Target, _ string, _ targetAccess, _ string) (adapters.Adapter, error) {
				cfg := clickhouse.Config{DSN: t.DSN, Schema: t.Schema, LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema,
					Cluster: t.Settings["cluster"], Layout: t.Settings["layout"], ShardingKey: t.Settings["sharding_key"], Log: a.sqlLog()}
				a.configureAdapter(&cfg)
				return clickhouse.Open(a.ctx, cfg)
			},
			check: clickhouse.CheckTarget,
		}, true
	case "snowflake":
		return adapterKind{
			dsn:      true,
			settings: []string{"warehouse"},
			block:    snowflake.CheckBlock,
			info:     snowflake.Capabilities(),
			dialect: func(t *models.Target) (models.Dialect, string) {
				return snowflake.Dialect{}, cmp.Or(t.Schema, snowflake.DefaultSchema(t.DSN))
			},
			open: func(a *app, t *models.Target, _ string, _ targetAccess, _ string) (adapters.Adapter, error) {
				cfg := snowflake.Config{DSN: t.DSN, Schema: t.Schema, LedgerSchema: t.LedgerSchema,
					StageSchema: t.StageSchema, Warehouse: t.Settings["warehouse"], Log: a.sqlLog(), LookupEnv: a.getenv}
				a.configureAdapter(&cfg)
				return snowflake.Open(a.ctx, cfg)
			},
		}, true
	}
	return adapterKind{}, false
}

// checkTarget validates a target's settings for its adapter and returns
// the adapter.
func checkTarget(t *models.Target) (adapterKind, error) {
	kind, ok := kindOf(t.Adapter)
	if !ok {
		return kind, t.Errorf("adapter", "unknown adapter %q in target %s (want %s)", t.Adapter, t.Name, strings.Join(slices.Sorted(slices.Values(adapterNames)), ", "))
	}
	if t.DSN != "" && !kind.dsn {
		return kind, t.Errorf("dsn", "dsn does not apply to %s targets", t.Adapter)
	}
	for _, key := range slices.Sorted(maps.Keys(t.Settings)) {
		if t.Settings[key] != "" && !slices.Contains(kind.settings, key) {
			return kind, t.Errorf(key, "%s does not apply to %s targets", key, t.Adapter)
		}
	}
	if kind.dsn && !t.Has("dsn") {
		return kind, t.Errorf("dsn", "target %s needs dsn: (the %s connection string, usually from an environment variable)", t.Name, t.Adapter)
	}
	return kind, nil
}

// checkProject refuses a target on which project p cannot run: models
// whose tables collide with refill's schemas or the project's sources,
// and settings the adapter rejects for p.
func checkProject(p *models.Project, t *models.Target) error {
	kind, err := checkTarget(t)
	if err != nil {
		return err
	}
	_, schema := kind.dialect(t)
	s := models.TargetSchemas{Default: schema, Ledger: t.LedgerSchema, Stage: t.StageSchema}
	if err := p.CheckNames(s); err != nil {
		return err
	}
	if kind.check != nil {
		return kind.check(t, p, s)
	}
	return nil
}

// dialectFor returns a target's dialect and default schema without
// connecting, for render and offline plans.
func dialectFor(t *models.Target) (models.Dialect, string, error) {
	kind, err := checkTarget(t)
	if err != nil {
		return nil, "", err
	}
	d, schema := kind.dialect(t)
	return d, schema, nil
}

// sandbox is where refill test runs the models and unit tests: an empty
// in-memory DuckDB.
func sandbox() runner.Sandbox {
	return runner.Sandbox{Adapter: duckdb.Capabilities().Name, Name: "DuckDB", Schema: "main",
		Open: func(ctx context.Context) (adapters.Adapter, error) { return duckdb.Open(ctx, duckdb.Config{}) }}
}

// configureAdapter hands an adapter's Config to the app's configure hook,
// if any, before the adapter opens.
func (a *app) configureAdapter(cfg any) {
	if a.configure != nil {
		a.configure(cfg)
	}
}

// duckdbEngineVersion is the version of the DuckDB library linked in, for
// --version.
func duckdbEngineVersion() (string, error) {
	return duckdb.EngineVersion(context.Background())
}
