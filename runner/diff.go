package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// ErrNoDiff is returned (wrapped) by Diff on an adapter that cannot
// compare rows in the warehouse.
var ErrNoDiff = errors.New("this warehouse cannot diff")

// DiffOptions tune Diff.
type DiffOptions struct {
	// Examples is how many rows of each kind each partition reports.
	Examples int
	// Sample, when positive, diffs at most that many partitions of each
	// model, spread evenly over its partitions in the plan, the first and
	// the last included (one: the last).
	Sample int
	// Observe, when set, receives each partition's diff as it is made.
	Observe func(PartitionDiff)
}

// PartitionDiff compares what a model's query computes for one partition
// now (the working tree's SQL, reading the published upstream tables)
// with what its table holds for that partition.
type PartitionDiff struct {
	Model     *models.Model
	Partition models.Partition
	Table     models.Relation
	// Missing: the table does not exist, so every row is new.
	Missing bool
	// Key are the columns rows are matched by (the model's unique_key);
	// empty when rows are compared whole.
	Key []string
	// Compared are the columns in both; Added and Dropped the query's
	// columns the table lacks, and the table's the query no longer
	// returns. Rows are compared on Compared alone.
	Compared       []string
	Added, Dropped []string
	Result         *adapters.DiffResult
}

// Diff compares, for every step of p (a plan of the partitions to compare,
// such as one in ModeAll), the rows the model's query returns with the
// rows of its table's window, in the warehouse, writing nothing. Removals
// are left out: there is no query to compare.
func (r *Runner) Diff(ctx context.Context, p *plan.Plan, opts DiffOptions) ([]PartitionDiff, error) {
	differ, ok := r.Adapter.(adapters.Differ)
	if !ok {
		return nil, fmt.Errorf("%w: the %s adapter has no diff", ErrNoDiff, r.Adapter.Info().Name)
	}
	var out []PartitionDiff
	tables := map[*models.Model][]adapters.TableColumn{}
	var steps []plan.Step // of one model
	diffAll := func() error {
		if len(steps) == 0 {
			return nil
		}
		parts := make([]models.Partition, len(steps))
		for i, st := range steps {
			parts[i] = st.Partition
		}
		diffs, err := r.diffParts(ctx, differ, steps[0].Model, parts, tables, opts)
		out = append(out, diffs...)
		steps = steps[:0]
		return err
	}
	for st := range p.AllSteps() {
		if st.Reason == plan.ReasonRemove {
			continue
		}
		if len(steps) > 0 && steps[0].Model != st.Model {
			if err := diffAll(); err != nil {
				return out, err
			}
		}
		steps = append(steps, st)
	}
	return out, diffAll()
}

// DiffPartitions is Diff for the given partitions of m (a sample of them
// with opts.Sample).
func (r *Runner) DiffPartitions(ctx context.Context, m *models.Model, parts []models.Partition, opts DiffOptions) ([]PartitionDiff, error) {
	differ, ok := r.Adapter.(adapters.Differ)
	if !ok {
		return nil, fmt.Errorf("%w: the %s adapter has no diff", ErrNoDiff, r.Adapter.Info().Name)
	}
	return r.diffParts(ctx, differ, m, parts, map[*models.Model][]adapters.TableColumn{}, opts)
}

// diffParts diffs a sample of parts, m's partitions in order.
func (r *Runner) diffParts(ctx context.Context, differ adapters.Differ, m *models.Model, parts []models.Partition,
	tables map[*models.Model][]adapters.TableColumn, opts DiffOptions) ([]PartitionDiff, error) {
	var out []PartitionDiff
	for _, part := range sample(parts, opts.Sample) {
		pd, err := r.diffPartition(ctx, differ, m, part, tables, opts)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", m.Name, part.Key, err)
		}
		if opts.Observe != nil {
			opts.Observe(pd)
		}
		out = append(out, pd)
	}
	return out, nil
}

// sample returns n of parts spread evenly, the first and the last
// included (one: the last), or all of them when n is 0 or covers them.
func sample(parts []models.Partition, n int) []models.Partition {
	if n <= 0 || n >= len(parts) {
		return parts
	}
	if n == 1 {
		return parts[len(parts)-1:]
	}
	out := make([]models.Partition, n)
	for i := range n {
		out[i] = parts[i*(len(parts)-1)/(n-1)]
	}
	return out
}

