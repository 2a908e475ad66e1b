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
	// Through, when the step reads several partitions of Model in
	// State (never built, failed, or their publication unfinished), is
	// the key of the last of them (Partition is the first): what one
	// command must build for the step to run. Empty otherwise.
	Through string
	// PastRange says Partition lies after the end of the selection's
	// range, which does not build it: a whole-table or list model reads
	// its upstream's whole table, and that holds partitions past the range.
	PastRange bool
}

// Plan is what a run would do: the selected models and, in an order that
// respects dependencies, every partition that needs to run (Steps, held as
// runs of partitions: Runs), and those that need to but cannot (Blocked).
type Plan struct {
	Selection Selection
	Models    []*models.Model // selected, in graph order
	Notes     []string        // what the plan left out, and why
	// Rebuild holds the models whose whole table the run rebuilds (a full
	// refresh: --full-refresh, or on_schema_change: rebuild): every one
	// of their partitions is staged, and the table is replaced at once.
	Rebuild map[*models.Model]bool

	runs, blocked    []Run   // the steps, and the blocked steps (see Steps, Blocked)
	nSteps, nBlocked int     // how many partitions runs and blocked hold
	ledger           *ledger // the records the plan was made from, for Run's audits
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
	// SourceChanged says, for a scheduled run, by model and partition key,
	// how the rows of a tracked source in a done partition's window
	// changed since it was built (see sourceChanges): it reruns.
	SourceChanged map[string]map[string]string
	// SourceChecked and SourceParts are what the plan's Selection.Checked
	// and .Parts record.
	SourceChecked map[string]map[string]Loaded
	SourceParts   map[string]map[string]map[string]string
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
	return newPlan(p, scope, facts, sel, false)
}

