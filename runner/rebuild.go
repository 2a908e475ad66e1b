package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/refill/refill/adapters"
)

// rebuildUnit runs a full refresh: the unit holds every partition of a
// model. Each batch is staged, verified and audited as usual, nothing is
// published until all are, and then the adapter replaces the whole table
// with the stages' rows at once (adapters.Adapter.Rebuild). Any failure
// leaves the old table.
func (e *execution) rebuildUnit(ctx context.Context, u *unit) {
	m := u.model
	for _, n := range u.nodes {
		if why := failedDep(n); why != "" {
			e.skipAll(u, fmt.Sprintf("not rebuilt: %s", why))
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
	declared, err := declaredColumns(m, e.r.Adapter.Dialect())
	if err != nil {
		e.fail(ctx, u.nodes, err, 1, 0)
		return
	}
	now := e.r.now() // every partition is published at this one moment
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

// skipAll settles every node of u not yet final as skipped.
func (e *execution) skipAll(u *unit, why string) {
	for _, n := range u.nodes {
		if !n.done {
			e.settle(n, PartitionResult{Status: Skipped, Err: errors.New(why)})
		}
	}
}
