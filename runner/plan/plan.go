package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Step is one partition a plan runs.
type Step struct {
	Model     *models.Model
	Partition models.Partition
	Reason    Reason
	Detail    string // a sentence on the reason, for people
	// Cause is the reason's explanation shared by many steps, for grouping
	// them ("reads staging.orders, which was never built"); "" when the
	// detail is its own.
	Cause  string
	Record *adapters.Record // the ledger's record; nil when missing
	// BlockedBy, for a blocked step, is the upstream partition it waits
	// for first.
	BlockedBy *Blocker
	// Conditional: the step is done and planned only because it reads
	// partitions this run refreshes (ReasonRefresh), or that are
	// conditional themselves. It runs only if one of them changes; when
	// none does, it stays as it is, reported unchanged.
	Conditional bool
	// Horizon, for a partition of a whole-table or list model that reads
	// time-partitioned models, is the end of the upstream time it reads:
	// every complete partition of those models starting before it is
	// built, or planned before it (see planner.horizon). Zero otherwise.
	Horizon time.Time
}

// Blocker is an upstream partition a blocked step waits for, and why it
// cannot be read: ReasonMissing (never built), ReasonFailed, ReasonPending,
// ReasonDrift, or ReasonBlocked (blocked itself, in the same plan).
type Blocker struct {
	Model, Partition string
	State            Reason
}

// Plan is what a run would do: the selected models and, in an order that
// respects dependencies, every partition that needs to run.
type Plan struct {
	Selection Selection
	Models    []*models.Model // selected, in graph order
	Steps     []Step
	// Blocked are partitions that need to run but read upstream partitions
	// that are missing, failed or blocked themselves, and that this plan
	// does not build: running them would compute from data that is not
	// there. Their Reason is ReasonBlocked and Detail names the upstream
	// partition. Selection.AllowMissingUpstream runs them instead.
	Blocked []Step
	Notes   []string // what the plan left out, and why
	// Rebuild holds the models whose whole table the run rebuilds (a full
	// refresh: --full-refresh, or on_schema_change: rebuild): every one
	// of their partitions is staged, and the table is replaced at once.
	Rebuild map[*models.Model]bool

	ledger *ledger // the records the plan was made from, for Run's audits
}

// Facts are what the warehouse said when a plan was made: the ledger, the
// watermarks of lookback partitions, and what the target tables hold.
type Facts struct {
	Records []adapters.Record
	// Watermarks are the current values of the selected models' watermark
	// queries for their lookback partitions. Without them, lookback
	// partitions of models with a watermark rerun unconditionally.
	Watermarks Watermarks
	// Tables says, by model name, what the warehouse holds of the model's
	// table; models without an entry were not checked.
	Tables map[string]*TableFacts
	// Versions are the ledger's versions of the selected models, for the
	// notes on forward-only changes.
	Versions []adapters.Version
	// SchemaChanged says, by model name, how the columns of a model with
	// on_schema_change: rebuild differ from its table's: it is rebuilt.
	SchemaChanged map[string]string
	// Proven, when set, holds per time-partitioned model the instant
	// before which the ledger's summaries proved every partition done and
	// up to date (see planProven): the plan looks at none of them, and
	// Records holds only the records the partitions from there on need. A
	// model whose summaries prove none built has no proven bound.
	Proven map[string]time.Time
}

// TableFacts is what the warehouse holds of one model's table.
type TableFacts struct {
	Relation models.Relation
	Exists   bool
	// Rows, when not nil, are the table's rows per partition key: counted
	// because the table's total differed from the ledger's. A key without
	// an entry holds no rows.
	Rows map[string]int64
}

// NewPlan computes the plan for sel from the project's models and the
// ledger's records. It does no I/O. Lookback partitions of models with a
// watermark query rerun unconditionally, as no watermark is known, and
// the tables are taken to hold what the ledger says.
func NewPlan(p *models.Project, scope *models.Scope, records []adapters.Record, sel Selection) (*Plan, error) {
	return NewPlanFacts(p, scope, Facts{Records: records}, sel)
}

