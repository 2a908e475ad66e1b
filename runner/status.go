package runner

import (
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
			if as.record != nil && m.Kind() != models.TimePartitioned {
				ps.Horizon = as.record.WindowEnd
			}
			ms.Partitions = append(ms.Partitions, ps)
			ms.Counts[as.state]++
		}
		out = append(out, ms)
	}
	return out, nil
}
