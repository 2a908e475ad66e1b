package duckdb

import (
	"context"
	"fmt"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.CrossReader = (*Adapter)(nil)

// deferCatalog is the name other targets' database files are attached
// under, read-only, for deferral.
const deferCatalog = "refill_defer"

// ReadFrom attaches other's database file, read-only, and names its
// relations through it. Another DuckDB target is another file; an
// in-memory one cannot be read from here.
func (a *Adapter) ReadFrom(ctx context.Context, other adapters.Adapter) (func(models.Relation) string, error) {
	o, ok := other.(*Adapter)
	if !ok {
		return nil, fmt.Errorf("a DuckDB target reads only another DuckDB target's tables, not %s's", other.Info().Name)
	}
	if o.cfg.Path == "" || o.cfg.Path == ":memory:" {
		return nil, fmt.Errorf("the other target's database is in memory: there is nothing to read")
	}
	if o.cfg.Path == a.cfg.Path {
		return func(r models.Relation) string { return r.Quote(a.d) }, nil
	}
	attach := fmt.Sprintf("ATTACH IF NOT EXISTS %s AS %s (READ_ONLY)", a.d.QuoteString(o.cfg.Path), a.d.QuoteIdent(deferCatalog))
	if err := a.run(ctx, "open", attach); err != nil {
		return nil, fmt.Errorf("attaching %s: %w", o.cfg.Path, err)
	}
	return func(r models.Relation) string {
		r.Database = deferCatalog
		return r.Quote(a.d)
	}, nil
}