// NewPlanFacts computes the plan for sel from the project's models and the
// facts the warehouse gave (see Runner.Plan). It does no I/O.
func NewPlanFacts(p *models.Project, scope *models.Scope, facts Facts, sel Selection) (*Plan, error) {
	if err := sel.validate(); err != nil {
		return nil, err
	}
	chosen, err := p.SelectDetail(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if len(chosen.Models) == 0 {
		return nil, usageErrorf("the selection matches no model")
	}
	// A var another model lacks does not stop this selection; one of its
	// own does.
	if err := p.Unset(chosen.Models...); err != nil {
		return nil, err
	}
	pl := &planner{
		project: p, sel: sel, facts: facts, chosen: chosen, rangeEnd: sel.rangeEnd(),
		a:        &assessor{scope: scope, ledger: indexLedger(facts.Records), tables: facts.Tables, now: sel.Now},
		selected: map[*models.Model]bool{},
		steps:    map[*models.Model][]Step{},
		planned:  map[*models.Model]map[string]*Step{},
	}
	for _, m := range chosen.Models {
		pl.selected[m] = true
	}
	plan := &Plan{Selection: sel, Models: chosen.Models, ledger: pl.a.ledger, Rebuild: map[*models.Model]bool{}}
	pl.rebuild = plan.Rebuild
	if err := pl.rebuilds(); err != nil {
		return nil, err
	}
	if err := pl.candidates(); err != nil {
		return nil, err
	}
	if len(sel.Partitions) > 0 && !pl.matched {
		return nil, usageErrorf("--partitions %v matches no partition of the selected models", sel.Partitions)
	}
	for _, m := range chosen.Models {
		if err := pl.decide(m); err != nil {
			return nil, err
		}
		pl.removals(m)
		if err := pl.propagate(m); err != nil {
			return nil, err
		}
		pl.block(m)
		if pl.sel.Since.IsZero() {
			pl.cands[m] = nil // its steps hold what is left of them (resumedRewrites reads them when resuming)
		}
	}
	n := 0
	for _, m := range chosen.Models {
		n += len(pl.steps[m])
	}
	plan.Steps = make([]Step, 0, n)
	for _, m := range chosen.Models {
		for _, st := range pl.steps[m] {
			if st.Reason == ReasonBlocked {
				plan.Blocked = append(plan.Blocked, st)
			} else {
				plan.Steps = append(plan.Steps, st)
			}
		}
		pl.steps[m], pl.planned[m] = nil, nil // let them go as the plan takes shape
	}
	plan.Notes = append(pl.notes, pl.waitingNotes()...)
	plan.Notes = append(plan.Notes, acceptedNotes(chosen.Models, scope, facts.Versions, pl.a.ledger)...)
	return plan, nil
}

// planner holds the state of one NewPlanFacts.
type planner struct {
	project  *models.Project
	sel      Selection
	facts    Facts
	chosen   *models.Selected
	a        *assessor
	selected map[*models.Model]bool
	// cands are each selected model's candidate partitions: those in range
	// and, for models chosen by a leading +, those the candidates of the
	// selected models reading them read.
	cands   map[*models.Model][]models.Partition
	matched bool // some candidate matched --partitions
	// rangeEnd is the end of the selection's range (Selection.rangeEnd).
	rangeEnd time.Time
	steps    map[*models.Model][]Step
	planned  map[*models.Model]map[string]*Step // by partition key
	notes    []string
	// waiting counts, per model, the partitions left out because they read
	// upstream partitions that are not complete yet, or not built past the
	// range's end.
	waiting map[waitKey]*waitNote
	// rebuild holds the models whose whole table is rebuilt, and why.
	rebuild    map[*models.Model]bool
	rebuildWhy map[*models.Model]string
	last       map[*models.Model]lastComplete // lastComplete's cache
	// horizons are the horizons of the whole-table and list models block
	// has seen (see horizon).
	horizons map[*models.Model]time.Time
}

type lastComplete struct {
	last     time.Time
	complete bool
}

// lastComplete is m.LastComplete at the plan's clock.
func (pl *planner) lastComplete(m *models.Model) (time.Time, bool) {
	lc, ok := pl.last[m]
	if !ok {
		if pl.last == nil {
			pl.last = map[*models.Model]lastComplete{}
		}
		lc.last, lc.complete = m.LastComplete(pl.sel.Now)
		pl.last[m] = lc
	}
	return lc.last, lc.complete
}

// rebuilds finds the models whose tables are rebuilt: with --full-refresh,
// every selected model; and models with on_schema_change: rebuild whose
// columns changed.
func (pl *planner) rebuilds() error {
	pl.rebuildWhy = map[*models.Model]string{}
	for _, m := range pl.chosen.Models {
		why := ""
		switch {
		case pl.sel.FullRefresh && pl.chosen.Direct[m]:
			why = "--full-refresh"
		case pl.facts.SchemaChanged[m.Name] != "" && pl.sel.Mode != ModeMissing && pl.sel.Mode != ModeFailed:
			why = "on_schema_change: rebuild: " + pl.facts.SchemaChanged[m.Name]
		default:
			continue
		}
		if m.Config.NoFullRefresh {
			return usageErrorf("%s sets full_refresh: false: its table is never rebuilt (%s); change the model, or drop that setting", m.Name, why)
		}
		pl.rebuild[m], pl.rebuildWhy[m] = true, why
	}
	if pl.sel.FullRefresh && (pl.sel.From != "" || pl.sel.To != "" || len(pl.sel.Partitions) > 0) {
		return usageErrorf("--full-refresh rebuilds whole tables; it cannot be combined with --from, --to or --partitions")
	}
	return nil
}

// waitNote counts a model's partitions left out because they read an
// upstream partition that is not complete yet (complete is when it will
// be) or, past is set, that lies after the end of the run's range.
type waitNote struct {
	n        int
	up       *models.Model
	upKey    string
	complete time.Time
	past     time.Time
}

// candidates computes every selected model's candidate partitions: the
// range of each, and for models chosen only to feed others (+model), the
// partitions the models reading them read, transitively. Models are
// visited downstream first, so a model's readers are done before it.
func (pl *planner) candidates() error {
	pl.cands = map[*models.Model][]models.Partition{}
	order := pl.chosen.Models
	for i := len(order) - 1; i >= 0; i-- {
		m := order[i]
		byKey := map[string]models.Partition{}
		var direct []models.Partition // the range alone, in order, when nothing else adds to it
		if pl.rebuild[m] {
			// A rebuilt table holds every partition the model has.
			whole := pl.sel
			whole.From, whole.To, whole.Partitions = "", "", nil
			parts, notes, _, err := whole.rangeOf(m, time.Time{})
			if err != nil {
				return err
			}
			pl.notes = append(pl.notes, notes...)
			pl.matched = true
			for _, p := range parts {
				byKey[p.Key] = p
			}
		} else if pl.chosen.Direct[m] {
			parts, notes, named, err := pl.sel.rangeOf(m, pl.facts.Proven[m.Name])
			if err != nil {
				return err
			}
			pl.matched = pl.matched || named
			if len(pl.sel.Partitions) > 0 && !named && m.Kind() != models.TimePartitioned {
				parts, notes = pl.unnamed(m)
				// Named on the command line, it is what --partitions
				// matched; a whole table matched otherwise is not.
				pl.matched = pl.matched || pl.chosen.Named[m] && len(parts) > 0
			}
			pl.notes = append(pl.notes, notes...)
			if !pl.chosen.Upstream[m] {
				direct = parts
			} else {
				for _, p := range parts {
					byKey[p.Key] = p
				}
			}
		}
		if pl.chosen.Upstream[m] {
			last, complete := m.LastComplete(pl.sel.Now)
			for _, down := range pl.project.Graph.Downstream(m) {
				if !pl.selected[down] || down == m {
					continue
				}
				through := last
				if down.Kind() != models.TimePartitioned && m.Kind() == models.TimePartitioned {
					// A whole-table or list model reads m through the
					// horizon of the run's range.
					if h := pl.rangeHorizon(down); h.Add(-time.Nanosecond).Before(through) {
						through = h.Add(-time.Nanosecond)
					}
				}
				for _, p := range pl.cands[down] {
					if m.Kind() == models.TimePartitioned && !complete {
						break
					}
					for _, q := range models.ReadPartitions(down, p, m, through) {
						if m.Kind() != models.TimePartitioned || !q.Start.After(last) {
							byKey[q.Key] = q
						}
					}
				}
			}
		}
		proven := pl.facts.Proven[m.Name]
		parts := direct
		if parts == nil {
			parts = make([]models.Partition, 0, len(byKey))
			for _, p := range byKey {
				parts = append(parts, p)
			}
			sortPartitions(m, parts)
		}
		if m.Kind() == models.TimePartitioned && !proven.IsZero() {
			parts = slices.DeleteFunc(parts, func(p models.Partition) bool { return p.Start.Before(proven) })
		}
		if len(parts) > 0 && pl.chosen.Upstream[m] {
			pl.matched = true
		}
		pl.cands[m] = parts
	}
	return nil
}

// unnamed returns the candidates of m, a whole-table or list model none
// of whose partitions --partitions names. A whole table covers every
// period the keys name, so it is a candidate; so are all the values of a
// list model named on the command line. Any other list model is left
// out, with a note saying so.
func (pl *planner) unnamed(m *models.Model) ([]models.Partition, []string) {
	if m.Kind() == models.WholeTable || pl.chosen.Named[m] {
		return m.Partitions(time.Time{}, time.Time{}), nil
	}
	return nil, []string{fmt.Sprintf("%s: left out: --partitions names none of its values (%s); name them, or the model, to run it",
		m.Name, strings.Join(valueKeys(m), ", "))}
}

// valueKeys returns the keys of a list model's values.
func valueKeys(m *models.Model) []string {
	var out []string
	for _, p := range m.Partitions(time.Time{}, time.Time{}) {
		out = append(out, p.Key)
	}
	return out
}

// decide assesses m's candidates and keeps those that need to run.
func (pl *planner) decide(m *models.Model) error {
	if pl.rebuild[m] {
		if !pl.sel.Since.IsZero() && pl.rebuiltSince(m) {
			return nil // the run being resumed rebuilt it
		}
		for _, part := range pl.cands[m] {
			pl.add(Step{Model: m, Partition: part, Reason: ReasonRebuild, Detail: pl.rebuildWhy[m], Cause: pl.rebuildWhy[m],
				Record: pl.a.ledger.record(m.Name, part.Key)})
		}
		return nil
	}
	lookback := lookbackKeys(m, pl.sel)
	if pl.steps[m] == nil {
		pl.steps[m] = make([]Step, 0, len(pl.cands[m]))
	}
	for _, part := range pl.cands[m] {
		as, err := pl.a.assess(m, part)
		if err != nil {
			return err
		}
		reason, detail := decide(pl.sel, as)
		if reason == "" && as.state == StateDone && !resumedDone(pl.sel, as) && pl.sel.Mode == ModeDefault {
			switch {
			case lookback[part.Key]:
				reason, detail = lookbackReason(m, part, as.record, pl.facts.Watermarks)
			case pl.sel.Scheduled() && m.Kind() != models.TimePartitioned:
				reason, detail = refreshReason(m, part, as.record, pl.facts.Watermarks, pl.sel.Now)
			}
		}
		if reason != "" {
			pl.add(Step{Model: m, Partition: part, Reason: reason, Detail: detail, Record: as.record})
		}
	}
	return nil
}

// removals plans the deletion of m's built partitions that lie outside
// its start..end: its start: moved later, or its end: earlier. A rebuilt
// table holds none of them anyway, and modes missing and failed take
// only what they say.
func (pl *planner) removals(m *models.Model) {
	mr := pl.a.ledger.byModel[m.Name]
	if mr == nil || m.Kind() != models.TimePartitioned || pl.rebuild[m] || !pl.chosen.Direct[m] ||
		pl.sel.Mode == ModeMissing || pl.sel.Mode == ModeFailed {
		return
	}
	for _, r := range mr.timed {
		if r.State == adapters.RecordRemoved || !outside(m, r) {
			continue
		}
		pl.add(Step{Model: m, Partition: models.Partition{Key: r.Partition, Start: r.WindowStart, End: r.WindowEnd}, Reason: ReasonRemove,
			Record: r, Detail: outsideDetail(m), Cause: outsideDetail(m)})
	}
}

// outside reports whether record r of time-partitioned model m lies
// outside the model's start..end.
func outside(m *models.Model, r *adapters.Record) bool {
	return r.WindowStart.Before(m.Config.Start) || !m.Config.End.IsZero() && !r.WindowStart.Before(m.Config.End)
}

// outsideDetail says why m's partitions outside its range are removed.
func outsideDetail(m *models.Model) string {
	bounds := "start: " + m.PartitionAt(m.Config.Start).Key
	if !m.Config.End.IsZero() {
		bounds += ", end: " + m.PartitionAt(m.Config.End.Add(-time.Nanosecond)).Key
	}
	return fmt.Sprintf("outside the model's range (%s): its rows are deleted", bounds)
}

// rebuiltSince reports whether every candidate of m was published since
// the resumed run started.
func (pl *planner) rebuiltSince(m *models.Model) bool {
	for _, p := range pl.cands[m] {
		r := pl.a.ledger.record(m.Name, p.Key)
		if r == nil || !r.State.Published() || r.FinishedAt.Before(pl.sel.Since) {
			return false
		}
	}
	return true
}

func (pl *planner) add(st Step) {
	pl.steps[st.Model] = append(pl.steps[st.Model], st)
}

// index sorts m's steps after they changed and, for a model not
// partitioned by time, rebuilds its key index (plannedStep finds a time
// partition's step by its start).
func (pl *planner) index(m *models.Model) {
	sortSteps(pl.steps[m])
	if m.Kind() == models.TimePartitioned {
		return
	}
	idx := make(map[string]*Step, len(pl.steps[m]))
	for i := range pl.steps[m] {
		idx[pl.steps[m][i].Partition.Key] = &pl.steps[m][i]
	}
	pl.planned[m] = idx
}

// propagate plans the built partitions of m that read upstream partitions
// this run rewrites, so related tables agree afterwards. A resumed run
// counts what its earlier attempts rewrote as rewritten too. Modes missing
// and failed take only what they say.
func (pl *planner) propagate(m *models.Model) error {
	defer pl.index(m)
	if pl.sel.Mode == ModeMissing || pl.sel.Mode == ModeFailed {
		return nil
	}
	have := map[string]int{} // partition key -> index in pl.steps[m]
	for i, st := range pl.steps[m] {
		have[st.Partition.Key] = i
	}
	for _, up := range m.Upstream {
		if !pl.selected[up] {
			continue
		}
		// What reads a refreshed partition runs only if the refresh
		// changes its rows (Step.Conditional).
		var definite, conditional []models.Partition
		for _, st := range pl.steps[up] {
			switch {
			case st.Reason == ReasonBlocked:
			case st.Reason == ReasonRefresh || st.Conditional:
				conditional = append(conditional, st.Partition)
			default:
				definite = append(definite, st.Partition)
			}
		}
		definite = append(definite, pl.resumedRewrites(up)...)
		for _, g := range []struct {
			parts []models.Partition
			cond  bool
		}{{definite, false}, {conditional, true}} {
			why := fmt.Sprintf("reads %s, which this run rewrites", up.Name)
			if g.cond {
				why = fmt.Sprintf("reads %s, which this run refreshes (runs only if its rows change)", up.Name)
			}
			for _, part := range dependentPartitions(m, up, g.parts, pl.a.ledger) {
				if i, ok := have[part.Key]; ok {
					// Planned already: by a policy (a refresh, lookback),
					// or only if a refresh changes something, it now runs
					// because what it reads is rewritten.
					if st := &pl.steps[m][i]; !g.cond && (st.Conditional || policy(st.Reason)) {
						st.Reason, st.Conditional, st.Detail, st.Cause = ReasonUpstream, false, why, why
					}
					continue
				}
				as, err := pl.a.assess(m, part)
				if err != nil {
					return err
				}
				if resumedDone(pl.sel, as) {
					continue
				}
				pl.add(Step{Model: m, Partition: part, Reason: ReasonUpstream, Record: as.record, Detail: why, Cause: why, Conditional: g.cond})
				have[part.Key] = len(pl.steps[m]) - 1
			}
		}
	}
	if m.Config.Self {
		return pl.propagateSelf(m, have)
	}
	return nil
}

// policy reports whether r plans a partition that is up to date, by a rule
// of the model's (lookback, watermark, refresh), rather than because it is
// not.
func policy(r Reason) bool {
	return r == ReasonRefresh || r == ReasonLookback || r == ReasonWatermark
}

// propagateSelf plans, for a model that reads its own past, every built
// partition after the first one this run rewrites: each was computed from
// the one before it, so the chain is recomputed in order. When that first
// one runs only if a refresh changes something, so does the chain.
func (pl *planner) propagateSelf(m *models.Model, have map[string]int) error {
	var first *models.Partition
	cond := false
	for _, st := range pl.steps[m] {
		if st.Reason != ReasonBlocked && (first == nil || st.Partition.Start.Before(first.Start)) {
			p := st.Partition
			first, cond = &p, st.Conditional || st.Reason == ReasonRefresh
		}
	}
	for _, p := range pl.resumedRewrites(m) {
		if first == nil || p.Start.Before(first.Start) {
			p := p
			first, cond = &p, false
		}
	}
	mr := pl.a.ledger.byModel[m.Name]
	if first == nil || mr == nil {
		return nil
	}
	for _, r := range mr.timed {
		if _, ok := have[r.Partition]; !r.WindowStart.After(first.Start) || ok || r.State == adapters.RecordRemoved || outside(m, r) {
			continue
		}
		part, err := m.Partition(r.Partition)
		if err != nil {
			continue
		}
		as, err := pl.a.assess(m, part)
		if err != nil {
			return err
		}
		if resumedDone(pl.sel, as) {
			continue
		}
		why := fmt.Sprintf("reads its own partition before it, which this run rewrites (from %s on)", first.Key)
		pl.add(Step{Model: m, Partition: part, Reason: ReasonUpstream, Record: as.record, Detail: why, Cause: why, Conditional: cond})
		have[part.Key] = len(pl.steps[m]) - 1
	}
	return nil
}

// resumedRewrites returns the partitions of up that the run being resumed
// (or the runs it resumed) published: the resumed run rewrote them, so
// what reads them is planned as the original run planned it.
func (pl *planner) resumedRewrites(up *models.Model) []models.Partition {
	if pl.sel.Since.IsZero() {
		return nil
	}
	mr := pl.a.ledger.byModel[up.Name]
	if mr == nil {
		return nil
	}
	inCands := map[string]bool{}
	for _, p := range pl.cands[up] {
		inCands[p.Key] = true
	}
	var out []models.Partition
	for key, r := range mr.byKey {
		if !inCands[key] || !r.State.Published() || r.FinishedAt.Before(pl.sel.Since) {
			continue
		}
		if p, err := up.Partition(key); err == nil {
			out = append(out, p)
		}
	}
	sortPartitions(up, out)
	return out
}

// block marks m's steps that read upstream partitions which are neither
// built nor planned (missing, failed, half-published, or blocked in this
// plan) as blocked, and drops those that read upstream partitions not
// complete yet, noting them.
func (pl *planner) block(m *models.Model) {
	steps := pl.steps[m]
	kept := make([]Step, 0, len(steps))
	horizon := pl.horizon(m)
	if !horizon.IsZero() {
		if pl.horizons == nil {
			pl.horizons = map[*models.Model]time.Time{}
		}
		pl.horizons[m] = horizon
	}
	// For a model that reads its own past: the outcome of its steps so far.
	own := map[string]Reason{}
	// cut is the wait that left out a partition of a rebuilt table: the
	// new table holds the partitions before it and none after, so that
	// it has no gap (a whole-table model reading it reads it through its
	// last partition), and the ledger says so.
	var cut *waitNote
	for _, st := range steps {
		if st.Reason == ReasonRemove {
			kept = append(kept, st) // reads nothing
			continue
		}
		if cut != nil {
			pl.noteWaiting(m, cut)
			continue
		}
		b, wait := pl.unreadable(m, st.Partition, own)
		switch {
		case wait != nil && !pl.sel.AllowMissingUpstream:
			pl.noteWaiting(m, wait)
			if pl.rebuild[m] {
				cut = wait
			}
			continue
		case b != nil && !pl.sel.AllowMissingUpstream:
			by := b.by
			st.Reason, st.Detail, st.Cause, st.BlockedBy = ReasonBlocked, b.why, b.cause, &by
		case b != nil:
			st.Detail = joinDetail(st.Detail, b.why+" (run anyway: --allow-missing-upstream)")
		case wait != nil && !wait.past.IsZero():
			st.Detail = joinDetail(st.Detail, fmt.Sprintf("reads %s %s, after the range's end, which was never built (run anyway: --allow-missing-upstream)", wait.up.Name, wait.upKey))
		case wait != nil:
			st.Detail = joinDetail(st.Detail, fmt.Sprintf("reads %s %s, which is not complete yet (run anyway: --allow-missing-upstream)", wait.up.Name, wait.upKey))
		}
		own[st.Partition.Key] = st.Reason
		st.Horizon = horizon
		kept = append(kept, st)
	}
	pl.steps[m] = kept
	if pl.rebuild[m] {
		// A rebuilt table must hold every partition: one blocked partition
		// blocks the rebuild.
		for _, st := range kept {
			if st.Reason != ReasonBlocked {
				continue
			}
			for i := range kept {
				if kept[i].Reason != ReasonBlocked {
					kept[i].Reason = ReasonBlocked
					kept[i].Detail = fmt.Sprintf("the rebuild of %s needs every partition, and %s is blocked: %s", m.Name, st.Partition.Key, st.Detail)
					kept[i].Cause = "the rebuild needs every partition, and some are blocked"
					kept[i].BlockedBy = &Blocker{m.Name, st.Partition.Key, ReasonBlocked}
				}
			}
			break
		}
	}
	pl.index(m)
}

// plannedStep returns the step planned for partition q of up, or nil.
func (pl *planner) plannedStep(up *models.Model, q models.Partition) *Step {
	if up.Kind() != models.TimePartitioned {
		return pl.planned[up][q.Key]
	}
	steps := pl.steps[up] // sorted by start (index)
	i := sort.Search(len(steps), func(i int) bool { return !steps[i].Partition.Start.Before(q.Start) })
	for ; i < len(steps) && steps[i].Partition.Start.Equal(q.Start); i++ {
		if steps[i].Partition.Key == q.Key {
			return &steps[i]
		}
	}
	return nil
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// blockage is why a partition cannot run: the upstream partition it
// waits for, and what is wrong with it.
type blockage struct {
	why   string // for the partition: "reads x 2024-01-02, which failed: ..."
	cause string // the same without the partition, for grouping
	by    Blocker
}

// unreadable checks the upstream partitions that partition p of m reads.
// It returns why p cannot run (a missing, failed, half-published or
// blocked upstream partition), or the upstream partition it waits for.
func (pl *planner) unreadable(m *models.Model, p models.Partition, own map[string]Reason) (*blockage, *waitNote) {
	// A partition that runs before its window is complete (allow_partial)
	// may read upstream partitions that are not complete either.
	open := m.Kind() == models.TimePartitioned && pl.sel.Now.Before(p.End.Add(m.Config.Delay))
	if m.Config.Self && p.Start.After(m.Config.Start) {
		prev := m.Next(p, -1)
		if reason, planned := own[prev.Key]; planned {
			if reason == ReasonBlocked {
				return &blockage{fmt.Sprintf("reads its own earlier partition %s, which is blocked", prev.Key), "reads its own blocked partitions",
					Blocker{m.Name, prev.Key, ReasonBlocked}}, nil
			}
		} else if r := pl.a.ledger.record(m.Name, prev.Key); r == nil || !r.State.Published() {
			return &blockage{fmt.Sprintf("reads its own earlier partition %s, which is not built", prev.Key),
				"reads its own earlier partitions, which are not built (run from the first one)", Blocker{m.Name, prev.Key, ReasonMissing}}, nil
		}
	}
	for _, up := range m.Upstream {
		last, complete := pl.lastComplete(up)
		limit := last
		if up.Kind() == models.TimePartitioned && !complete {
			limit = up.Config.Start.Add(-time.Nanosecond)
		}
		var reads []models.Partition
		if g, ok := aligned(m, up); ok && g == up.Config.Grain {
			// The one upstream partition holding this one, if up has it
			// (its start: or end: may leave it out).
			if q := up.PartitionAt(p.Start); !q.Start.Before(up.Config.Start) && (up.Config.End.IsZero() || q.Start.Before(up.Config.End)) {
				reads = []models.Partition{q}
			}
		} else if span := models.DependencySpan(m, p, up); span.All && up.Kind() == models.TimePartitioned {
			// A whole-table or list model reads up through its horizon;
			// partitions after it are not yet read, not missing. One
			// whose horizon holds none of up's partitions has nothing of
			// up to read yet.
			first := up.PartitionAt(up.Config.Start)
			through := pl.horizons[m].Add(-time.Nanosecond)
			// Never built, up has no table to read yet.
			never := pl.a.ledger.byModel[up.Name] == nil && len(pl.steps[up]) == 0 && pl.facts.Proven[up.Name].IsZero()
			switch {
			case !complete && never:
				return nil, &waitNote{up: up, upKey: first.Key, complete: first.End.Add(up.Config.Delay)}
			case through.Before(up.Config.Start) && never:
				return nil, &waitNote{up: up, upKey: first.Key, past: pl.horizons[m]}
			case complete && !through.Before(up.Config.Start):
				reads = up.Partitions(up.Config.Start, earliest(through, last))
			}
		} else {
			reads = models.ReadPartitions(m, p, up, time.Time{})
		}
		if len(reads) == 0 && up.Kind() == models.TimePartitioned && pl.a.ledger.byModel[up.Name] == nil && len(pl.steps[up]) == 0 &&
			pl.facts.Proven[up.Name].IsZero() {
			// Up has no partition p reads (its start: is later), and was
			// never built: it has no table to read yet.
			first := up.PartitionAt(up.Config.Start)
			return &blockage{fmt.Sprintf("reads %s, which was never built: it has no table yet (its first partition is %s)", up.Name, first.Key),
				fmt.Sprintf("reads %s, which has no table yet", up.Name), Blocker{up.Name, first.Key, ReasonMissing}}, nil
		}
		for _, q := range reads {
			// p reaches past the range's end (a month holding its last
			// day, a local day ending after it) and q lies there: what the
			// range does not build, q is not yet, as a partition not
			// complete yet.
			pastRange := m.Kind() == models.TimePartitioned && !pl.rangeEnd.IsZero() && !q.Start.Before(pl.rangeEnd) && p.End.After(pl.rangeEnd)
			by := Blocker{up.Name, q.Key, ""}
			if st := pl.plannedStep(up, q); st != nil && pl.selected[up] {
				if st.Reason == ReasonBlocked {
					by.State = ReasonBlocked
					return &blockage{fmt.Sprintf("reads %s %s, which is blocked", up.Name, q.Key), fmt.Sprintf("reads blocked partitions of %s", up.Name), by}, nil
				}
				continue
			}
			rec := pl.a.ledger.record(up.Name, q.Key)
			switch {
			case rec == nil && pl.provenBuilt(up, q):
				// Done by the ledger's summaries; its record was not read.
			case rec != nil && rec.State.Published():
				if drift := pl.a.drifted(up, q, rec); drift != "" {
					by.State = ReasonDrift
					return &blockage{fmt.Sprintf("reads %s %s, whose rows are not what the ledger recorded (%s)", up.Name, q.Key, drift),
						fmt.Sprintf("reads partitions of %s whose rows are not what the ledger recorded", up.Name), by}, nil
				}
			case rec != nil && !rec.State.Published() && pastRange:
				// Not built (failed, or its publication unfinished), and
				// the range does not rebuild it: as if never built (below).
				return nil, &waitNote{up: up, upKey: q.Key, past: pl.rangeEnd}
			case rec != nil && rec.State == adapters.RecordFailed:
				by.State = ReasonFailed
				return &blockage{fmt.Sprintf("reads %s %s, which failed: %s", up.Name, q.Key, firstLine(rec.Error)),
					fmt.Sprintf("reads failed partitions of %s", up.Name), by}, nil
			case rec != nil && rec.State == adapters.RecordPending:
				by.State = ReasonPending
				return &blockage{fmt.Sprintf("reads %s %s, whose last publication may not have finished", up.Name, q.Key),
					fmt.Sprintf("reads partitions of %s whose publication may not have finished", up.Name), by}, nil
			case up.Kind() == models.TimePartitioned && q.Start.After(limit):
				if open {
					continue // an open partition reads what there is; it is redone once complete
				}
				return nil, &waitNote{up: up, upKey: q.Key, complete: q.End.Add(up.Config.Delay)}
			case pastRange:
				return nil, &waitNote{up: up, upKey: q.Key, past: pl.rangeEnd}
			default:
				how, hows := "select +"+m.Name+" to build it", "select +"+m.Name+" to build them"
				if pl.selected[up] {
					how, hows = "it is outside this run's range or mode", "they are outside this run's range or mode"
				}
				by.State = ReasonMissing
				return &blockage{fmt.Sprintf("reads %s %s, which was never built (%s)", up.Name, q.Key, how),
					fmt.Sprintf("reads partitions of %s that were never built (%s)", up.Name, hows), by}, nil
			}
		}
	}
	return nil, nil
}

// provenBuilt reports whether partition q of up, whose record the plan did
// not read, lies before up's proven bound: the ledger's summaries proved it done
// (see planProven).
func (pl *planner) provenBuilt(up *models.Model, q models.Partition) bool {
	proven, ok := pl.facts.Proven[up.Name]
	return ok && q.Start.Before(proven)
}

// rangeHorizon returns the end of the upstream time the selection's range
// covers for m, a whole-table or list model: the end of the last complete
// partition among its time-partitioned upstreams, or the end of --to (of
// the latest period --partitions names) when that is earlier. Zero when m
// reads no time-partitioned model with a complete partition.
func (pl *planner) rangeHorizon(m *models.Model) time.Time {
	var h time.Time
	for _, up := range m.Upstream {
		if up.Kind() != models.TimePartitioned {
			continue
		}
		if last, ok := pl.lastComplete(up); ok {
			h = latest(h, up.PartitionAt(last).End)
		}
	}
	if to := pl.rangeEnd; !h.IsZero() && !to.IsZero() && to.Before(h) && !pl.sel.FullRefresh {
		h = to
	}
	return h
}

// horizon returns the horizon of m, a whole-table or list model reading
// time-partitioned models (zero for others): the instant before which
// every complete partition of those models must be built, or planned
// before m, for m to run. It is the range's (rangeHorizon), and never
// earlier than the horizon m's table was built with (a rerun of an early
// range must not shrink what the table covers), nor than what its
// upstreams' tables hold and this plan adds to them: m reads their
// whole tables, so a partition they hold past the range is read too, and
// the partitions before it must be there.
func (pl *planner) horizon(m *models.Model) time.Time {
	if m.Kind() == models.TimePartitioned {
		return time.Time{}
	}
	h := pl.rangeHorizon(m)
	if h.IsZero() {
		return h
	}
	if mr := pl.a.ledger.byModel[m.Name]; mr != nil {
		for _, r := range mr.byKey {
			h = latest(h, r.WindowEnd)
		}
	}
	for _, up := range m.Upstream {
		if up.Kind() != models.TimePartitioned {
			continue
		}
		// A rebuilt upstream's new table holds what this plan builds (its
		// steps, below), not what the ledger says the old one does.
		if !pl.rebuild[up] {
			if r := pl.a.ledger.latestHeld(up.Name); r != nil {
				h = latest(h, r.WindowStart.Add(time.Second))
			}
			if proven, ok := pl.facts.Proven[up.Name]; ok && !proven.IsZero() {
				// Every complete partition before the proven bound is built.
				if last, complete := pl.lastComplete(up); complete {
					h = latest(h, earliest(proven, up.PartitionAt(last).End))
				}
			}
		}
		steps := pl.steps[up]
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i].Reason != ReasonBlocked {
				h = latest(h, steps[i].Partition.Start.Add(time.Second))
				break
			}
		}
	}
	return h
}

