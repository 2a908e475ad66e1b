package main

import (
	"errors"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/cmd/refill/internal/statuspage"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// statusHTML gathers what the status page shows beyond st: the runs, and
// which missing partitions a run would skip because what they read failed
// or is missing (the blocked steps of a plan of missing partitions, made
// from the same facts).
func (a *app) statusHTML(s *session, st []plan.ModelStatus, facts *plan.Facts, sel plan.Selection, runs []*adapters.Run, orphans []runner.Orphan) statuspage.Status {
	redacted := map[string]string{}
	in := statuspage.Status{Target: s.target.Name, Adapter: s.info.Name, Now: sel.Now, Models: st, Runs: runs, Orphans: orphans, Broken: s.project.Broken,
		Redact: func(text string) string {
			r, ok := redacted[text]
			if !ok {
				r = a.redact(text)
				redacted[text] = r
			}
			return r
		}}
	sel.Mode, sel.Lookback = plan.ModeMissing, nil
	pl, err := plan.NewPlanFacts(s.project, s.scope, *facts, sel)
	if err != nil {
		in.BlockedErr = err
		return in
	}
	in.Blocked = map[string]map[string]plan.Step{}
	for _, b := range pl.Blocked() {
		if in.Blocked[b.Model.Name] == nil {
			in.Blocked[b.Model.Name] = map[string]plan.Step{}
		}
		in.Blocked[b.Model.Name][b.Partition.Key] = b
	}
	return in
}

// changedSample is how many partitions of each changed model the status
// page diffs.
const changedSample = 3

// statusChanges diffs, for each selected model with partitions built by
// another version than its current one, a sample of those partitions.
// A model that cannot be diffed says why on the page.
func (a *app) statusChanges(s *session, st []plan.ModelStatus) ([]statuspage.ModelChange, error) {
	out := []statuspage.ModelChange{}
	for _, ms := range st {
		m := ms.Model
		fp := m.Version(s.scope).Fingerprint
		var parts []models.Partition
		for _, ps := range ms.Partitions {
			if r := ps.Record; r != nil && (r.State == adapters.RecordDone || r.State == adapters.RecordPartial) && r.Fingerprint != fp {
				parts = append(parts, ps.Partition)
			}
		}
		if len(parts) == 0 {
			continue
		}
		mc := statuspage.ModelChange{Model: m.Name, Stale: len(parts)}
		mc.Diffs, mc.Err = s.runner.DiffPartitions(a.ctx, m, parts, runner.DiffOptions{Examples: 1, Sample: changedSample})
		if errors.Is(mc.Err, runner.ErrNoDiff) {
			return nil, usageError{mc.Err}
		}
		out = append(out, mc)
	}
	return out, nil
}