func (r *Runner) diffPartition(ctx context.Context, differ adapters.Differ, m *models.Model, part models.Partition,
	tables map[*models.Model][]adapters.TableColumn, opts DiffOptions) (PartitionDiff, error) {
	sql, err := m.Render(r.Scope, part)
	if err != nil {
		return PartitionDiff{Model: m, Partition: part, Table: r.Scope.Relation(m)}, err
	}
	pd, err := r.compare(ctx, differ, m, part, sql, tables, opts.Examples)
	return pd, adapters.AtModelLine(m, r.Scope, []models.Partition{part}, sql, err)
}

// compare diffs the rows query returns with the rows of part in m's
// table; tables caches the tables' columns.
func (r *Runner) compare(ctx context.Context, differ adapters.Differ, m *models.Model, part models.Partition, query string,
	tables map[*models.Model][]adapters.TableColumn, examples int) (PartitionDiff, error) {
	table := r.Scope.Relation(m)
	pd := PartitionDiff{Model: m, Partition: part, Table: table}
	tag := adapters.Tag{Model: m.Name, Partition: part.Key, Step: "diff"}
	newCols, err := r.Adapter.Describe(ctx, query, tag)
	if err != nil {
		return pd, err
	}
	oldCols, seen := tables[m]
	if !seen {
		if oldCols, err = r.Adapter.Columns(ctx, table); err != nil {
			return pd, err
		}
		tables[m] = oldCols
	}
	if oldCols == nil {
		// Nothing published: every row the query returns is new.
		pd.Missing = true
		for _, c := range newCols {
			pd.Added = append(pd.Added, c.Name)
		}
		res, err := r.Adapter.Query(ctx, fmt.Sprintf("SELECT count(*) FROM (\n%s\n) AS refill_query", query), tag)
		if err != nil {
			return pd, err
		}
		pd.Result = &adapters.DiffResult{OnlyNew: adapters.Int(res.Rows[0][0])}
		return pd, nil
	}
	var compared []adapters.TableColumn
	for _, c := range oldCols {
		if slices.ContainsFunc(newCols, func(n adapters.TableColumn) bool { return strings.EqualFold(n.Name, c.Name) }) {
			compared = append(compared, c)
			pd.Compared = append(pd.Compared, c.Name)
		} else {
			pd.Dropped = append(pd.Dropped, c.Name)
		}
	}
	for _, c := range newCols {
		if !slices.ContainsFunc(oldCols, func(o adapters.TableColumn) bool { return strings.EqualFold(o.Name, c.Name) }) {
			pd.Added = append(pd.Added, c.Name)
		}
	}
	for _, k := range m.Config.UniqueKey {
		if !slices.ContainsFunc(compared, func(c adapters.TableColumn) bool { return strings.EqualFold(c.Name, k) }) {
			return pd, fmt.Errorf("unique_key %s is not a column of both the table %s and the query", k, table)
		}
	}
	pd.Key = m.Config.UniqueKey
	res, err := differ.Diff(ctx, adapters.DiffRequest{Table: table, Window: adapters.ModelWindow(m, []models.Partition{part}), Query: query,
		Columns: compared, Key: pd.Key, Examples: examples, Tag: tag})
	if err != nil {
		return pd, err
	}
	pd.Result = res
	return pd, nil
}

// reviewStages diffs every staged partition of a together run against
// its table: the rows it would publish, as refill diff compares them.
func (e *execution) reviewStages(ctx context.Context) ([]PartitionDiff, error) {
	differ, ok := e.r.Adapter.(adapters.Differ)
	if !ok {
		return nil, fmt.Errorf("%w: the %s adapter has no diff", ErrNoDiff, e.r.Adapter.Info().Name)
	}
	staged := slices.Clone(e.staged)
	order := map[*models.Model]int{}
	for i, m := range e.plan.Models {
		order[m] = i
	}
	slices.SortStableFunc(staged, func(a, b *stagedUnit) int {
		if c := order[a.stage.Model] - order[b.stage.Model]; c != 0 {
			return c
		}
		return strings.Compare(a.nodes[0].result.Partition, b.nodes[0].result.Partition)
	})
	d := e.r.Adapter.Dialect()
	tables := map[*models.Model][]adapters.TableColumn{}
	var out []PartitionDiff
	for _, su := range staged {
		m := su.stage.Model
		for _, n := range su.nodes {
			query := "SELECT * FROM " + su.stage.Relation.Quote(d)
			if w := adapters.ModelWindow(m, []models.Partition{n.part()}); !w.Whole() && len(su.nodes) > 1 {
				query += " WHERE " + w.Predicate(d)
			}
			pd, err := e.r.compare(ctx, differ, m, n.part(), query, tables, e.opts.ReviewExamples)
			if err != nil {
				return out, fmt.Errorf("%s %s: %w", m.Name, n.result.Partition, err)
			}
			out = append(out, pd)
		}
	}
	return out, nil
}
