package clickhouse

import (
	"context"
	"fmt"
	"net/url"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.CrossReader = (*Adapter)(nil)

// ReadFrom names other's relations as they are: the databases of one
// server read each other's tables. Targets on two servers cannot (refill
// never moves rows between servers). On one server, two targets hold
// different tables only for models whose names carry no database (they
// go to each target's schema:), and need ledgers of their own
// (ledger_schema:).
func (a *Adapter) ReadFrom(_ context.Context, other adapters.Adapter) (func(models.Relation) string, error) {
	o, ok := other.(*Adapter)
	if !ok {
		return nil, fmt.Errorf("a ClickHouse target reads only another ClickHouse target's tables, not %s's", other.Info().Name)
	}
	if mine, theirs := serverOf(a.cfg.DSN), serverOf(o.cfg.DSN); mine == "" || mine != theirs {
		return nil, fmt.Errorf("the two targets are on different servers (%s and %s): a query on one cannot read the other's tables", mine, theirs)
	}
	if a.cfg.LedgerSchema == o.cfg.LedgerSchema {
		return nil, fmt.Errorf("the two targets share the ledger database %s: give each its own ledger_schema", a.cfg.LedgerSchema)
	}
	return func(r models.Relation) string { return r.Quote(a.d) }, nil
}

// serverOf is the host and port of a DSN, without its credentials.
func serverOf(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return u.Host
}