func (pl *planner) noteWaiting(m *models.Model, w *waitNote) {
	if pl.waiting == nil {
		pl.waiting = map[waitKey]*waitNote{}
	}
	k := waitKey{m, !w.past.IsZero()}
	n := pl.waiting[k]
	if n == nil {
		n = w
		pl.waiting[k] = n
	}
	n.n++
}

// waitKey keys the notes of partitions left out: per model, those waiting
// for upstream partitions to complete and those reaching past the range.
type waitKey struct {
	m    *models.Model
	past bool
}

func (pl *planner) waitingNotes() []string {
	var out []string
	for _, m := range pl.chosen.Models {
		if w := pl.waiting[waitKey{m, false}]; w != nil {
			out = append(out, fmt.Sprintf("%s: left out %d partition(s) that read %s partitions not complete yet (%s %s is complete at %s); --allow-missing-upstream runs them",
				m.Name, w.n, w.up.Name, w.up.Name, w.upKey, w.complete.UTC().Format("2006-01-02 15:04 UTC")))
		}
		if w := pl.waiting[waitKey{m, true}]; w != nil {
			out = append(out, fmt.Sprintf("%s: left out %d partition(s) that reach past the range's end and read %s partitions after it, which are not built (%s %s); extend --to to build them",
				m.Name, w.n, w.up.Name, w.up.Name, w.upKey))
		}
	}
	return out
}

