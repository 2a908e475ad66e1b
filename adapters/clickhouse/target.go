package clickhouse

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Engine describes ClickHouse to a program that opens targets. A target
// connects with dsn: (the native protocol); cluster:, layout: and
// sharding_key: place its tables on a cluster (see Config).
func Engine() adapters.Engine {
	return adapters.Engine{
		Info:       capabilities(),
		Title:      "ClickHouse",
		Driver:     "github.com/ClickHouse/clickhouse-go/v2",
		DSN:        true,
		TargetKeys: []string{"cluster", "layout", "sharding_key"},
		Block:      checkBlock,
		Dialect: func(t *models.Target) (models.Dialect, string) {
			schema := t.Schema
			if opts, err := ParseDSN(t.DSN); schema == "" && err == nil {
				schema = opts.Auth.Database
			}
			return Dialect{}, cmp.Or(schema, "default")
		},
		CheckTarget: checkTarget,
		Open: func(ctx context.Context, t *models.Target, o adapters.OpenOptions) (adapters.Adapter, error) {
			cfg := Config{DSN: t.DSN, Schema: t.Schema, LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema, ReadOnly: o.ReadOnly,
				Cluster: t.Settings["cluster"], Layout: t.Settings["layout"], ShardingKey: t.Settings["sharding_key"], Log: o.Log}
			if o.Configure != nil {
				o.Configure(&cfg)
			}
			return Open(ctx, cfg)
		},
	}
}

// checkTarget refuses cluster settings of target t that cannot work for
// project p, whose schemas on t are s: a layout or sharding key without a
// cluster, an unknown layout, and under the sharded layout a model whose
// table is another's local table (LocalSuffix).
func checkTarget(t *models.Target, p *models.Project, s models.TargetSchemas) error {
	layout := t.Settings["layout"]
	for _, key := range []string{"layout", "sharding_key"} {
		// Whether cluster: is set, not its value: an unset variable in it
		// is the target's own error (Target.Err), reported when it is used.
		if t.Has(key) && !t.Has("cluster") {
			return t.Errorf(key, "%s applies to a cluster: set cluster: (a cluster of the servers' remote_servers)", key)
		}
	}
	if layout != "" && !knownLayout(layout) {
		return t.Errorf("layout", "unknown layout %q: want %s (every node holds every row) or %s (a Distributed table over a replicated table per shard)",
			layout, LayoutReplicated, LayoutSharded)
	}
	if layout != LayoutSharded {
		return nil
	}
	tables := map[string]*models.Model{}
	name := func(r models.Relation) string { return strings.ToLower(cmp.Or(r.Schema, s.Default) + "." + r.Name) }
	for _, m := range p.Models {
		tables[name(m.Relation)] = m
	}
	for _, m := range p.Models {
		local := m.Relation
		local.Name += LocalSuffix
		if other := tables[name(local)]; other != nil {
			return &models.Error{File: other.Path, Msg: fmt.Sprintf("model %s would be written to %s, which the sharded layout uses for the shards of %s; rename one of them",
				other.Name, name(local), m.Name)}
		}
	}
	return nil
}
