package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// DecideSchema compares the query's columns with the declared ones and
// the table's (nil when it does not exist) under m's policy: it returns
// the change of the table's columns the stage is published with (nil for
// none), or a *SchemaError refusing it.
func DecideSchema(m *models.Model, table string, query, declared, target []adapters.TableColumn, fit func(from, to string) adapters.Fit) (*adapters.SchemaChange, error) {
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
		return nil, nil
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
		return nil, nil
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
	return &change, nil
}

func byName(cols []adapters.TableColumn) map[string]adapters.TableColumn {
	out := make(map[string]adapters.TableColumn, len(cols))
	for _, c := range cols {
		out[strings.ToLower(c.Name)] = c
	}
	return out
}

// schemaChanges compares, for each model with on_schema_change: rebuild
// whose table exists, the columns its query returns now with the table's,
// and says how they differ: such a model is rebuilt. (Other policies are
// applied unit by unit, as the run stages.)
func (r *Reader) schemaChanges(ctx context.Context, selected []*models.Model) (map[string]string, error) {
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
		if _, err := DecideSchema(m, rel.String(), cols, declared, target, r.Adapter.Fit); err != nil {
			var se *SchemaError
			if errors.As(err, &se) && !se.Declared {
				out[m.Name] = strings.Join(se.Diff, "; ")
			}
		}
	}
	return out, nil
}