// decide applies the selection's mode to an assessment.
func decide(sel Selection, as assessment) (Reason, string) {
	if resumedDone(sel, as) {
		return "", ""
	}
	switch sel.Mode {
	case ModeAll:
		if as.state == StateMissing {
			return ReasonMissing, ""
		}
		return ReasonForced, "--mode all"
	case ModeMissing:
		if as.state == StateMissing {
			return ReasonMissing, ""
		}
		return "", ""
	case ModeFailed:
		if as.state == StateFailed || as.state == StatePending {
			return as.reason, as.detail
		}
		return "", ""
	}
	if as.state == StateDone {
		return "", ""
	}
	return as.reason, as.detail
}

// resumedDone reports whether a resumed run already did this partition.
func resumedDone(sel Selection, as assessment) bool {
	return !sel.Since.IsZero() && as.state == StateDone && !as.record.FinishedAt.Before(sel.Since)
}

// lookbackKeys returns the partitions a scheduled run reruns for late data.
func lookbackKeys(m *models.Model, sel Selection) map[string]bool {
	if m.Kind() != models.TimePartitioned || !sel.Scheduled() {
		return nil
	}
	offsets := m.Config.Lookback
	if sel.Lookback != nil {
		offsets = make([]int, *sel.Lookback)
		for i := range offsets {
			offsets[i] = i
		}
	}
	last, ok := m.LastComplete(sel.Now)
	if !ok || len(offsets) == 0 {
		return nil
	}
	lastPart := m.PartitionAt(last)
	keys := map[string]bool{}
	for _, off := range offsets {
		p := m.Next(lastPart, -off)
		if !p.Start.Before(m.Config.Start) {
			keys[p.Key] = true
		}
	}
	return keys
}

