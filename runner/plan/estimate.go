package plan

import (
	"context"
	"errors"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// ErrNoEstimates is returned when the adapter cannot estimate queries.
var ErrNoEstimates = errors.New("this warehouse gives no estimates")

// ModelEstimate is how much one model's planned partitions read.
type ModelEstimate struct {
	Model   *models.Model
	Steps   int
	Rows    int64 // -1 when unknown
	Bytes   int64 // -1 when unknown
	Note    string
	Queries int // EXPLAINs made
}

// maxEstimates caps the EXPLAINs per model; beyond it the figure is
// extrapolated from the partitions estimated.
const maxEstimates = 12

// Estimate asks the warehouse how much each model's planned steps read. A
// run of adjacent partitions is estimated as one batch statement; models
// whose SQL uses partition are estimated partition by partition. A model
// the warehouse cannot estimate (its upstream table does not exist yet)
// gets -1 and the reason in Note.
func (r *Reader) Estimate(ctx context.Context, plan *Plan) ([]ModelEstimate, error) {
	est, ok := r.Adapter.(adapters.Estimator)
	if !ok {
		return nil, ErrNoEstimates
	}
	byModel := map[*models.Model][]Step{}
	for s := range plan.AllSteps() {
		byModel[s.Model] = append(byModel[s.Model], s)
	}
	var out []ModelEstimate
	for _, m := range plan.Models {
		steps := byModel[m]
		if len(steps) == 0 {
			continue
		}
		me := ModelEstimate{Model: m, Steps: len(steps), Rows: 0, Bytes: 0}
		var groups [][]models.Partition
		for _, s := range steps {
			n := len(groups)
			if n > 0 && !m.SQL.UsesPartition && m.Kind() == models.TimePartitioned && groups[n-1][len(groups[n-1])-1].End.Equal(s.Partition.Start) {
				groups[n-1] = append(groups[n-1], s.Partition)
				continue
			}
			groups = append(groups, []models.Partition{s.Partition})
		}
		covered := 0
		for _, g := range groups {
			if me.Queries == maxEstimates {
				break
			}
			sql, err := m.Render(r.Scope, g...)
			if err != nil {
				return nil, err
			}
			e, err := est.Estimate(ctx, sql)
			if err != nil {
				// Typically an upstream table this plan has yet to create.
				me.Rows, me.Bytes, me.Note = -1, -1, "unknown: "+firstLine(err.Error())
				covered = len(steps)
				break
			}
			me.Queries++
			covered += len(g)
			me.Note = e.Note
			me.Rows = addKnown(me.Rows, e.Rows)
			me.Bytes = addKnown(me.Bytes, e.Bytes)
		}
		if covered < len(steps) && covered > 0 {
			scale := float64(len(steps)) / float64(covered)
			if me.Rows > 0 {
				me.Rows = int64(float64(me.Rows) * scale)
			}
			if me.Bytes > 0 {
				me.Bytes = int64(float64(me.Bytes) * scale)
			}
			me.Note += "; extrapolated from the partitions estimated"
		}
		out = append(out, me)
	}
	return out, nil
}

func addKnown(total, v int64) int64 {
	if total < 0 || v < 0 {
		return -1
	}
	return total + v
}
