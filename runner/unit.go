package runner

import (
	"context"
	"fmt"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// stagedUnit is a unit whose stage passed verification and audits.
type stagedUnit struct {
	nodes    []*node
	stage    *adapters.Stage
	change   *adapters.SchemaChange
	records  []adapters.Record
	attempts int
}

// incomplete reports whether partition p of m runs before its window is
// complete (allow_partial), by the clock of the run's plan.
func (e *execution) incomplete(m *models.Model, p models.Partition) bool {
	return m.Kind() == models.TimePartitioned && e.plan.Selection.Now.Before(p.End.Add(m.Config.Delay))
}

// stagedCount returns the rows this run staged for partition key of
// model, if it did.
func (e *execution) stagedCount(model, key string) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, ok := e.counts[model][key]
	return n, ok
}

// execute renders, stages, verifies and audits one unit and, unless keep,
// publishes it. With keep the stage is left for a later publication.
func (e *execution) execute(ctx context.Context, group []*node, attempt int, keep bool) (*stagedUnit, error) {
	a := e.r.Adapter
	m := group[0].step.Model
	parts := make([]models.Partition, len(group))
	for i, n := range group {
		parts[i] = n.step.Partition
	}
	scope := e.r.Scope
	if refs, this := e.overlayRefs(), e.thisOf(m); refs != nil || this != "" {
		s := *scope
		s.Refs, s.This = refs, this
		scope = &s
	}
	sql, err := m.Render(scope, parts...)
	if err != nil {
		return nil, err
	}
	// The fingerprint is of the model under the real table names, so
	// that publishing together does not make partitions stale.
	fp := m.Version(e.r.Scope).Fingerprint
	// The watermark is read before the stage: rows that arrive while it
	// computes move the watermark again, so the next run picks them up.
	marks := make([]string, len(parts))
	if m.Config.Watermark != nil {
		for i, p := range parts {
			if marks[i], err = watermark(ctx, a, e.r.Scope, m, p, e.opts.RunID); err != nil {
				return nil, err
			}
		}
	}
	tag := adapters.Tag{RunID: e.opts.RunID, Model: m.Name, Partition: keyRange(group), Step: "stage"}
	started := e.r.now()
	sp, err := e.schema(ctx, m, sql, tag)
	if err != nil {
		return nil, err
	}
	st, err := a.Stage(ctx, adapters.StageRequest{Model: m, Target: e.r.Scope.Relation(m), Query: sql,
		Window: adapters.ModelWindow(m, parts), Tag: tag, Change: sp.change, Rebuild: e.rebuilding(m)})
	if err != nil {
		return nil, err
	}
	drop := func() {
		if derr := a.DropStage(context.WithoutCancel(ctx), st); derr != nil {
			e.observe(Event{Kind: EventWarning, Message: fmt.Sprintf("dropping staging table %s: %v", st.Relation, derr)})
		}
	}
	v, err := verify(ctx, a, st, parts)
	if err != nil {
		drop()
		return nil, err
	}
	e.mu.Lock()
	if e.counts[m.Name] == nil {
		e.counts[m.Name] = map[string]int64{}
	}
	for i, p := range parts {
		e.counts[m.Name][p.Key] = v.rows[i]
	}
	e.mu.Unlock()
	// Audits read what the model's query read: under --publish together,
	// the overlays of this run's staged upstream rows.
	au := &auditor{a: a, scope: scope, ledger: e.ledger, previous: e.stagedCount}
	results, err := au.run(ctx, st, parts, v)
	if err != nil {
		drop()
		return nil, err
	}
	var blocking []AuditResult
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = p.Key
	}
	for i, res := range results {
		e.observe(Event{Kind: EventAudit, Model: m.Name, Partitions: keys, Audit: &results[i]})
		switch {
		case res.Passed:
		case res.Severity == models.SeverityWarn:
			msg := fmt.Sprintf("%s %s: audit %s: %s", m.Name, keyRange(group), res.Name, res.Message)
			e.mu.Lock()
			e.summary.Warnings = append(e.summary.Warnings, msg)
			e.mu.Unlock()
			e.observe(Event{Kind: EventWarning, Model: m.Name, Message: msg})
		default:
			blocking = append(blocking, res)
		}
	}
	if len(blocking) > 0 {
		drop()
		return nil, &AuditError{Failures: blocking}
	}
	now := e.r.now()
	records := make([]adapters.Record, len(parts))
	for i, p := range parts {
		records[i] = adapters.Record{Model: m.Name, Partition: p.Key, State: adapters.StateDone, Fingerprint: fp,
			Rows: v.rows[i], RunID: e.opts.RunID, Attempts: attempt, WindowStart: p.Start, WindowEnd: p.End,
			StartedAt: started, FinishedAt: now, PublishedAt: now, Watermark: marks[i]}
		if e.incomplete(m, p) {
			records[i].State = adapters.StatePartial
		}
	}
	su := &stagedUnit{nodes: group, stage: st, change: sp.change, records: records, attempts: attempt}
	if keep {
		return su, nil
	}
	st.Tag.Step = "publish"
	err = a.Publish(ctx, []adapters.Swap{{Stage: st, Records: records, Change: sp.change}})
	drop()
	if !sp.change.Empty() {
		e.columns.forget(st.Target)
	}
	if err != nil {
		return nil, err
	}
	return su, nil
}
