package models

import "time"

// Span is the part of an upstream model that one downstream partition reads.
type Span struct {
	// All means every partition of the upstream model: list-partitioned and
	// whole-table models, on either side, depend on everything they read.
	All bool
	// Otherwise the downstream partition reads the upstream partitions that
	// overlap the half-open window [Start, End), in UTC.
	Start, End time.Time
}

// Overlaps reports whether upstream partition p lies in s.
func (s Span) Overlaps(p Partition) bool {
	if s.All || p.Start.IsZero() {
		return true
	}
	return p.Start.Before(s.End) && p.End.After(s.Start)
}

// DependencySpan returns the partitions of up that partition p of down
// depends on. Time-partitioned models depend on each other by overlapping
// windows, whatever their grains: a monthly model on every day of its
// month, a daily model on the month containing its day. depends_on_past: n
// widens the window back by n of down's partitions, for rolling models.
func DependencySpan(down *Model, p Partition, up *Model) Span {
	if down.Kind() != TimePartitioned || up.Kind() != TimePartitioned {
		return Span{All: true}
	}
	start := p.Start
	if n := down.DependsOnPast(up); n > 0 {
		start = down.Next(p, -n).Start
	}
	return Span{Start: start, End: p.End}
}

// Dependents returns the partitions of down that depend on partition u of
// up, as the half-open range of their starts [from, to). all is true when
// every partition of down depends on u.
func Dependents(down, up *Model, u Partition) (from, to time.Time, all bool) {
	if down.Kind() != TimePartitioned || up.Kind() != TimePartitioned {
		return time.Time{}, time.Time{}, true
	}
	q := down.PartitionAt(u.Start)
	from = q.Start
	for DependencySpan(down, q, up).Start.Before(u.End) {
		q = down.Next(q, 1)
	}
	return from, q.Start, false
}
