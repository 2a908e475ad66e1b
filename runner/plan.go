package runner

import (
	"fmt"
	"sort"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Step is one partition a plan runs.
type Step struct {
	Model     *models.Model
	Partition models.Partition
	Reason    Reason
	Detail    string           // a sentence on the reason, for people
	Record    *adapters.Record // the ledger's record; nil when missing
}

// Plan is what a run would do: the selected models and, in an order that
// respects dependencies, every partition that needs to run.
type Plan struct {
	Selection Selection
	Models    []*models.Model // selected, in graph order
	Steps     []Step
	Notes     []string // what the plan left out, and why

	ledger *ledger // the records the plan was made from, for Run's audits
}

// NewPlan computes the plan for sel from the project's models and the
// ledger's records. It does no I/O. Lookback partitions of models with a
// watermark query rerun unconditionally, as no watermark is known.
func NewPlan(p *models.Project, scope *models.Scope, records []adapters.Record, sel Selection) (*Plan, error) {
	return NewPlanWatermarks(p, scope, records, sel, nil)
}

// NewPlanWatermarks is NewPlan with the current watermarks of the lookback
// partitions (see Runner.Plan): a lookback partition of a model with a
// watermark query reruns only when its watermark differs from the one the
// ledger recorded when it was last published.
func NewPlanWatermarks(p *models.Project, scope *models.Scope, records []adapters.Record, sel Selection, wm Watermarks) (*Plan, error) {
	if err := sel.validate(); err != nil {
		return nil, err
	}
	selected, err := p.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if len(selected) == 0 {
		return nil, usageErrorf("the selection matches no model")
	}
	a := &assessor{scope: scope, ledger: indexLedger(records)}
	plan := &Plan{Selection: sel, Models: selected, ledger: a.ledger}
	isSelected := map[*models.Model]bool{}
	for _, m := range selected {
		isSelected[m] = true
	}
	planned := map[*models.Model][]Step{}
	matchedPartitions := len(sel.Partitions) == 0
	for _, m := range selected {
		parts, notes, err := sel.rangeFor(m)
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 {
			matchedPartitions = true
		}
		plan.Notes = append(plan.Notes, notes...)
		lookback := lookbackKeys(m, sel)
		steps := make([]Step, 0, len(parts))
		for _, part := range parts {
			as, err := a.assess(m, part)
			if err != nil {
				return nil, err
			}
			reason, detail := decide(sel, as)
			if reason == "" && lookback[part.Key] && as.state == StateDone {
				reason, detail = lookbackReason(m, part, as.record, wm)
			}
			if reason == "" {
				continue
			}
			steps = append(steps, Step{Model: m, Partition: part, Reason: reason, Detail: detail, Record: as.record})
		}
		planned[m] = steps
		if sel.Mode == ModeMissing || sel.Mode == ModeFailed {
			continue
		}
		// Rewriting an upstream partition makes the partitions built from
		// it stale: plan them too, so related tables agree afterwards.
		var keys map[string]bool // planned keys of m, built when first needed
		added := false
		for _, up := range m.Upstream {
			if !isSelected[up] || len(planned[up]) == 0 {
				continue
			}
			for _, part := range dependentPartitions(m, up, planned[up], a.ledger) {
				if keys == nil {
					keys = make(map[string]bool, len(planned[m]))
					for _, st := range planned[m] {
						keys[st.Partition.Key] = true
					}
				}
				if keys[part.Key] {
					continue
				}
				as, err := a.assess(m, part)
				if err != nil {
					return nil, err
				}
				if resumedDone(sel, as) {
					continue
				}
				keys[part.Key] = true
				added = true
				planned[m] = append(planned[m], Step{Model: m, Partition: part, Reason: ReasonUpstream, Record: as.record,
					Detail: fmt.Sprintf("reads %s, which this run rewrites", up.Name)})
			}
		}
		if added {
			sortSteps(planned[m])
		}
	}
	if !matchedPartitions {
		return nil, usageErrorf("--partitions %v matches no partition of the selected models", sel.Partitions)
	}
	total := 0
	for _, steps := range planned {
		total += len(steps)
	}
	plan.Steps = make([]Step, 0, total)
	for _, m := range selected {
		plan.Steps = append(plan.Steps, planned[m]...)
		plan.Notes = append(plan.Notes, missingUpstream(m, planned[m], isSelected, a.ledger)...)
	}
	return plan, nil
}

// missingUpstream notes upstream models outside the selection that have
// never built partitions m's planned steps read: m would compute from
// nothing there.
func missingUpstream(m *models.Model, steps []Step, isSelected map[*models.Model]bool, l *ledger) []string {
	var notes []string
	for _, up := range m.Upstream {
		if isSelected[up] || len(steps) == 0 {
			continue
		}
		missing := map[string]bool{}
		for _, st := range steps {
			span := models.DependencySpan(m, st.Partition, up)
			var parts []models.Partition
			switch {
			case up.Kind() != models.TimePartitioned:
				parts = up.Partitions(time.Time{}, time.Time{})
			case span.All:
				// Every partition the upstream ever had: judged by the ledger alone.
				if l.byModel[up.Name] == nil {
					missing["(all)"] = true
				}
			default:
				parts = up.Partitions(span.Start, span.End.Add(-time.Nanosecond))
			}
			for _, p := range parts {
				if l.record(up.Name, p.Key) == nil {
					missing[p.Key] = true
				}
			}
			if len(missing) > 1000 {
				break
			}
		}
		if len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("%s reads %s, which has %d unbuilt partition(s) in the windows this plan reads; select +%s to build them first",
				m.Name, up.Name, len(missing), m.Name))
		}
	}
	return notes
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
		if as.state == StateFailed {
			return ReasonFailed, as.detail
		}
		return "", ""
	}
	switch as.state {
	case StateMissing, StateFailed, StateStale:
		return as.reason, as.detail
	}
	return "", ""
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
// has a record of, that read any of up's planned steps.
func dependentPartitions(m, up *models.Model, upSteps []Step, l *ledger) []models.Partition {
	mr := l.byModel[m.Name]
	if mr == nil {
		return nil
	}
	var out []models.Partition
	seen := map[string]bool{}
	add := func(key string) {
		if seen[key] {
			return
		}
		seen[key] = true
		if p, err := m.Partition(key); err == nil && (m.Kind() != models.TimePartitioned || !p.Start.Before(m.Config.Start)) {
			out = append(out, p)
		}
	}
	for _, st := range upSteps {
		from, to, all := models.Dependents(m, up, st.Partition)
		if all {
			if m.Kind() == models.TimePartitioned {
				for _, r := range mr.timed {
					add(r.Partition)
				}
			} else {
				for _, p := range m.Partitions(time.Time{}, time.Time{}) {
					if mr.byKey[p.Key] != nil {
						add(p.Key)
					}
				}
			}
			break
		}
		i := sort.Search(len(mr.timed), func(i int) bool { return !mr.timed[i].WindowStart.Before(from) })
		for ; i < len(mr.timed) && mr.timed[i].WindowStart.Before(to); i++ {
			add(mr.timed[i].Partition)
		}
	}
	return out
}

func sortSteps(steps []Step) {
	sort.SliceStable(steps, func(i, j int) bool {
		a, b := steps[i].Partition, steps[j].Partition
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return false
	})
}

// Counts returns how many steps each reason has.
func (p *Plan) Counts() map[Reason]int {
	out := map[Reason]int{}
	for _, s := range p.Steps {
		out[s.Reason]++
	}
	return out
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
