package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// stagedUnit is a unit whose stage passed verification and audits.
type stagedUnit struct {
	nodes    []*node
	stage    *adapters.Stage
	change   *adapters.SchemaChange
	records  []adapters.Record
	attempts int
	// unchanged: a refresh whose rows equal the table's; nothing was
	// published, and its records keep the last publication's time.
	unchanged bool
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
func (e *execution) execute(ctx context.Context, group []*node, attempt int, keep bool) (_ *stagedUnit, err error) {
	a := e.r.Adapter
	m := group[0].run.Model
	if group[0].run.Reason == plan.ReasonRemove {
		return e.remove(ctx, group, attempt, keep)
	}
	parts := make([]models.Partition, len(group))
	for i, n := range group {
		parts[i] = n.part()
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
	defer func() { err = adapters.AtModelLine(m, scope, parts, sql, err) }()
	// The fingerprint is of the model under the real table names, so
	// that publishing together does not make partitions stale.
	fp := m.Version(e.r.Scope).Fingerprint
	// The watermark is read before the stage: rows that arrive while it
	// computes move the watermark again, so the next run picks them up.
	marks, err := e.marks(ctx, m, parts)
	if err != nil {
		return nil, err
	}
	tag := adapters.Tag{RunID: e.opts.RunID, Model: m.Name, Partition: keyRange(group), Step: "stage"}
	started := e.r.Now()
	sp, err := e.schema(ctx, m, sql, scope != e.r.Scope, tag)
	if err != nil {
		return nil, err
	}
	refresh := group[0].run.Reason == plan.ReasonRefresh && !keep && sp.exists && sp.change.Empty()
	if dp, ok := a.(adapters.DirectPublisher); ok && !keep && !refresh && e.direct(m, sp, scope, len(parts)) {
		su, err := e.publishDirect(ctx, dp, group, parts, sql, tag, sp, func(rows []int64) []adapters.Record {
			return e.records(m, parts, fp, rows, attempt, started, marks, group[0].run.Horizon)
		})
		if !errors.Is(err, errStage) && !errors.Is(err, adapters.ErrOutsideWindow) {
			return su, err
		}
		// Staging says what is wrong with the rows, or counts them.
	}
	st, err := a.Stage(ctx, adapters.StageRequest{Model: m, Target: e.r.Scope.Relation(m), Query: sql,
		Window: adapters.ModelWindow(m, parts), Tag: tag, Change: sp.change, Rebuild: e.rebuilding(m), Columns: sp.columns})
	if err != nil {
		return nil, err
	}
	drop := func() {
		if derr := a.DropStage(context.WithoutCancel(ctx), st); derr != nil {
			e.observe(Event{Kind: EventWarning, Message: fmt.Sprintf("dropping staging table %s: %v", st.Relation, derr)})
		}
	}
	v, err := verify(ctx, a, st, parts, e.contentTypes(ctx, m, st, sp))
	if err != nil {
		drop()
		return nil, err
	}
	for i, p := range parts {
		if c, ok := v.content[p.Key]; ok {
			marks[i].Content = c.String()
		}
	}
	e.remember(m, parts, v.rows)
	// Audits read what the model's query read: under --publish together,
	// the overlays of this run's staged upstream rows.
	au := &auditor{a: a, scope: scope, plan: e.plan, previous: e.stagedCount}
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
	records := e.records(m, parts, fp, v.rows, attempt, started, marks, group[0].run.Horizon)
	su := &stagedUnit{nodes: group, stage: st, change: sp.change, records: records, attempts: attempt}
	if keep {
		return su, nil
	}
	if refresh {
		same, err := sameRows(ctx, a, st, v.columns)
		if err != nil {
			drop()
			return nil, err
		}
		if same {
			// Nothing new: the table keeps its rows and its publication
			// time, so what reads it stays done.
			drop()
			if prev := group[0].run.Record; prev != nil {
				for i := range records {
					records[i].PublishedAt = prev.PublishedAt
				}
			}
			if err := a.RecordPartitions(ctx, records); err != nil {
				return nil, err
			}
			su.unchanged = true
			return su, nil
		}
	}
	st.Tag.Step = "publish"
	err = a.Publish(ctx, []adapters.Swap{{Stage: st, Records: records, Change: sp.change}})
	drop()
	if !sp.change.Empty() || !sp.exists {
		e.columns.forget(st.Target) // changed, or created
	}
	if err != nil {
		return nil, err
	}
	return su, nil
}

// marks reads, before a unit of m is staged, what its records keep in
// their watermark column (plan.Marks): the value of m's watermark query
// and the fingerprints of the tracked sources m reads, for each partition.
// Read before the stage, rows that arrive while it computes change them
// again, so the next run picks those rows up.
func (e *execution) marks(ctx context.Context, m *models.Model, parts []models.Partition) ([]plan.Marks, error) {
	a := e.r.Adapter
	marks := make([]plan.Marks, len(parts))
	if m.Config.Watermark != nil {
		for i, p := range parts {
			v, err := plan.Watermark(ctx, a, e.r.Scope, m, p, e.opts.RunID)
			if err != nil {
				return nil, err
			}
			marks[i].Query = v
		}
	}
	prints, err := plan.SourceMarks(ctx, a, e.r.Project, e.r.Scope, m, parts, adapters.Tag{RunID: e.opts.RunID, Model: m.Name, Partition: models.KeyRange(parts[0].Key, parts[len(parts)-1].Key)})
	if err != nil {
		return nil, err
	}
	for i := range parts {
		if prints != nil {
			marks[i].Sources = prints[i]
		}
	}
	return marks, nil
}

// contentTypes returns, for a unit of m with content_hash:, the types its
// table holds its columns as, by lower-case name, for hashing the stage's
// rows as the table will hold them (verify): the table's, else its
// declared columns', else none (an empty map: it is created from the
// stage); a rebuild makes the table anew. It returns nil when the unit
// records no content: m has no content_hash:, or the unit changes the
// table's columns.
func (e *execution) contentTypes(ctx context.Context, m *models.Model, st *adapters.Stage, sp *schemaPlan) map[string]string {
	if !e.r.Project.RecordsContent(m) || !sp.change.Empty() && !e.rebuilding(m) {
		return nil
	}
	// A rebuilt table is made anew, from the declared columns or the stages.
	var cols []adapters.TableColumn
	var err error
	if !e.rebuilding(m) {
		cols, err = e.columns.get(ctx, e.r.Adapter, st.Target)
	}
	if err == nil && cols == nil {
		cols, err = adapters.DeclaredColumns(m, e.r.Adapter.Dialect())
	}
	if err != nil {
		return nil // recorded without content: verify says so
	}
	out := map[string]string{}
	for _, c := range cols {
		out[strings.ToLower(c.Name)] = c.Type
	}
	return out
}

// records makes the ledger records of a unit's partitions, published now
// with rows rows each. A whole-table or list partition's window ends at its
// horizon (Step.Horizon).
func (e *execution) records(m *models.Model, parts []models.Partition, fp string, rows []int64, attempt int, started time.Time, marks []plan.Marks, horizon time.Time) []adapters.Record {
	now := e.r.Now()
	records := make([]adapters.Record, len(parts))
	for i, p := range parts {
		end := p.End
		if m.Kind() != models.TimePartitioned {
			end = horizon
		}
		records[i] = adapters.Record{Model: m.Name, Partition: p.Key, State: adapters.RecordDone, Fingerprint: fp,
			Rows: rows[i], RunID: e.opts.RunID, Attempts: attempt, WindowStart: p.Start, WindowEnd: end,
			StartedAt: started, FinishedAt: now, PublishedAt: now, Watermark: marks[i].String()}
		if e.incomplete(m, p) {
			records[i].State = adapters.RecordPartial
		}
	}
	return records
}

// errStage sends a unit down the staged path.
var errStage = errors.New("the unit needs a stage")

// direct reports whether a unit of m of n partitions is published without
// a stage (adapters.DirectPublisher): nothing needs to read its rows before
// they are published (audits, their content hash, or models published
// together reading them),
// its table keeps its columns, and it reads neither its own table nor
// overlays. And it pays: a batch is written once instead of
// twice; a unit of one partition saves two statements and a commit, but
// its query then computes inside the publishing transaction, one at a time,
// so only when the run computes one unit at a time anyway (docs/benchmarks.md
// has the figures).
func (e *execution) direct(m *models.Model, sp *schemaPlan, scope *models.Scope, n int) bool {
	return len(m.Config.Audits) == 0 && !e.r.Project.RecordsContent(m) && sp.change.Empty() && !e.rebuilding(m) &&
		!m.Config.Self && scope == e.r.Scope && (n > 1 || e.opts.Concurrency == 1)
}

// publishDirect publishes a unit without a stage, writing its rows once.
// It returns an error wrapping errStage or adapters.ErrOutsideWindow when
// the unit must be staged instead (which then says exactly what is wrong).
func (e *execution) publishDirect(ctx context.Context, dp adapters.DirectPublisher, group []*node, parts []models.Partition,
	sql string, tag adapters.Tag, sp *schemaPlan, records func(rows []int64) []adapters.Record) (*stagedUnit, error) {
	m := group[0].run.Model
	w := adapters.ModelWindow(m, parts)
	if !w.Whole() {
		i := slices.IndexFunc(sp.columns, func(c adapters.TableColumn) bool { return strings.EqualFold(c.Name, w.Column) })
		if i < 0 {
			return nil, errStage
		}
		if err := checkWindowType(m, w, sp.columns[i].Type); err != nil {
			return nil, err
		}
	}
	var recs []adapters.Record
	var rows []int64
	tag.Step = "publish"
	req := adapters.StageRequest{Model: m, Target: e.r.Scope.Relation(m), Query: sql, Window: w, Tag: tag, Columns: sp.columns}
	if !sp.exists {
		// The query's columns make the table its stage would have made.
		req.Create = sp.columns
		defer e.columns.forget(req.Target)
	}
	err := dp.PublishQuery(ctx, req, len(parts),
		func(groups []adapters.RowGroup) ([]adapters.Record, error) {
			if len(parts) == 1 && len(groups) == 1 && groups[0].Lo == nil {
				// The rows of a unit of one partition (or a whole table),
				// all inside its window.
				rows = []int64{groups[0].Rows}
			} else {
				c, ok := plan.GroupCounts(m, parts, groups)
				if !ok {
					return nil, errStage
				}
				rows = make([]int64, len(parts))
				for i, p := range parts {
					rows[i] = c.Rows[p.Key]
				}
			}
			recs = records(rows)
			return recs, nil
		})
	if err != nil {
		return nil, err
	}
	e.remember(m, parts, rows)
	return &stagedUnit{nodes: group, records: recs, attempts: recs[0].Attempts}, nil
}

// remember keeps the rows this run computed for parts of m, which audits
// of later units compare with (stagedCount).
func (e *execution) remember(m *models.Model, parts []models.Partition, rows []int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts[m.Name] == nil {
		e.counts[m.Name] = map[string]int64{}
	}
	for i, p := range parts {
		e.counts[m.Name][p.Key] = rows[i]
	}
}

// sameRows reports whether the stage holds exactly the rows of its target
// table: the same count and the same order-independent hash of the rows'
// columns (models.Dialect.HashRows), each read in one scan.
func sameRows(ctx context.Context, a adapters.Adapter, st *adapters.Stage, columns []string) (bool, error) {
	d := a.Dialect()
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = d.QuoteIdent(c)
	}
	tag := st.Tag
	tag.Step = "compare"
	var got [2]string
	for i, rel := range []models.Relation{st.Relation, st.Target} {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT count(*), %s FROM %s", d.HashRows(cols), rel.Quote(d)), tag)
		if err != nil {
			return false, fmt.Errorf("comparing the refreshed rows of %s with its table: %w", st.Model.Name, err)
		}
		if len(res.Rows) != 1 || len(res.Rows[0]) != 2 {
			return false, fmt.Errorf("comparing the refreshed rows of %s with its table: %d rows", st.Model.Name, len(res.Rows))
		}
		got[i] = fmt.Sprint(adapters.Normalize(res.Rows[0][0]), " ", adapters.Normalize(res.Rows[0][1]))
	}
	return got[0] == got[1], nil
}

// remove deletes the rows of a unit of partitions outside their model's
// start..end (ReasonRemove): it publishes an empty stage over their
// windows, with records of them removed, as any swap. A table that does
// not exist has no rows to delete: only the records are written.
func (e *execution) remove(ctx context.Context, group []*node, attempt int, keep bool) (*stagedUnit, error) {
	a := e.r.Adapter
	m := group[0].run.Model
	parts := make([]models.Partition, len(group))
	for i, n := range group {
		parts[i] = n.part()
	}
	started := e.r.Now()
	records := e.records(m, parts, m.Version(e.r.Scope).Fingerprint, make([]int64, len(parts)), attempt, started, make([]plan.Marks, len(parts)), time.Time{})
	for i := range records {
		records[i].State = adapters.RecordRemoved
	}
	target := e.r.Scope.Relation(m)
	su := &stagedUnit{nodes: group, records: records, attempts: attempt}
	cols, err := e.columns.get(ctx, a, target)
	if err != nil {
		return nil, err
	}
	if cols == nil {
		return su, a.RecordPartitions(ctx, records)
	}
	tag := adapters.Tag{RunID: e.opts.RunID, Model: m.Name, Partition: keyRange(group), Step: "stage"}
	st, err := a.Stage(ctx, adapters.StageRequest{Model: m, Target: target, Query: "SELECT * FROM " + target.Quote(a.Dialect()) + " WHERE 1 = 0",
		Window: adapters.ModelWindow(m, parts), Tag: tag})
	if err != nil {
		return nil, err
	}
	su.stage = st
	if keep {
		return su, nil
	}
	st.Tag.Step = "publish"
	err = a.Publish(ctx, []adapters.Swap{{Stage: st, Records: records}})
	if derr := a.DropStage(context.WithoutCancel(ctx), st); derr != nil {
		e.observe(Event{Kind: EventWarning, Message: fmt.Sprintf("dropping staging table %s: %v", st.Relation, derr)})
	}
	return su, err
}
