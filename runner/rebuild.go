package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// rebuildUnit runs a full refresh: the unit holds every partition of a
// model. Each batch is staged, verified and audited as usual, nothing is
// published until all are, and then the adapter replaces the whole table
// with the stages' rows at once (adapters.Adapter.Rebuild). Any failure
// leaves the old table.
func (e *execution) rebuildUnit(ctx context.Context, u *unit) {
	m := u.model
	for _, n := range u.nodes {
		// The unit's own partitions are staged in order below, each read
		// by the next of a model reading its own past: only other units
		// must have succeeded.
		if why := e.failedDepOutside(n, u); why != "" {
			e.skipAll(u, fmt.Sprintf("not rebuilt: %s", why))
			return
		}
	}
	if m.Config.Self {
		// The first partition reads an empty day before it, whatever the
		// old table holds there (rows from before a start: moved later):
		// the new table's, which has none.
		if err := e.emptySelf(ctx, m); err != nil {
			e.fail(ctx, u.nodes, err, 1, 0)
			return
		}
	}
	var staged []*stagedUnit
	defer func() {
		for _, su := range staged {
			e.r.Adapter.DropStage(context.WithoutCancel(ctx), su.stage)
		}
	}()
	size := e.batchSize(m)
	for _, group := range runs(u.nodes) {
		for len(group) > 0 {
			part := group[:min(len(group), size)]
			group = group[len(part):]
			if e.stopped() || ctx.Err() != nil {
				e.interrupted()
				e.skipAll(u, "not rebuilt: the run was interrupted before every partition was staged")
				return
			}
			su, err, attempts, dur := e.attempt(ctx, part, true)
			if err != nil {
				e.fail(ctx, part, err, attempts, dur)
				e.skipAll(u, fmt.Sprintf("not rebuilt: %s %s failed", m.Name, keyRange(part)))
				return
			}
			staged = append(staged, su)
			if m.Config.Self {
				// The next partition reads this one, as the new table will hold it.
				stages := make([]*adapters.Stage, len(staged))
				for i, s := range staged {
					stages[i] = s.stage
				}
				if err := e.overlaySelf(ctx, m, stages, true); err != nil {
					e.fail(ctx, u.nodes, err, 1, 0)
					return
				}
			}
		}
	}
	declared, err := adapters.DeclaredColumns(m, e.r.Adapter.Dialect())
	if err != nil {
		e.fail(ctx, u.nodes, err, 1, 0)
		return
	}
	now := e.r.Now() // every partition is published at this one moment
	var stages []*adapters.Stage
	var records []adapters.Record
	for _, su := range staged {
		su.stage.Tag.Step = "rebuild"
		stages = append(stages, su.stage)
		for i := range su.records {
			su.records[i].FinishedAt, su.records[i].PublishedAt = now, now
			records = append(records, su.records[i])
		}
	}
	target := e.r.Scope.Relation(m)
	for attempt := 1; ; attempt++ {
		if err = e.r.Adapter.(adapters.Rebuilder).Rebuild(ctx, target, stages, records, declared); err == nil || !adapters.Transient(e.r.Adapter, err) || attempt > e.opts.Retries {
			break
		}
	}
	e.columns.forget(target)
	if err != nil {
		e.fail(ctx, u.nodes, fmt.Errorf("rebuilding %s: %w", target, err), 1, 0)
		return
	}
	for _, su := range staged {
		for i, n := range su.nodes {
			e.settle(n, PartitionResult{Status: Succeeded, Rows: su.records[i].Rows, Attempts: su.attempts})
		}
	}
}

// failedDepOutside is failedDep for the dependencies of n outside unit u
// (all of them for a nil u).
func (g *dag) failedDepOutside(n *node, u *unit) string {
	for _, d := range g.depsOf(n) {
		if d.unit != u && d.result.Status != Succeeded {
			return fmt.Sprintf("upstream %s %s %s", d.result.Model, d.result.Partition, d.result.Status)
		}
	}
	return ""
}

// skipAll settles every node of u not yet final as skipped.
func (e *execution) skipAll(u *unit, why string) {
	for _, n := range u.nodes {
		if !n.done() {
			e.settle(n, PartitionResult{Status: Skipped, Err: errors.New(why)})
		}
	}
}

// emptySelf makes m, a model reading its own past, read its own table as
// empty: the table with no row (created from the declared columns when
// missing, so that the query binds).
func (e *execution) emptySelf(ctx context.Context, m *models.Model) error {
	rel := e.r.Scope.Relation(m)
	declared, err := adapters.DeclaredColumns(m, e.r.Adapter.Dialect())
	if err != nil {
		return err
	}
	if err := e.r.Adapter.CreateTable(ctx, rel, m, declared); err != nil {
		return fmt.Errorf("creating %s from its declared columns: %w", rel, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.this == nil {
		e.this = map[*models.Model]models.SQL{}
	}
	e.this[m] = models.SQL("(SELECT * FROM " + rel.Quote(e.r.Adapter.Dialect()) + " WHERE 1 = 0)")
	return nil
}
