package runner

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
	// maxPublished is the latest PublishedAt of any record.
	maxPublished time.Time
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
		if r.PublishedAt.After(mr.maxPublished) {
			mr.maxPublished = r.PublishedAt
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

// lastPublished returns the latest publication among up's partitions that
// span covers, and which partition it was.
func (l *ledger) lastPublished(up *models.Model, span models.Span) (time.Time, string) {
	mr := l.byModel[up.Name]
	if mr == nil {
		return time.Time{}, ""
	}
	var latest time.Time
	var key string
	if span.All || up.Kind() != models.TimePartitioned {
		for k, r := range mr.byKey {
			if r.PublishedAt.After(latest) {
				latest, key = r.PublishedAt, k
			}
		}
		return latest, key
	}
	// The first record that may overlap ends after span.Start; windows of
	// one model do not overlap, so starts and ends sort together.
	i := sort.Search(len(mr.timed), func(i int) bool { return mr.timed[i].WindowEnd.After(span.Start) })
	for ; i < len(mr.timed) && mr.timed[i].WindowStart.Before(span.End); i++ {
		if r := mr.timed[i]; r.PublishedAt.After(latest) {
			latest, key = r.PublishedAt, r.Partition
		}
	}
	return latest, key
}
