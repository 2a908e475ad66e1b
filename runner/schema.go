package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Schema changes. Before a stage is made, refill compares the columns the
// model's query returns (or its declared columns) with the table's, and
// the model's on_schema_change policy decides: refuse (fail), add the new
// columns (append), add, drop and widen (sync), or rebuild the table
// (rebuild, planned as a full refresh). Nothing is ever cast silently: a
// query column whose values would not fit its column unchanged is refused
// under every policy, and so is a change of the partition column's type
// unless the table is rebuilt.

// SchemaError refuses a swap whose columns differ from the table's (or
// from the declared columns) in a way the model does not allow. The table
// is untouched.
type SchemaError struct {
	Model  string
	Table  string
	Policy models.SchemaPolicy
	// Declared is set when the query differs from the declared columns.
	Declared bool
	Diff     []string // one line per difference
	Hint     string
}

func (e *SchemaError) Error() string {
	what := fmt.Sprintf("the query's columns differ from table %s's (on_schema_change: %s)", e.Table, e.Policy)
	if e.Declared {
		what = "the query's columns differ from the declared columns"
	}
	msg := "schema change refused: " + what + ":\n  " + strings.Join(e.Diff, "\n  ")
	if e.Hint != "" {
		msg += "\n" + e.Hint
	}
	return msg + "\nnothing was swapped"
}

// schemaPlan is how a unit's stage relates to its table.
type schemaPlan struct {
	change *adapters.SchemaChange
	// columns are the query's, as Describe named them; exists says the
	// target table exists.
	columns []adapters.TableColumn
	exists  bool
}

// decideSchema compares the query's columns with the declared ones and
// the table's (nil when it does not exist) under m's policy.
func decideSchema(m *models.Model, table string, query, declared, target []adapters.TableColumn, fit func(from, to string) adapters.Fit) (*schemaPlan, error) {
	desired := query
	if declared != nil {
		var diff []string
		q := byName(query)
		for _, c := range declared {
			got, ok := q[strings.ToLower(c.Name)]
			switch {
			case !ok:
				diff = append(diff, fmt.Sprintf("- %s %s: declared, but the query does not return it", c.Name, c.Type))
			case fit(got.Type, c.Type) == adapters.FitLossy:
				diff = append(diff, fmt.Sprintf("~ %s: the query returns %s, declared %s: values would change; CAST it in the query", c.Name, got.Type, c.Type))
			}
		}
		d := byName(declared)
		for _, c := range query {
			if _, ok := d[strings.ToLower(c.Name)]; !ok {
				diff = append(diff, fmt.Sprintf("+ %s %s: the query returns it, but it is not declared", c.Name, c.Type))
			}
		}
		if diff != nil {
			return nil, &SchemaError{Model: m.Name, Table: table, Policy: m.Config.OnSchemaChange, Declared: true, Diff: diff,
				Hint: "change the query or the model's columns:"}
		}
		desired = declared
	}
	if target == nil {
		return &schemaPlan{}, nil
	}
	policy := m.Config.OnSchemaChange
	var change adapters.SchemaChange
	var diff []string
	refused := false
	rebuild := false
	t := byName(target)
	for _, c := range desired {
		old, ok := t[strings.ToLower(c.Name)]
		if !ok {
			diff = append(diff, fmt.Sprintf("+ %s %s: new", c.Name, c.Type))
			change.Add = append(change.Add, c)
			refused = refused || policy == models.SchemaFail
			continue
		}
		if fit(c.Type, old.Type) != adapters.FitLossy {
			continue // stored unchanged
		}
		partitionCol := strings.EqualFold(c.Name, m.Config.PartitionBy)
		widens := fit(old.Type, c.Type) != adapters.FitLossy
		switch {
		case partitionCol:
			diff = append(diff, fmt.Sprintf("~ %s: %s -> %s: the partition column's type changes", old.Name, old.Type, c.Type))
			rebuild = true
		case widens:
			diff = append(diff, fmt.Sprintf("~ %s: %s -> %s: wider", old.Name, old.Type, c.Type))
			change.Widen = append(change.Widen, adapters.TableColumn{Name: old.Name, Type: c.Type})
			refused = refused || policy != models.SchemaSync
		default:
			diff = append(diff, fmt.Sprintf("~ %s: %s -> %s: the values would change", old.Name, old.Type, c.Type))
			rebuild = true
		}
	}
	d := byName(desired)
	for _, c := range target {
		if _, ok := d[strings.ToLower(c.Name)]; ok {
			continue
		}
		if strings.EqualFold(c.Name, m.Config.PartitionBy) {
			diff = append(diff, fmt.Sprintf("- %s %s: the partition column is gone", c.Name, c.Type))
			rebuild = true
			continue
		}
		diff = append(diff, fmt.Sprintf("- %s %s: the query no longer returns it", c.Name, c.Type))
		change.Drop = append(change.Drop, c.Name)
		refused = refused || policy != models.SchemaSync
	}
	if diff == nil {
		return &schemaPlan{}, nil
	}
	if rebuild || refused || policy == models.SchemaRebuild {
		e := &SchemaError{Model: m.Name, Table: table, Policy: policy, Diff: diff}
		switch {
		case rebuild:
			e.Hint = fmt.Sprintf("only a rebuild keeps every partition consistent: refill run %s --full-refresh (or on_schema_change: rebuild)", m.Name)
		case policy == models.SchemaFail || policy == models.SchemaAppend:
			e.Hint = "set on_schema_change: append (add columns), sync (add, drop and widen) or rebuild in the model, or run it with --full-refresh"
		case policy == models.SchemaRebuild:
			e.Hint = fmt.Sprintf("on_schema_change: rebuild plans a full refresh of %s: plan the whole model (refill run %s)", m.Name, m.Name)
		}
		return nil, e
	}
	return &schemaPlan{change: &change}, nil
}

