package main

import (
	"cmp"
	"context"
	"fmt"
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
				path := cmp.Or(t.Settings["path"], "warehouse.duckdb")
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				cfg := duckdb.Config{Path: path, ReadOnly: access == readOnly, Schema: t.Schema,
					LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema, Holder: holder, Log: a.sqlLog()}
				a.configureAdapter(&cfg)
				return duckdb.Open(a.ctx, cfg)
			},
			parser: func() (sqlParser, error) { return duckdb.NewParser() },
			check: func(t *models.Target, p *models.Project, s models.TargetSchemas) error {
				// DuckDB names the database after its file: a schema of the
				// same name makes every two-part name ambiguous.
				path := cmp.Or(t.Settings["path"], "warehouse.duckdb")
				catalog := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
				for _, schema := range append([]string{s.Default, s.Ledger, s.Stage}, p.Schemas()...) {
					if schema != "" && strings.EqualFold(schema, catalog) {
						return t.Errorf("path", "DuckDB names the database in %s %q, like the schema %s, which makes names such as %s.x ambiguous; rename the file",
							filepath.Base(path), catalog, schema, schema)
					}
				}
				return nil
			},
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
			check: checkClickHouseCluster,
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

// checkClickHouseCluster refuses cluster settings that cannot work: a
// layout or sharding key without a cluster, an unknown layout, and under
// the sharded layout a model whose table is another's local table.
func checkClickHouseCluster(t *models.Target, p *models.Project, s models.TargetSchemas) error {
	layout := t.Settings["layout"]
	for _, key := range []string{"layout", "sharding_key"} {
		// Whether cluster: is set, not its value: an unset variable in it
		// is the target's own error (Target.Err), reported when it is used.
		if t.Has(key) && !t.Has("cluster") {
			return t.Errorf(key, "%s applies to a cluster: set cluster: (a cluster of the servers' remote_servers)", key)
		}
	}
	if layout != "" && !clickhouse.KnownLayout(layout) {
		return t.Errorf("layout", "unknown layout %q: want %s (every node holds every row) or %s (a Distributed table over a replicated table per shard)",
			layout, clickhouse.LayoutReplicated, clickhouse.LayoutSharded)
	}
	if layout != clickhouse.LayoutSharded {
		return nil
	}
	tables := map[string]*models.Model{}
	name := func(r models.Relation) string { return strings.ToLower(cmp.Or(r.Schema, s.Default) + "." + r.Name) }
	for _, m := range p.Models {
		tables[name(m.Relation)] = m
	}
	for _, m := range p.Models {
		local := m.Relation
		local.Name += clickhouse.LocalSuffix
		if other := tables[name(local)]; other != nil {
			return &models.Error{File: other.Path, Msg: fmt.Sprintf("model %s would be written to %s, which the sharded layout uses for the shards of %s; rename one of them",
				other.Name, name(local), m.Name)}
		}
	}
	return nil
}
