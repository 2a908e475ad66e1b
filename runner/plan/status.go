package plan

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// PartitionStatus is one partition's state against the ledger.
type PartitionStatus struct {
	Partition models.Partition
	State     State
	Detail    string           // why it is stale or failed
	Record    *adapters.Record // nil when missing
	// Horizon, for a whole-table or list partition built from
	// time-partitioned models, is the end of the upstream time its rows
	// were computed from (Step.Horizon); zero otherwise.
	Horizon time.Time
}

// ModelStatus is the state of every partition of a model in range.
type ModelStatus struct {
	Model      *models.Model
	Partitions []PartitionStatus
	Counts     map[State]int
}

// NewStatus reports the state of every partition sel covers. Modes and
// lookback do not apply: status shows everything in range.
func NewStatus(p *models.Project, scope *models.Scope, records []adapters.Record, sel Selection) ([]ModelStatus, error) {
	return NewStatusFacts(p, scope, Facts{Records: records}, sel)
}

// NewStatusFacts is NewStatus with what the warehouse said of the tables
// (Runner.Facts), so that drift shows.
func NewStatusFacts(p *models.Project, scope *models.Scope, facts Facts, sel Selection) ([]ModelStatus, error) {
	if err := sel.validate(); err != nil {
		return nil, err
	}
	selected, err := p.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	a := &assessor{scope: scope, ledger: indexLedger(facts.Records), tables: facts.Tables, now: sel.Now}
	// A partition is done only if a plan would not run it: one whose own
	// record is up to date but that reads what a run would rewrite first
	// (transitively) is stale too. The plan takes neither lookback nor
	// refresh rules, which are policies, not staleness.
	rewrites, err := staleThroughUpstream(p, scope, facts, sel)
	if err != nil {
		return nil, err
	}
	var out []ModelStatus
	for _, m := range selected {
		parts, _, err := sel.rangeFor(m)
		if err != nil {
			return nil, err
		}
		ms := ModelStatus{Model: m, Counts: map[State]int{}}
		for _, part := range parts {
			as, err := a.assess(m, part)
			if err != nil {
				return nil, err
			}
			ps := PartitionStatus{Partition: part, State: as.state, Detail: as.detail, Record: as.record}
			if why, ok := rewrites[m.Name+" "+part.Key]; ok && as.state == StateDone {
				ps.State, ps.Detail = StateStale, why
			}
			if as.record != nil && m.Kind() != models.TimePartitioned {
				ps.Horizon = as.record.WindowEnd
			}
			ms.Partitions = append(ms.Partitions, ps)
			ms.Counts[ps.State]++
		}
		// Built partitions outside the model's start..end, which the
		// next run deletes.
		if mr := a.ledger.byModel[m.Name]; mr != nil && m.Kind() == models.TimePartitioned {
			for _, r := range mr.timed {
				if r.State != adapters.RecordRemoved && outside(m, r) {
					part := models.Partition{Key: r.Partition, Start: r.WindowStart, End: r.WindowEnd}
					ms.Partitions = append(ms.Partitions, PartitionStatus{Partition: part, State: StateOutside, Detail: outsideDetail(m), Record: r})
					ms.Counts[StateOutside]++
				}
			}
			sortStatus(ms.Partitions)
		}
		out = append(out, ms)
	}
	return out, nil
}

// staleThroughUpstream returns, by "model key", the partitions a plan of
// sel (default mode, no lookback) would run only because they read what it
// rewrites first, with why.
func staleThroughUpstream(p *models.Project, scope *models.Scope, facts Facts, sel Selection) (map[string]string, error) {
	sel.Mode, sel.AllowMissingUpstream, sel.FullRefresh, sel.Since = ModeDefault, false, false, time.Time{}
	none := 0
	sel.Lookback = &none
	facts.Proven = nil // every record was read
	out := map[string]string{}
	plan, err := NewPlanFacts(p, scope, facts, sel)
	if errors.Is(err, ErrUsage) {
		return out, nil // nothing the selection names to plan (status says so itself)
	}
	if err != nil {
		return nil, err
	}
	for _, st := range append(plan.Steps(), plan.Blocked()...) {
		if st.Conditional || st.Reason == ReasonRefresh {
			continue
		}
		why := strings.Replace(st.Detail, "which this run rewrites", "which the next run rewrites first", 1)
		out[st.Model.Name+" "+st.Partition.Key] = why
	}
	return out, nil
}

// sortStatus orders partitions by window start (a list's as listed).
func sortStatus(ps []PartitionStatus) {
	slices.SortStableFunc(ps, func(a, b PartitionStatus) int { return a.Partition.Start.Compare(b.Partition.Start) })
}
