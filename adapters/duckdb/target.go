package duckdb

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Engine describes DuckDB to a program that opens targets. A target's
// path: is its database file, relative to the project (defaultPath when
// unset).
func Engine() adapters.Engine {
	return adapters.Engine{
		Info:       Capabilities(),
		Title:      "DuckDB",
		Driver:     "github.com/duckdb/duckdb-go/v2",
		TargetKeys: []string{"path"},
		Dialect: func(t *models.Target) (models.Dialect, string) {
			return Dialect{}, cmp.Or(t.Schema, "main")
		},
		CheckTarget: checkTarget,
		Open: func(ctx context.Context, t *models.Target, o adapters.OpenOptions) (adapters.Adapter, error) {
			path := cmp.Or(t.Settings["path"], defaultPath)
			if !filepath.IsAbs(path) {
				path = filepath.Join(o.Dir, path)
			}
			cfg := Config{Path: path, ReadOnly: o.ReadOnly, Schema: t.Schema, LedgerSchema: t.LedgerSchema,
				StageSchema: t.StageSchema, Holder: o.Holder, Log: o.Log}
			if o.Configure != nil {
				o.Configure(&cfg)
			}
			return Open(ctx, cfg)
		},
		Parser: func() (adapters.Parser, error) { return newParser() },
		Sandbox: func(ctx context.Context) (adapters.Adapter, error) {
			return Open(ctx, Config{})
		},
		Library: engineVersion,
	}
}

// defaultPath is the database file of a target without path:, relative
// to the project.
const defaultPath = "warehouse.duckdb"

// checkTarget refuses a target t on which project p, whose schemas on t
// are s, cannot run: DuckDB names the database after its file, so a
// schema of the same name makes every two-part name ambiguous.
func checkTarget(t *models.Target, p *models.Project, s models.TargetSchemas) error {
	path := cmp.Or(t.Settings["path"], defaultPath)
	catalog := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for _, schema := range append([]string{s.Default, s.Ledger, s.Stage}, p.Schemas()...) {
		if schema != "" && strings.EqualFold(schema, catalog) {
			return t.Errorf("path", "DuckDB names the database in %s %q, like the schema %s, which makes names such as %s.x ambiguous; rename the file",
				filepath.Base(path), catalog, schema, schema)
		}
	}
	return nil
}
