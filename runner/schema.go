package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// schemaPlan is how a unit's stage relates to its table.
type schemaPlan struct {
	change *adapters.SchemaChange
	// columns are the query's, as Describe named them; exists says the
	// target table exists.
	columns []adapters.TableColumn
	exists  bool
}

// tableColumns caches the target tables' columns during a run; a
// publication that changes them forgets its table.
type tableColumns struct {
	mu   sync.Mutex
	cols map[string][]adapters.TableColumn // nil value: the table does not exist
	seen map[string]bool
}

func (tc *tableColumns) get(ctx context.Context, a adapters.Adapter, rel models.Relation) ([]adapters.TableColumn, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	k := rel.String()
	if tc.seen[k] {
		return tc.cols[k], nil
	}
	cols, err := a.Columns(ctx, rel)
	if err != nil {
		return nil, err
	}
	if tc.cols == nil {
		tc.cols, tc.seen = map[string][]adapters.TableColumn{}, map[string]bool{}
	}
	tc.cols[k], tc.seen[k] = cols, true
	return cols, nil
}

func (tc *tableColumns) forget(rel models.Relation) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.seen, rel.String())
}

func describeTag(t adapters.Tag) adapters.Tag {
	t.Step = "describe"
	return t
}

// schema describes the unit's query and decides how its stage relates to
// the table.
func (e *execution) schema(ctx context.Context, m *models.Model, query string, tag adapters.Tag) (*schemaPlan, error) {
	a := e.r.Adapter
	rel := e.r.Scope.Relation(m)
	declared, err := adapters.DeclaredColumns(m, a.Dialect())
	if err != nil {
		return nil, err
	}
	if e.rebuilding(m) {
		if m.Config.Self {
			// Its first partition reads the table as it stands (no rows
			// before start); it must exist.
			if err := a.CreateTable(ctx, rel, m, declared); err != nil {
				return nil, fmt.Errorf("creating %s from its declared columns: %w", rel, err)
			}
		}
		cols, err := a.Describe(ctx, query, describeTag(tag))
		if err != nil {
			return nil, err
		}
		change, err := plan.DecideSchema(m, rel.String(), cols, declared, nil, a.Fit) // a full refresh makes a new table
		return &schemaPlan{change: change}, err
	}
	target, err := e.columns.get(ctx, a, rel)
	if err != nil {
		return nil, err
	}
	if target == nil && declared != nil {
		// A table with declared columns is created from them, before its
		// first stage: a failed first attempt leaves the declared table,
		// empty, never the failing query's columns; and a model that reads
		// its own past reads it empty.
		if err := a.CreateTable(ctx, rel, m, declared); err != nil {
			return nil, fmt.Errorf("creating %s from its declared columns: %w", rel, err)
		}
		e.columns.forget(rel)
		if target, err = e.columns.get(ctx, a, rel); err != nil {
			return nil, err
		}
	}
	cols, err := a.Describe(ctx, query, describeTag(tag))
	if err != nil {
		return nil, err
	}
	change, err := plan.DecideSchema(m, rel.String(), cols, declared, target, a.Fit)
	if err != nil {
		return nil, err
	}
	return &schemaPlan{change: change, columns: cols, exists: target != nil}, nil
}