// dependentPartitions returns the partitions of m, among those the ledger
// has a record of, that read any of up's partitions parts.
func dependentPartitions(m, up *models.Model, parts []models.Partition, l *ledger) []models.Partition {
	mr := l.byModel[m.Name]
	if mr == nil || len(parts) == 0 {
		return nil
	}
	var out []models.Partition
	seen := map[string]bool{}
	// Partitions removed, or outside the model's range (which removals
	// plan), hold nothing that reads up.
	add := func(r *adapters.Record) {
		if seen[r.Partition] || r.State == adapters.RecordRemoved {
			return
		}
		seen[r.Partition] = true
		if m.Kind() == models.TimePartitioned && outside(m, r) {
			return
		}
		if p, err := m.Partition(r.Partition); err == nil {
			out = append(out, p)
		}
	}
	for _, u := range parts {
		from, to, all := models.Dependents(m, up, u)
		if all {
			for _, r := range mr.sorted() {
				add(r)
			}
			break
		}
		i := sort.Search(len(mr.timed), func(i int) bool { return !mr.timed[i].WindowStart.Before(from) })
		for ; i < len(mr.timed) && mr.timed[i].WindowStart.Before(to); i++ {
			add(mr.timed[i])
		}
	}
	sortPartitions(m, out)
	return out
}

