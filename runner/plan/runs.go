package plan

import (
	"iter"

	"github.com/refill/refill/models"
)

// Run is a stretch of a plan: N consecutive partitions of one
// time-partitioned model that the plan runs for the same reason, with the
// same detail and no ledger record (Step.Record) or blocker
// (Step.BlockedBy) of their own, or a single step of any model. The
// initial backfill of a daily model over ten years is one run, not 3,650
// steps: a plan holds runs, and makes their steps as they run or print.
type Run struct {
	// Step is the run's first step: every step of the run is this one
	// with another partition.
	Step
	// N is how many partitions the run holds (at least 1): Step.Partition
	// and the N-1 partitions after it.
	N int
	// Last is the run's last partition (Step.Partition when N is 1).
	Last models.Partition
}

// Steps yields the run's steps in order.
func (r Run) Steps() iter.Seq[Step] {
	return func(yield func(Step) bool) {
		st := r.Step
		for i := 0; i < r.N; i++ {
			if i > 0 {
				st.Partition = r.Model.Next(st.Partition, 1)
			}
			if !yield(st) {
				return
			}
		}
	}
}

// extends reports whether st is the partition right after r's last and
// is planned exactly as r's steps are, so that r can hold it too.
func (r *Run) extends(st *Step) bool {
	return r.Model == st.Model && r.Model.Kind() == models.TimePartitioned &&
		r.Record == nil && st.Record == nil && r.BlockedBy == nil && st.BlockedBy == nil &&
		r.Reason == st.Reason && r.Detail == st.Detail && r.Cause == st.Cause &&
		r.Conditional == st.Conditional && r.Horizon.Equal(st.Horizon) &&
		// Partitions of one model are aligned to its grain: the one
		// starting where the last ends is the next (Model.Next).
		r.Last.End.Equal(st.Partition.Start)
}

// appendStep adds st to runs, extending the last run when it can.
func appendStep(runs []Run, st Step) []Run {
	return appendRun(runs, Run{Step: st, N: 1, Last: st.Partition})
}

// appendRun adds r to runs, extending the last run when it can.
func appendRun(runs []Run, r Run) []Run {
	if n := len(runs); n > 0 && runs[n-1].extends(&r.Step) {
		runs[n-1].N += r.N
		runs[n-1].Last = r.Last
		return runs
	}
	return append(runs, r)
}

// sortRuns orders one model's runs: a time partition's by start, a list's
// as the model lists its values.
func sortRuns(runs []Run) {
	if len(runs) > 0 {
		sortByPartition(runs[0].Model, runs, func(r *Run) *models.Partition { return &r.Partition })
	}
}

// countSteps returns how many steps runs hold.
func countSteps(runs []Run) int {
	n := 0
	for i := range runs {
		n += runs[i].N
	}
	return n
}

// expand returns the steps runs hold, in order.
func expand(runs []Run) []Step {
	out := make([]Step, 0, countSteps(runs))
	for _, r := range runs {
		for st := range r.Steps() {
			out = append(out, st)
		}
	}
	return out
}

// each yields the steps runs hold, in order.
func each(runs []Run) iter.Seq[Step] {
	return func(yield func(Step) bool) {
		for _, r := range runs {
			for st := range r.Steps() {
				if !yield(st) {
					return
				}
			}
		}
	}
}

// Runs returns the plan's steps as runs, in plan order: model by model,
// upstream first, and each model's in partition order.
func (p *Plan) Runs() []Run { return p.runs }

// BlockedRuns returns the plan's blocked steps as runs, in plan order.
func (p *Plan) BlockedRuns() []Run { return p.blocked }

// Len returns how many partitions the plan runs (blocked ones aside).
func (p *Plan) Len() int { return p.nSteps }

// LenBlocked returns how many partitions the plan leaves blocked.
func (p *Plan) LenBlocked() int { return p.nBlocked }

// Steps returns every partition the plan runs, in an order that respects
// dependencies: one Step each, made from the plan's runs. A plan of
// millions of partitions is better read by Runs or AllSteps.
func (p *Plan) Steps() []Step { return expand(p.runs) }

// AllSteps yields every partition the plan runs, as Steps does, without
// holding them all.
func (p *Plan) AllSteps() iter.Seq[Step] { return each(p.runs) }

// Blocked returns the partitions that need to run but read upstream
// partitions that are missing, failed or blocked themselves, and that this
// plan does not build: running them would compute from data that is not
// there. Their Reason is ReasonBlocked and Detail names the upstream
// partition. Selection.AllowMissingUpstream runs them instead.
func (p *Plan) Blocked() []Step { return expand(p.blocked) }

// AllBlocked yields every blocked partition, as Blocked does, without
// holding them all.
func (p *Plan) AllBlocked() iter.Seq[Step] { return each(p.blocked) }

// addRuns adds runs to the plan's, blocked ones apart.
func (p *Plan) addRuns(runs []Run) {
	for _, r := range runs {
		if r.Reason == ReasonBlocked {
			p.blocked = appendRun(p.blocked, r)
			p.nBlocked += r.N
		} else {
			p.runs = appendRun(p.runs, r)
			p.nSteps += r.N
		}
	}
}
