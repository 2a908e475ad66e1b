package plan

import (
	"iter"
	"slices"
	"sort"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// cands are a model's candidate partitions: those a plan looks at. A
// time-partitioned model's are stretches of consecutive partitions, so
// that ten years of days cost as little as one; a list or whole-table
// model's are listed.
type cands struct {
	spans []span             // time-partitioned: sorted, disjoint
	parts []models.Partition // list and whole-table, in the model's order
}

// span holds the partitions of a time-partitioned model whose windows lie
// in [start, end); both are partition boundaries.
type span struct{ start, end time.Time }

// empty reports whether c holds no partition.
func (c cands) empty() bool { return len(c.spans) == 0 && len(c.parts) == 0 }

// all yields c's partitions of m, in order.
func (c cands) all(m *models.Model) iter.Seq[models.Partition] {
	return func(yield func(models.Partition) bool) {
		for _, p := range c.parts {
			if !yield(p) {
				return
			}
		}
		for _, s := range c.spans {
			for p := m.PartitionAt(s.start); p.Start.Before(s.end); p = m.Next(p, 1) {
				if !yield(p) {
					return
				}
			}
		}
	}
}

// partitions returns c's partitions of m, in order.
func (c cands) partitions(m *models.Model) []models.Partition {
	return slices.Collect(c.all(m))
}

// contains reports whether c holds partition p.
func (c cands) contains(p models.Partition) bool {
	if p.Start.IsZero() {
		return slices.ContainsFunc(c.parts, func(q models.Partition) bool { return q.Key == p.Key })
	}
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].end.After(p.Start) })
	return i < len(c.spans) && !c.spans[i].start.After(p.Start)
}

// after drops c's partitions that start before t.
func (c cands) after(m *models.Model, t time.Time) cands {
	var out []span
	for _, s := range c.spans {
		switch {
		case !s.end.After(t):
		case s.start.Before(t):
			// t may fall inside a partition: keep those starting at or
			// after it.
			if p := m.PartitionAt(t); p.Start.Before(t) {
				t = p.End
			}
			if t.Before(s.end) {
				out = append(out, span{t, s.end})
			}
		default:
			out = append(out, s)
		}
	}
	c.spans = out
	return c
}

// candsOf returns the candidates of m holding parts, which are sorted.
func candsOf(m *models.Model, parts []models.Partition) cands {
	if m.Kind() != models.TimePartitioned {
		return cands{parts: parts}
	}
	var c cands
	for _, p := range parts {
		if n := len(c.spans); n > 0 && !c.spans[n-1].end.Before(p.Start) {
			c.spans[n-1].end = latest(c.spans[n-1].end, p.End)
			continue
		}
		c.spans = append(c.spans, span{p.Start, p.End})
	}
	return c
}

// between returns the partitions of time-partitioned m from the one
// holding instant first through the one holding instant last, within the
// model's start and end, as m.Partitions does.
func between(m *models.Model, first, last time.Time) cands {
	if first.Before(m.Config.Start) {
		first = m.Config.Start
	}
	if !m.Config.End.IsZero() && !last.Before(m.Config.End) {
		last = m.Config.End.Add(-time.Nanosecond)
	}
	start := m.PartitionAt(first).Start
	if start.After(last) {
		return cands{}
	}
	return cands{spans: []span{{start, m.PartitionAt(last).End}}}
}

// countBetween returns how many partitions of time-partitioned m lie in
// [start, end), two partition boundaries.
func countBetween(m *models.Model, start, end time.Time) int {
	g, loc := m.Config.Grain, m.Config.Location
	switch {
	case !start.Before(end):
		return 0
	case g == models.Hour: // hours are UTC-aligned
		return int(end.Sub(start) / time.Hour)
	case g == models.Day && (loc == nil || loc == time.UTC):
		return int(end.Sub(start) / (24 * time.Hour))
	}
	n := 0
	for s := start.In(loc); s.Before(end); s = g.Add(s, 1) {
		n++
	}
	return n
}

// segment is a stretch of a model's candidates that a plan decides alike:
// one partition the ledger has a record of (rec), or consecutive
// partitions it has none of.
type segment struct {
	first, last models.Partition
	n           int
	rec         *adapters.Record
}

// segments yields m's candidates as segments, in order.
func (pl *planner) segments(m *models.Model) iter.Seq[segment] {
	return func(yield func(segment) bool) {
		c := pl.cands[m]
		for _, p := range c.parts {
			if !yield(segment{first: p, last: p, n: 1, rec: pl.a.ledger.record(m.Name, p.Key)}) {
				return
			}
		}
		if len(c.spans) == 0 {
			return
		}
		if pl.onePerPartition {
			for _, s := range c.spans {
				for p := m.PartitionAt(s.start); p.Start.Before(s.end); p = m.Next(p, 1) {
					if !yield(segment{first: p, last: p, n: 1, rec: pl.a.ledger.record(m.Name, p.Key)}) {
						return
					}
				}
			}
			return
		}
		recorded := pl.recorded(m)
		gap := func(a, b time.Time) segment {
			return segment{first: m.PartitionAt(a), last: m.PartitionAt(b.Add(-time.Nanosecond)), n: countBetween(m, a, b)}
		}
		for _, s := range c.spans {
			t := s.start
			i := sort.Search(len(recorded), func(i int) bool { return !recorded[i].p.Start.Before(t) })
			for ; i < len(recorded) && recorded[i].p.Start.Before(s.end); i++ {
				rp := recorded[i]
				if t.Before(rp.p.Start) && !yield(gap(t, rp.p.Start)) {
					return
				}
				if !yield(segment{first: rp.p, last: rp.p, n: 1, rec: rp.rec}) {
					return
				}
				t = rp.p.End
			}
			if t.Before(s.end) && !yield(gap(t, s.end)) {
				return
			}
		}
	}
}

// recordedPartition is a partition of a time-partitioned model and the
// ledger's record of it.
type recordedPartition struct {
	p   models.Partition
	rec *adapters.Record
}

// recorded returns the partitions of time-partitioned m that the ledger
// has a record of by their key, sorted by start. A record whose key is
// not a partition of m as it is now (its grain or time zone changed) is
// no candidate's.
func (pl *planner) recorded(m *models.Model) []recordedPartition {
	if out, ok := pl.recordedBy[m]; ok {
		return out
	}
	mr := pl.a.ledger.byModel[m.Name]
	var out []recordedPartition
	if mr != nil {
		out = make([]recordedPartition, 0, len(mr.byKey))
		seen := 0
		for _, r := range mr.timed {
			if mr.byKey[r.Partition] != r {
				continue // an older record of the same partition
			}
			seen++
			if p := m.PartitionAt(r.WindowStart); p.Key == r.Partition {
				out = append(out, recordedPartition{p, r})
			} else if p, err := m.Partition(r.Partition); err == nil && p.Key == r.Partition {
				out = append(out, recordedPartition{p, r})
			}
		}
		if seen < len(mr.byKey) {
			// Records without a window.
			for key, r := range mr.byKey {
				if !r.WindowStart.IsZero() {
					continue
				}
				if p, err := m.Partition(key); err == nil && p.Key == key {
					out = append(out, recordedPartition{p, r})
				}
			}
		}
		byStart := func(a, b recordedPartition) int { return a.p.Start.Compare(b.p.Start) }
		if !slices.IsSortedFunc(out, byStart) {
			slices.SortFunc(out, byStart)
		}
	}
	if pl.recordedBy == nil {
		pl.recordedBy = map[*models.Model][]recordedPartition{}
	}
	pl.recordedBy[m] = out
	return out
}