func byName(cols []adapters.TableColumn) map[string]adapters.TableColumn {
	out := make(map[string]adapters.TableColumn, len(cols))
	for _, c := range cols {
		out[strings.ToLower(c.Name)] = c
	}
	return out
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
		return decideSchema(m, rel.String(), cols, declared, nil, a.Fit) // a full refresh makes a new table
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
	sp, err := decideSchema(m, rel.String(), cols, declared, target, a.Fit)
	if err != nil {
		return nil, err
	}
	sp.columns, sp.exists = cols, target != nil
	return sp, nil
}

// schemaChanges compares, for each model with on_schema_change: rebuild
// whose table exists, the columns its query returns now with the table's,
// and says how they differ: such a model is rebuilt. (Other policies are
// applied unit by unit, as the run stages.)
func (r *Runner) schemaChanges(ctx context.Context, selected []*models.Model) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range selected {
		if m.Config.OnSchemaChange != models.SchemaRebuild {
			continue
		}
		rel := r.Scope.Relation(m)
		target, err := r.Adapter.Columns(ctx, rel)
		if err != nil || target == nil {
			if err != nil {
				return nil, fmt.Errorf("reading the columns of %s: %w", rel, err)
			}
			continue
		}
		sample := m.Partitions(m.Config.Start, m.Config.Start)
		if len(sample) == 0 {
			continue
		}
		query, err := m.Render(r.Scope, sample[0])
		if err != nil {
			return nil, err
		}
		cols, err := r.Adapter.Describe(ctx, query, adapters.Tag{Model: m.Name, Step: "describe"})
		if err != nil {
			// It does not bind now (a table it reads is missing, rebuilt
			// first by the run): its columns cannot be compared before the
			// run, and a rebuild, which the model allows, is right
			// whatever they are.
			out[m.Name] = "its columns cannot be compared before the run (" + firstLine(err.Error()) + ")"
			continue
		}
		declared, err := adapters.DeclaredColumns(m, r.Adapter.Dialect())
		if err != nil {
			return nil, err
		}
		if _, err := decideSchema(m, rel.String(), cols, declared, target, r.Adapter.Fit); err != nil {
			var se *SchemaError
			if errors.As(err, &se) && !se.Declared {
				out[m.Name] = strings.Join(se.Diff, "; ")
			}
		}
	}
	return out, nil
}
