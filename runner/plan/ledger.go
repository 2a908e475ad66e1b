package plan

import (
	"sort"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// ledger indexes the ledger's records for planning.
type ledger struct {
	byModel map[string]*modelRecords
}

type modelRecords struct {
	byKey map[string]*adapters.Record
	// timed holds the records with a window, sorted by window start, for
	// finding the upstream partitions a span overlaps.
	timed []*adapters.Record
}

func indexLedger(records []adapters.Record) *ledger {
	l := &ledger{byModel: map[string]*modelRecords{}}
	for i := range records {
		r := &records[i]
		mr := l.byModel[r.Model]
		if mr == nil {
			mr = &modelRecords{byKey: map[string]*adapters.Record{}}
			l.byModel[r.Model] = mr
		}
		mr.byKey[r.Partition] = r
		if !r.WindowStart.IsZero() {
			mr.timed = append(mr.timed, r)
		}
	}
	for _, mr := range l.byModel {
		sort.Slice(mr.timed, func(i, j int) bool { return mr.timed[i].WindowStart.Before(mr.timed[j].WindowStart) })
	}
	return l
}

func (l *ledger) record(model, key string) *adapters.Record {
	if mr := l.byModel[model]; mr != nil {
		return mr.byKey[key]
	}
	return nil
}

// sorted returns the model's records in window order, then key order.
func (mr *modelRecords) sorted() []*adapters.Record {
	out := make([]*adapters.Record, 0, len(mr.byKey))
	for _, r := range mr.byKey {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].WindowStart.Equal(out[j].WindowStart) {
			return out[i].WindowStart.Before(out[j].WindowStart)
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// latestHeld returns the record of the time partition of model that
// starts last among those whose rows the table may hold (published, or
// pending, or failed after an earlier publication); nil when none.
func (l *ledger) latestHeld(model string) *adapters.Record {
	mr := l.byModel[model]
	if mr == nil {
		return nil
	}
	for i := len(mr.timed) - 1; i >= 0; i-- {
		if r := mr.timed[i]; r.State.Published() || r.State == adapters.RecordPending || !r.PublishedAt.IsZero() {
			return r
		}
	}
	return nil
}

// lastPublished returns the latest publication among up's partitions that
// span covers, and which partition it was. Pending records count: their
// publication may have happened.
func (l *ledger) lastPublished(up *models.Model, span models.Span) (time.Time, string) {
	mr := l.byModel[up.Name]
	if mr == nil {
		return time.Time{}, ""
	}
	var latest time.Time
	var key string
	if span.All || up.Kind() != models.TimePartitioned {
		for k, r := range mr.byKey {
			// Ties go to the greatest key, so that plans say the same.
			if r.PublishedAt.After(latest) || r.PublishedAt.Equal(latest) && !latest.IsZero() && k > key {
				latest, key = r.PublishedAt, k
			}
		}
		return latest, key
	}
	// Records whose extents may overlap the span start no earlier than a
	// pad before it; windows of one model do not overlap, so starts and
	// ends sort together.
	from := span.Start.Add(-models.ExtentPad)
	i := sort.Search(len(mr.timed), func(i int) bool { return mr.timed[i].WindowEnd.After(from) })
	for ; i < len(mr.timed) && mr.timed[i].WindowStart.Before(span.End.Add(models.ExtentPad)); i++ {
		r := mr.timed[i]
		if !r.PublishedAt.After(latest) {
			continue
		}
		if span.Overlaps(up, models.Partition{Start: r.WindowStart, End: r.WindowEnd}) {
			latest, key = r.PublishedAt, r.Partition
		}
	}
	return latest, key
}

// Record returns the ledger's record of model's partition key as the plan
// read it (its proven bounds aside: see Facts.Proven); nil when it has none.
func (p *Plan) Record(model, key string) *adapters.Record {
	if p == nil || p.ledger == nil {
		return nil
	}
	return p.ledger.record(model, key)
}