// sortPartitions orders time partitions by start and list partitions as
// the model lists its values.
func sortPartitions(m *models.Model, parts []models.Partition) {
	if m.Kind() == models.ListPartitioned {
		pos := valuePositions(m)
		slices.SortStableFunc(parts, func(a, b models.Partition) int { return pos[a.Key] - pos[b.Key] })
		return
	}
	byStart := func(a, b models.Partition) int { return a.Start.Compare(b.Start) }
	if !slices.IsSortedFunc(parts, byStart) {
		slices.SortStableFunc(parts, byStart)
	}
}

func sortSteps(steps []Step) {
	if len(steps) == 0 {
		return
	}
	m := steps[0].Model
	if m.Kind() == models.ListPartitioned {
		pos := valuePositions(m)
		slices.SortStableFunc(steps, func(a, b Step) int { return pos[a.Partition.Key] - pos[b.Partition.Key] })
		return
	}
	byStart := func(a, b Step) int { return a.Partition.Start.Compare(b.Partition.Start) }
	if !slices.IsSortedFunc(steps, byStart) {
		slices.SortStableFunc(steps, byStart)
	}
}

func valuePositions(m *models.Model) map[string]int {
	pos := map[string]int{}
	for i, v := range m.Config.Values {
		pos[fmt.Sprint(v)] = i
	}
	return pos
}