// newPlan is NewPlanFacts. With onePerPartition, it looks at every
// candidate partition on its own, as if each were a run of one: the plan
// must be the same (the tests compare them).
func newPlan(p *models.Project, scope *models.Scope, facts Facts, sel Selection, onePerPartition bool) (*Plan, error) {
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
		project: p, sel: sel, facts: facts, chosen: chosen, rangeEnd: sel.rangeEnd(), onePerPartition: onePerPartition,
		a:        &assessor{scope: scope, ledger: indexLedger(facts.Records), tables: facts.Tables, now: sel.Now},
		selected: map[*models.Model]bool{},
		steps:    map[*models.Model][]Run{},
		planned:  map[*models.Model]map[string]int{},
	}
	for _, m := range chosen.Models {
		pl.selected[m] = true
	}
	sel.Checked, sel.Parts = facts.SourceChecked, facts.SourceParts
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
			delete(pl.cands, m) // its steps hold what is left of them (resumedRewrites reads them when resuming)
		}
	}
	for _, m := range chosen.Models {
		plan.addRuns(pl.steps[m])
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
	cands   map[*models.Model]cands
	matched bool // some candidate matched --partitions
	// rangeEnd is the end of the selection's range (Selection.rangeEnd).
	rangeEnd time.Time
	// onePerPartition: see newPlan.
	onePerPartition bool
	// steps are each model's planned steps, as runs, sorted once final
	// (index).
	steps map[*models.Model][]Run
	// planned indexes the runs of models not partitioned by time, by
	// partition key (each holds one partition).
	planned map[*models.Model]map[string]int
	// recordedBy caches recorded.
	recordedBy map[*models.Model][]recordedPartition
	notes      []string
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
	pl.cands = map[*models.Model]cands{}
	order := pl.chosen.Models
	for i := len(order) - 1; i >= 0; i-- {
		m := order[i]
		byKey := map[string]models.Partition{}
		var direct cands // the range alone, when nothing else adds to it
		if pl.rebuild[m] {
			// A rebuilt table holds every partition the model has.
			whole := pl.sel
			whole.From, whole.To, whole.Partitions = "", "", nil
			c, notes, _, err := whole.rangeOf(m, time.Time{})
			if err != nil {
				return err
			}
			pl.notes = append(pl.notes, notes...)
			pl.matched = true
			if !pl.chosen.Upstream[m] {
				direct = c
			} else {
				for p := range c.all(m) {
					byKey[p.Key] = p
				}
			}
		} else if pl.chosen.Direct[m] {
			c, notes, named, err := pl.sel.rangeOf(m, pl.facts.Proven[m.Name])
			if err != nil {
				return err
			}
			pl.matched = pl.matched || named
			if len(pl.sel.Partitions) > 0 && !named && m.Kind() != models.TimePartitioned {
				var parts []models.Partition
				parts, notes = pl.unnamed(m)
				c = cands{parts: parts}
				// Named on the command line, it is what --partitions
				// matched; a whole table matched otherwise is not.
				pl.matched = pl.matched || pl.chosen.Named[m] && len(parts) > 0
			}
			pl.notes = append(pl.notes, notes...)
			if !pl.chosen.Upstream[m] {
				direct = c
			} else {
				for p := range c.all(m) {
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
				if m.Kind() == models.TimePartitioned && !complete {
					continue
				}
				for p := range pl.cands[down].all(down) {
					for _, q := range models.ReadPartitions(down, p, m, through) {
						if m.Kind() != models.TimePartitioned || !q.Start.After(last) {
							byKey[q.Key] = q
						}
					}
				}
			}
		}
		c := direct
		if pl.chosen.Upstream[m] {
			parts := make([]models.Partition, 0, len(byKey))
			for _, p := range byKey {
				parts = append(parts, p)
			}
			sortPartitions(m, parts)
			c = candsOf(m, parts)
		}
		if proven := pl.facts.Proven[m.Name]; m.Kind() == models.TimePartitioned && !proven.IsZero() {
			c = c.after(m, proven)
		}
		if !c.empty() && pl.chosen.Upstream[m] {
			pl.matched = true
		}
		pl.cands[m] = c
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

// decide assesses m's candidates and keeps those that need to run. A
// stretch of partitions the ledger has no record of is decided at once:
// each of them would be assessed missing.
func (pl *planner) decide(m *models.Model) error {
	if pl.rebuild[m] {
		if !pl.sel.Since.IsZero() && pl.rebuiltSince(m) {
			return nil // the run being resumed rebuilt it
		}
		why := pl.rebuildWhy[m]
		for sg := range pl.segments(m) {
			pl.addRun(Run{Step: Step{Model: m, Partition: sg.first, Reason: ReasonRebuild, Detail: why, Cause: why, Record: sg.rec},
				N: sg.n, Last: sg.last})
		}
		return nil
	}
	lookback := lookbackKeys(m, pl.sel)
	missing, missingDetail := decide(pl.sel, assessment{state: StateMissing, reason: ReasonMissing})
	for sg := range pl.segments(m) {
		if sg.rec == nil {
			if missing != "" {
				pl.addRun(Run{Step: Step{Model: m, Partition: sg.first, Reason: missing, Detail: missingDetail}, N: sg.n, Last: sg.last})
			}
			continue
		}
		part := sg.first
		as, err := pl.a.assess(m, part)
		if err != nil {
			return err
		}
		reason, detail := decide(pl.sel, as)
		if reason == "" && as.state == StateDone && !resumedDone(pl.sel, as) && pl.sel.Mode == ModeDefault {
			switch {
			case pl.facts.SourceChanged[m.Name][part.Key] != "":
				reason, detail = ReasonSource, pl.facts.SourceChanged[m.Name][part.Key]
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
	for sg := range pl.segments(m) {
		if r := sg.rec; r == nil || !r.State.Published() || r.FinishedAt.Before(pl.sel.Since) {
			return false
		}
	}
	return true
}

// add plans st.
func (pl *planner) add(st Step) {
	pl.steps[st.Model] = appendStep(pl.steps[st.Model], st)
}

// addRun plans r's steps.
func (pl *planner) addRun(r Run) {
	pl.steps[r.Model] = appendRun(pl.steps[r.Model], r)
}

// index sorts m's steps after they changed and, for a model not
// partitioned by time, rebuilds its key index (plannedRun finds a time
// partition's run by its start).
func (pl *planner) index(m *models.Model) {
	sortRuns(pl.steps[m])
	if m.Kind() == models.TimePartitioned {
		return
	}
	idx := make(map[string]int, len(pl.steps[m]))
	for i, r := range pl.steps[m] {
		idx[r.Partition.Key] = i
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
	pl.index(m)
	have := pl.haveIndex(m)
	for _, up := range m.Upstream {
		if !pl.selected[up] {
			continue
		}
		// What reads a refreshed partition runs only if the refresh
		// changes its rows (Step.Conditional).
		var definite, conditional []Run
		for _, r := range pl.steps[up] {
			switch {
			case r.Reason == ReasonBlocked:
			case r.Reason == ReasonRefresh || r.Conditional:
				conditional = append(conditional, r)
			default:
				definite = append(definite, r)
			}
		}
		for _, p := range pl.resumedRewrites(up) {
			definite = append(definite, Run{Step: Step{Model: up, Partition: p}, N: 1, Last: p})
		}
		for _, g := range []struct {
			runs []Run
			cond bool
		}{{definite, false}, {conditional, true}} {
			why := fmt.Sprintf("reads %s, which this run rewrites", up.Name)
			if g.cond {
				why = fmt.Sprintf("reads %s, which this run refreshes (runs only if its rows change)", up.Name)
			}
			for _, part := range dependentPartitions(m, up, g.runs, pl.a.ledger) {
				if i := have.find(part); i >= 0 {
					// Planned already: by a policy (a refresh, lookback),
					// or only if a refresh changes something, it now runs
					// because what it reads is rewritten. (Such a run is
					// one partition: it has a record.)
					if r := &pl.steps[m][i]; !g.cond && (r.Conditional || policy(r.Reason)) {
						r.Reason, r.Conditional, r.Detail, r.Cause = ReasonUpstream, false, why, why
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
				have.added(part, len(pl.steps[m])-1)
			}
		}
	}
	if m.Config.Self {
		return pl.propagateSelf(m, have)
	}
	return nil
}

// haveIndex finds the run of m's steps that holds a partition, while
// propagate adds steps to them.
type haveIndex struct {
	runs  []Run          // m's runs when propagate began, sorted (time partitions only)
	keys  map[string]int // by key: the runs of a model not partitioned by time, and the steps added since
	timed bool
}

// haveIndex returns the index of m's steps, which index sorted.
func (pl *planner) haveIndex(m *models.Model) *haveIndex {
	h := &haveIndex{keys: map[string]int{}, timed: m.Kind() == models.TimePartitioned}
	if h.timed {
		h.runs = pl.steps[m]
	} else {
		for i, r := range pl.steps[m] {
			h.keys[r.Partition.Key] = i
		}
	}
	return h
}

// find returns the index of the run holding p, or -1.
func (h *haveIndex) find(p models.Partition) int {
	if i, ok := h.keys[p.Key]; ok {
		return i
	}
	if h.timed {
		return runAt(h.runs, p)
	}
	return -1
}

// added notes that the step at index i plans p.
func (h *haveIndex) added(p models.Partition, i int) { h.keys[p.Key] = i }

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
func (pl *planner) propagateSelf(m *models.Model, have *haveIndex) error {
	var first *models.Partition
	cond := false
	for _, r := range pl.steps[m] {
		if r.Reason != ReasonBlocked && (first == nil || r.Partition.Start.Before(first.Start)) {
			p := r.Partition
			first, cond = &p, r.Conditional || r.Reason == ReasonRefresh
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
		if !r.WindowStart.After(first.Start) || r.State == adapters.RecordRemoved || outside(m, r) {
			continue
		}
		part, err := m.Partition(r.Partition)
		if err != nil || have.find(part) >= 0 {
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
		have.added(part, len(pl.steps[m])-1)
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
	c := pl.cands[up]
	var out []models.Partition
	for key, r := range mr.byKey {
		if !r.State.Published() || r.FinishedAt.Before(pl.sel.Since) {
			continue
		}
		if p, err := up.Partition(key); err == nil && c.contains(p) {
			out = append(out, p)
		}
	}
	sortPartitions(up, out)
	return out
}

// block marks m's steps that read upstream partitions which are neither
// built nor planned (missing, failed, half-published, or blocked in this
// plan) as blocked, and drops those that read upstream partitions not
// complete yet, noting them. A run whose partitions all read what is
// built or planned (readable) is kept whole; the partitions of any other
// are checked one by one.
func (pl *planner) block(m *models.Model) {
	runs := pl.steps[m]
	kept := make([]Run, 0, len(runs))
	horizon := pl.horizon(m)
	if !horizon.IsZero() {
		if pl.horizons == nil {
			pl.horizons = map[*models.Model]time.Time{}
		}
		pl.horizons[m] = horizon
	}
	// For a model that reads its own past: the outcome of its steps so far.
	var own map[string]Reason
	if m.Config.Self {
		own = map[string]Reason{}
	}
	// cut is the wait that left out a partition of a rebuilt table: the
	// new table holds the partitions before it and none after, so that
	// it has no gap (a whole-table model reading it reads it through its
	// last partition), and the ledger says so.
	var cut *waitNote
	for _, r := range runs {
		switch {
		case r.Reason == ReasonRemove:
			kept = appendRun(kept, r) // reads nothing
			continue
		case cut != nil:
			pl.noteWaiting(m, cut, r.N)
			continue
		case r.N > 1 && !pl.onePerPartition && pl.readable(m, r):
			r.Horizon = horizon
			kept = appendRun(kept, r)
			continue
		}
		for st := range r.Steps() {
			if cut != nil {
				pl.noteWaiting(m, cut, 1)
				continue
			}
			b, wait := pl.unreadable(m, st.Partition, own)
			switch {
			case wait != nil && !pl.sel.AllowMissingUpstream:
				pl.noteWaiting(m, wait, 1)
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
			if own != nil {
				own[st.Partition.Key] = st.Reason
			}
			st.Horizon = horizon
			kept = appendStep(kept, st)
		}
	}
	pl.steps[m] = kept
	if pl.rebuild[m] {
		pl.steps[m] = blockRebuild(m, kept)
	}
	pl.index(m)
}

// blockRebuild returns the steps of m, whose table is rebuilt, all blocked
// when one of them is: a rebuilt table must hold every partition.
func blockRebuild(m *models.Model, runs []Run) []Run {
	i := slices.IndexFunc(runs, func(r Run) bool { return r.Reason == ReasonBlocked })
	if i < 0 {
		return runs
	}
	blocked := runs[i]
	out := make([]Run, 0, len(runs))
	for st := range each(runs) {
		if st.Reason != ReasonBlocked {
			st.Reason = ReasonBlocked
			st.Detail = fmt.Sprintf("the rebuild of %s needs every partition, and %s is blocked: %s", m.Name, blocked.Partition.Key, blocked.Detail)
			st.Cause = "the rebuild needs every partition, and some are blocked"
			st.BlockedBy = &Blocker{Model: m.Name, Partition: blocked.Partition.Key, State: ReasonBlocked}
		}
		out = appendStep(out, st)
	}
	return out
}

// readable reports whether every partition of r, a run of m, reads only
// upstream partitions that are built or planned (and not blocked), so
// that none of them is blocked or waits: what unreadable would find of
// each, found at once. It answers for a time-partitioned model that does
// not read its own past; false means only that r's partitions are checked
// one by one.
func (pl *planner) readable(m *models.Model, r Run) bool {
	if m.Kind() != models.TimePartitioned || m.Config.Self {
		return false
	}
	open := pl.sel.Now.Before(r.Last.End.Add(m.Config.Delay))
	for _, up := range m.Upstream {
		if up.Kind() != models.TimePartitioned {
			// Every partition of m reads all of up's.
			if b, wait := pl.unreadableUp(m, r.Partition, up, open); b != nil || wait != nil {
				return false
			}
			continue
		}
		if g, ok := aligned(m, up); ok && g == up.Config.Grain {
			// Each partition of m reads the one of up holding it.
			first, last := up.PartitionAt(r.Partition.Start), up.PartitionAt(r.Last.Start)
			if first.Start.Before(up.Config.Start) || !up.Config.End.IsZero() && !last.Start.Before(up.Config.End) {
				return false
			}
			if !pl.builtOrPlanned(up, first.Start, last.End) {
				return false
			}
			continue
		}
		// Each partition of m reads those of up its span overlaps, which
		// moves forward with it: all lie among the partitions
		// models.ReadPartitions looks at for the first and the last.
		first, last := models.DependencySpan(m, r.Partition, up), models.DependencySpan(m, r.Last, up)
		if first.All || last.All {
			return false
		}
		from, to := first.Start.Add(-models.ExtentPad), last.End.Add(models.ExtentPad)
		from = latest(from, up.Config.Start)
		if !up.Config.End.IsZero() {
			to = earliest(to, up.Config.End)
		}
		if !from.Before(to) {
			return false // some partition of r may read none of up's
		}
		if !pl.builtOrPlanned(up, up.PartitionAt(from).Start, up.PartitionAt(to.Add(-time.Nanosecond)).End) {
			return false
		}
	}
	return true
}

// builtOrPlanned reports whether every partition of time-partitioned up
// in [start, end), two of its partition boundaries, is planned and not
// blocked, or built: proven by the ledger's summaries, or published as
// its table holds it.
func (pl *planner) builtOrPlanned(up *models.Model, start, end time.Time) bool {
	runs := pl.steps[up] // sorted by start (index)
	if !pl.selected[up] {
		runs = nil
	}
	proven := pl.facts.Proven[up.Name]
	var recorded []recordedPartition
	if !proven.IsZero() {
		recorded = pl.recorded(up)
	}
	i := sort.Search(len(runs), func(i int) bool { return runs[i].Last.End.After(start) })
	for t := start; t.Before(end); {
		if i < len(runs) && runs[i].Reason == ReasonRemove {
			i++ // builds nothing (and its window, under another grain, may span others)
			continue
		}
		if i < len(runs) && !runs[i].Partition.Start.After(t) {
			if runs[i].Reason == ReasonBlocked {
				return false
			}
			t = runs[i].Last.End
			i++
			continue
		}
		next := end // up to the next run, partitions are not planned
		if i < len(runs) && runs[i].Partition.Start.Before(end) {
			next = runs[i].Partition.Start
		}
		if t.Before(proven) {
			// Proven built, unless the ledger has a record of one of them,
			// which the partition's own check reads.
			to := earliest(next, proven)
			j := sort.Search(len(recorded), func(j int) bool { return !recorded[j].p.Start.Before(t) })
			if j == len(recorded) || !recorded[j].p.Start.Before(to) {
				t = up.PartitionAt(to.Add(-time.Nanosecond)).End
				continue
			}
		}
		q := up.PartitionAt(t)
		rec := pl.a.ledger.record(up.Name, q.Key)
		switch {
		case rec == nil && pl.provenBuilt(up, q):
		case rec != nil && rec.State.Published() && pl.a.drifted(up, q, rec) == "":
		default:
			return false
		}
		t = q.End
	}
	return true
}

// plannedRun returns the run planned for partition q of up, or nil.
func (pl *planner) plannedRun(up *models.Model, q models.Partition) *Run {
	if up.Kind() != models.TimePartitioned {
		if i, ok := pl.planned[up][q.Key]; ok {
			return &pl.steps[up][i]
		}
		return nil
	}
	if i := runAt(pl.steps[up], q); i >= 0 {
		return &pl.steps[up][i]
	}
	return nil
}

// runAt returns the index of the run of runs, one time-partitioned
// model's sorted by start, that holds its partition p; -1 when none does.
// Runs are disjoint, but for removals: a partition outside the model's
// range, as the ledger recorded it, perhaps under another grain, whose
// window may overlap others. One holds p only if it is p.
func runAt(runs []Run, p models.Partition) int {
	i := sort.Search(len(runs), func(i int) bool { return runs[i].Partition.Start.After(p.Start) })
	for i--; i >= 0; i-- {
		r := &runs[i]
		if r.Partition.Key == p.Key || r.N > 1 && r.Last.End.After(p.Start) {
			return i
		}
		if r.Reason != ReasonRemove && !r.Last.End.After(p.Start) {
			break // earlier runs end before p starts too
		}
	}
	return -1
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
					Blocker{Model: m.Name, Partition: prev.Key, State: ReasonBlocked}}, nil
			}
		} else if r := pl.a.ledger.record(m.Name, prev.Key); r == nil || !r.State.Published() {
			return &blockage{fmt.Sprintf("reads its own earlier partition %s, which is not built", prev.Key),
				"reads its own earlier partitions, which are not built (run from the first one)", Blocker{Model: m.Name, Partition: prev.Key, State: ReasonMissing}}, nil
		}
	}
	for _, up := range m.Upstream {
		if b, wait := pl.unreadableUp(m, p, up, open); b != nil || wait != nil {
			return b, wait
		}
	}
	return nil, nil
}

// unreadableUp is unreadable for the partitions of up that p reads; open
// says p runs before its window is complete.
func (pl *planner) unreadableUp(m *models.Model, p models.Partition, up *models.Model, open bool) (*blockage, *waitNote) {
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
			fmt.Sprintf("reads %s, which has no table yet", up.Name), Blocker{Model: up.Name, Partition: first.Key, State: ReasonMissing}}, nil
	}
	for _, q := range reads {
		// p reaches past the range's end (a month holding its last
		// day, a local day ending after it) and q lies there: what the
		// range does not build, q is not yet, as a partition not
		// complete yet.
		pastRange := m.Kind() == models.TimePartitioned && !pl.rangeEnd.IsZero() && !q.Start.Before(pl.rangeEnd) && p.End.After(pl.rangeEnd)
		by := Blocker{Model: up.Name, Partition: q.Key, PastRange: !pl.rangeEnd.IsZero() && !q.Start.Before(pl.rangeEnd)}
		if r := pl.plannedRun(up, q); r != nil && pl.selected[up] {
			if r.Reason == ReasonBlocked {
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
			by.State, by.Through = ReasonFailed, lastLike(reads, q, pl.inState(up, rec.State))
			return &blockage{fmt.Sprintf("reads %s %s, which failed: %s", up.Name, q.Key, firstLine(rec.Error)),
				fmt.Sprintf("reads failed partitions of %s", up.Name), by}, nil
		case rec != nil && rec.State == adapters.RecordPending:
			by.State, by.Through = ReasonPending, lastLike(reads, q, pl.inState(up, rec.State))
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
			by.Through = lastLike(reads, q, func(q models.Partition) bool {
				return pl.a.ledger.record(up.Name, q.Key) == nil && !pl.provenBuilt(up, q) && !q.Start.After(limit) &&
					(pl.plannedRun(up, q) == nil || !pl.selected[up])
			})
			return &blockage{fmt.Sprintf("reads %s %s, which was never built (%s)", up.Name, q.Key, how),
				fmt.Sprintf("reads partitions of %s that were never built (%s)", up.Name, hows), by}, nil
		}
	}
	return nil, nil
}

// lastLike returns the key of the last partition among reads, after first,
// that is like it; empty when there is none.
func lastLike(reads []models.Partition, first models.Partition, like func(models.Partition) bool) string {
	last := ""
	for _, q := range reads {
		if q.Start.After(first.Start) && like(q) {
			last = q.Key
		}
	}
	return last
}

// inState says whether a partition of up has a record in state s.
func (pl *planner) inState(up *models.Model, s adapters.RecordState) func(models.Partition) bool {
	return func(q models.Partition) bool {
		rec := pl.a.ledger.record(up.Name, q.Key)
		return rec != nil && rec.State == s
	}
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
				// Every complete partition starting before the proven
				// bound is built: the latest of them counts as its held
				// record would have.
				if last, complete := pl.lastComplete(up); complete {
					built := up.PartitionAt(earliest(proven, up.PartitionAt(last).End).Add(-time.Nanosecond))
					h = latest(h, built.Start.Add(time.Second))
				}
			}
		}
		runs := pl.steps[up]
		for i := len(runs) - 1; i >= 0; i-- {
			if runs[i].Reason != ReasonBlocked {
				h = latest(h, runs[i].Last.Start.Add(time.Second))
				break
			}
		}
	}
	return h
}

// noteWaiting counts n partitions of m left out by wait w.
func (pl *planner) noteWaiting(m *models.Model, w *waitNote, n int) {
	if pl.waiting == nil {
		pl.waiting = map[waitKey]*waitNote{}
	}
	k := waitKey{m, !w.past.IsZero()}
	note := pl.waiting[k]
	if note == nil {
		note = w
		pl.waiting[k] = note
	}
	note.n += n
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
// has a record of, that read any of the partitions of up that runs hold.
func dependentPartitions(m, up *models.Model, runs []Run, l *ledger) []models.Partition {
	mr := l.byModel[m.Name]
	if mr == nil || len(runs) == 0 {
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
	for u := range each(runs) {
		from, to, all := models.Dependents(m, up, u.Partition)
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
	sortByPartition(m, parts, func(p *models.Partition) *models.Partition { return p })
}

// sortByPartition orders xs, things of model m, by their partitions
// (part): time partitions by start, list partitions as the model lists
// its values.
func sortByPartition[T any](m *models.Model, xs []T, part func(*T) *models.Partition) {
	if m.Kind() == models.ListPartitioned {
		pos := valuePositions(m)
		slices.SortStableFunc(xs, func(a, b T) int { return pos[part(&a).Key] - pos[part(&b).Key] })
		return
	}
	byStart := func(a, b T) int { return part(&a).Start.Compare(part(&b).Start) }
	if !slices.IsSortedFunc(xs, byStart) {
		slices.SortStableFunc(xs, byStart)
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
	for _, r := range p.runs {
		out[r.Reason] += r.N
	}
	if p.nBlocked > 0 {
		out[ReasonBlocked] = p.nBlocked
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
		case cur != ParseMarks(rec.Watermark).Query:
			return ReasonRefresh, fmt.Sprintf("the source's watermark moved from %q to %q", ParseMarks(rec.Watermark).Query, cur)
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
	recorded := ParseMarks(rec.Watermark).Query
	switch {
	case !ok:
		return ReasonLookback, "inside the late-data lookback window"
	case recorded == "":
		return ReasonWatermark, fmt.Sprintf("no watermark recorded yet; the source's is %q", cur)
	case cur != recorded:
		return ReasonWatermark, fmt.Sprintf("the source's watermark moved from %q to %q", recorded, cur)
	}
	return "", ""
}
