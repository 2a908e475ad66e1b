package runner

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

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
// publication that changes them forgets its table. It also caches what
// Describe said of the models' queries (describe).
type tableColumns struct {
	mu   sync.Mutex
	cols map[string][]adapters.TableColumn // nil value: the table does not exist
	seen map[string]bool
	// epoch counts the forgets: a query described before one may read a
	// table whose columns changed since.
	epoch     uint64
	described map[string]description
	literal   *regexp.Regexp // see literals
}

// literals matches the date and timestamp literals of dialect d, as
// d.Date and d.Timestamp render them (to the second).
func literals(d models.Dialect) *regexp.Regexp {
	sample := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	digit := regexp.MustCompile(`[0-9]`)
	var shapes []string
	for _, lit := range []string{d.Timestamp(sample), d.Date(sample)} {
		shapes = append(shapes, digit.ReplaceAllLiteralString(regexp.QuoteMeta(lit), `[0-9]`))
	}
	return regexp.MustCompile(strings.Join(shapes, "|"))
}

// description is what Describe said of a query, and when.
type description struct {
	epoch   uint64
	columns []adapters.TableColumn
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
	tc.epoch++
}

// describe returns the columns of query, a unit's of m, as Describe
// names them: with overlaid, or unless the adapter is a ShapeDescriber,
// from Describe; otherwise from tc.describe.
func (e *execution) describe(ctx context.Context, m *models.Model, query string, overlaid bool, tag adapters.Tag) ([]adapters.TableColumn, error) {
	a := e.r.Adapter
	if _, ok := a.(adapters.ShapeDescriber); !ok || overlaid {
		return a.Describe(ctx, query, describeTag(tag))
	}
	return e.columns.describe(ctx, a, m, query, tag)
}

// describe returns the columns of query, a unit's of m, as Describe names
// them. The queries of a model's units differ, in most models, only in
// date and timestamp literals (their windows', and days reckoned from
// them), whose values change no column's type (nor its name, but for a
// column left to be named after such a literal, whose rows the next
// partition's insert then refuses): the columns of a query that, but for
// those, is one described already are taken from then, unless a table's
// columns changed since (epoch). So a run of one partition at a time
// describes each model's query once rather than once per partition. A
// table altered outside refill during a run is not seen by the partitions
// after its query was described.
func (tc *tableColumns) describe(ctx context.Context, a adapters.Adapter, m *models.Model, query string, tag adapters.Tag) ([]adapters.TableColumn, error) {
	tc.mu.Lock()
	if tc.literal == nil {
		tc.literal = literals(a.Dialect())
	}
	key := m.Name + "\x00" + tc.literal.ReplaceAllLiteralString(query, "\x00")
	epoch := tc.epoch
	if c, ok := tc.described[key]; ok && c.epoch == epoch {
		tc.mu.Unlock()
		return c.columns, nil
	}
	tc.mu.Unlock()
	cols, err := a.Describe(ctx, query, describeTag(tag))
	if err != nil {
		return nil, err
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.described == nil {
		tc.described = map[string]description{}
	}
	tc.described[key] = description{epoch: epoch, columns: cols}
	return cols, nil
}

func describeTag(t adapters.Tag) adapters.Tag {
	t.Step = "describe"
	return t
}

// schema describes the unit's query and decides how its stage relates to
// the table.
//
// A query reading overlays (upstream stages not yet published, under
// --publish together, or its own table's) is described every time: its
// upstream's columns may change from stage to stage without a table's
// changing.
func (e *execution) schema(ctx context.Context, m *models.Model, query string, overlaid bool, tag adapters.Tag) (*schemaPlan, error) {
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
		cols, err := e.describe(ctx, m, query, overlaid, tag)
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
	cols, err := e.describe(ctx, m, query, overlaid, tag)
	if err != nil {
		return nil, err
	}
	change, err := plan.DecideSchema(m, rel.String(), cols, declared, target, a.Fit)
	if err != nil {
		return nil, err
	}
	return &schemaPlan{change: change, columns: cols, exists: target != nil}, nil
}