// Counts returns how many steps each reason has, blocked ones included.
func (p *Plan) Counts() map[Reason]int {
	out := map[Reason]int{}
	for _, s := range p.Steps {
		out[s.Reason]++
	}
	if len(p.Blocked) > 0 {
		out[ReasonBlocked] = len(p.Blocked)
	}
	return out
}

// refreshReason decides whether a scheduled run rebuilds a done partition
// of m, a whole-table or list model, by its refresh rule.
func refreshReason(m *models.Model, p models.Partition, rec *adapters.Record, wm Watermarks, now time.Time) (Reason, string) {
	rule := m.RefreshRule()
	switch rule.Mode {
	case models.RefreshAlways:
		what := "refresh: always"
		if m.Config.Refresh.Mode == "" {
			what = "refresh: always, the default of a model reading a source"
		}
		return ReasonRefresh, fmt.Sprintf("reads %s, which refill does not track (%s)", strings.Join(m.SQL.Source, ", "), what)
	case models.RefreshEvery:
		if age := now.Sub(rec.StartedAt); age >= rule.Every {
			return ReasonRefresh, fmt.Sprintf("last built %s ago (refresh: %s)", models.FormatDuration(age.Truncate(time.Minute)), rule)
		}
	case models.RefreshWatermark:
		cur, ok := wm[m.Name][p.Key]
		switch {
		case !ok:
			return ReasonRefresh, "its watermark is not known (refresh: watermark)"
		case cur != rec.Watermark:
			return ReasonRefresh, fmt.Sprintf("the source's watermark moved from %q to %q", rec.Watermark, cur)
		}
	}
	return "", ""
}

// lookbackReason decides whether a done partition inside the lookback
// window reruns: always, unless the model has a watermark whose current
// value is known and equals the recorded one.
func lookbackReason(m *models.Model, p models.Partition, rec *adapters.Record, wm Watermarks) (Reason, string) {
	if m.Config.Watermark == nil || wm == nil || wm[m.Name] == nil {
		return ReasonLookback, "inside the late-data lookback window"
	}
	cur, ok := wm[m.Name][p.Key]
	switch {
	case !ok:
		return ReasonLookback, "inside the late-data lookback window"
	case rec.Watermark == "":
		return ReasonWatermark, fmt.Sprintf("no watermark recorded yet; the source's is %q", cur)
	case cur != rec.Watermark:
		return ReasonWatermark, fmt.Sprintf("the source's watermark moved from %q to %q", rec.Watermark, cur)
	}
	return "", ""
}
