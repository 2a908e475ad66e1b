package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

// This file is the only place that picks concrete adapters.

// targetAccess says how a command uses the warehouse.
type targetAccess int

const (
	readOnly  targetAccess = iota // plan, status: never write, never create
	readWrite                     // run, seed
)

// adapterKinds lists, per adapter, the target keys it accepts.
var adapterKinds = map[string][]string{
	"duckdb":     {"path", "schema", "ledger_schema", "stage_schema", "concurrency"},
	"clickhouse": {"dsn", "schema", "ledger_schema", "stage_schema", "concurrency"},
	"snowflake":  {"dsn", "schema", "ledger_schema", "stage_schema", "concurrency", "warehouse"},
}

// checkTarget validates a target's settings for its adapter.
func checkTarget(t *models.Target) error {
	keys, ok := adapterKinds[t.Adapter]
	if !ok {
		names := make([]string, 0, len(adapterKinds))
		for n := range adapterKinds {
			names = append(names, n)
		}
		sort.Strings(names)
		return t.Errorf("adapter", "unknown adapter %q in target %s (want %s)", t.Adapter, t.Name, strings.Join(names, ", "))
	}
	set := map[string]bool{"path": t.Path != "", "dsn": t.DSN != "", "warehouse": t.Warehouse != ""}
	for key, isSet := range set {
		if isSet && !contains(keys, key) {
			return t.Errorf(key, "%s does not apply to %s targets", key, t.Adapter)
		}
	}
	if contains(keys, "dsn") && !t.Has("dsn") {
		return t.Errorf("dsn", "target %s needs dsn: (the %s connection string, usually from an environment variable)", t.Name, t.Adapter)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dialectFor returns a target's dialect and default schema without
// connecting, for render and offline plans.
func dialectFor(t *models.Target) (models.Dialect, string, error) {
	if err := checkTarget(t); err != nil {
		return nil, "", err
	}
	schema := t.Schema
	switch t.Adapter {
	case "duckdb":
		if schema == "" {
			schema = "main"
		}
		return duckdb.Dialect{}, schema, nil
	case "clickhouse":
		if schema == "" {
			schema = "default"
			if opts, err := clickhouse.ParseDSN(t.DSN); err == nil && opts.Auth.Database != "" {
				schema = opts.Auth.Database
			}
		}
		return clickhouse.Dialect{}, schema, nil
	case "snowflake":
		if schema == "" {
			schema = snowflake.DefaultSchema(t.DSN)
		}
		return snowflake.Dialect{}, schema, nil
	}
	return nil, "", fmt.Errorf("adapter %s is not built into this refill", t.Adapter)
}

// openTarget connects to a target.
func (a *app) openTarget(t *models.Target, dir string, access targetAccess, holder string) (adapters.Adapter, error) {
	if err := checkTarget(t); err != nil {
		return nil, err
	}
	switch t.Adapter {
	case "duckdb":
		path := t.Path
		if path == "" {
			path = "warehouse.duckdb"
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return duckdb.Open(a.ctx, duckdb.Config{Path: path, ReadOnly: access == readOnly, Schema: t.Schema,
			LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema, Holder: holder, Log: a.sqlLog()})
	case "clickhouse":
		return clickhouse.Open(a.ctx, clickhouse.Config{DSN: t.DSN, Schema: t.Schema,
			LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema, Log: a.sqlLog()})
	case "snowflake":
		return snowflake.Open(a.ctx, snowflake.Config{DSN: t.DSN, Schema: t.Schema, LedgerSchema: t.LedgerSchema,
			StageSchema: t.StageSchema, Warehouse: t.Warehouse, Log: a.sqlLog(), LookupEnv: a.getenv})
	}
	return nil, fmt.Errorf("adapter %s is not built into this refill", t.Adapter)
}

// capabilities returns an adapter's guarantees without connecting.
func capabilities(adapter string) adapters.Info {
	switch adapter {
	case "duckdb":
		return duckdb.Capabilities()
	case "clickhouse":
		return clickhouse.Capabilities()
	case "snowflake":
		return snowflake.Capabilities()
	}
	return adapters.Info{Name: adapter}
}
