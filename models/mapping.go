package models

import "time"

// Span is the part of an upstream model that one downstream partition reads.
type Span struct {
	// All means every partition of the upstream model: list-partitioned and
	// whole-table models, on either side, depend on everything they read.
	All bool
	// Otherwise the downstream partition reads the upstream partitions whose
	// extents (Model.Extent) overlap the half-open range [Start, End) of
	// instants.
	Start, End time.Time
	// Windows: both models' partitions are dates of one time zone, which
	// name the same days however a query compares them, so windows are
	// compared, not extents.
	Windows bool
}

// Overlaps reports whether partition p of model up lies in s.
func (s Span) Overlaps(up *Model, p Partition) bool {
	if s.All || up.Kind() != TimePartitioned {
		return true
	}
	start, end := up.Extent(p)
	if s.Windows {
		start, end = p.Start, p.End
	}
	return start.Before(s.End) && end.After(s.Start)
}

// sameDates reports whether down and up both have date windows of one time
// zone other than UTC: a date names the same local day in both, so the
// dependency is by window, with no extent (see Model.Extent).
func sameDates(down, up *Model) bool {
	return down.localDates() && up.localDates() && down.Config.Location.String() == up.Config.Location.String()
}

// ExtentPad bounds how far a partition's extent (Model.Extent) reaches
// beyond its window.
const ExtentPad = 26 * time.Hour

// Extent returns the instants partition p of m covers when models depend
// on each other: its window, except for date windows in a time zone. The
// partition column of such a model holds local calendar dates, and a DATE
// literal compared with another model's column may be read as that local
// day or as the same date in UTC; the extent covers both, so a dependency
// is never missed whichever way a query compares dates. (The window that
// is rendered, verified, replaced and recorded is the local day.)
func (m *Model) Extent(p Partition) (start, end time.Time) {
	start, end = p.Start, p.End
	if !m.localDates() {
		return start, end
	}
	if s := utcDate(p.Start.In(m.Config.Location)); s.Before(start) {
		start = s
	}
	if e := utcDate(p.End.In(m.Config.Location)); e.After(end) {
		end = e
	}
	return start, end
}

// localDates reports whether m's windows are dates of a zone other than UTC.
func (m *Model) localDates() bool {
	return m.Kind() == TimePartitioned && !m.Config.TimestampWindow && m.Config.Location != time.UTC
}

// utcDate returns midnight UTC of t's calendar date in t's location.
func utcDate(t time.Time) time.Time {
	y, mo, d := t.Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
}

// DependencySpan returns the partitions of up that partition p of down
// depends on. Time-partitioned models depend on each other by overlapping
// extents, whatever their grains: a monthly model on every day of its
// month, a daily model on the month containing its day. depends_on_past: n
// widens the span back by n of down's partitions, for rolling models.
func DependencySpan(down *Model, p Partition, up *Model) Span {
	if down.Kind() != TimePartitioned || up.Kind() != TimePartitioned {
		return Span{All: true}
	}
	first := p
	if n := down.DependsOnPast(up); n > 0 {
		first = down.Next(p, -n)
	}
	if sameDates(down, up) {
		return Span{Start: first.Start, End: p.End, Windows: true}
	}
	start, _ := down.Extent(first)
	_, end := down.Extent(p)
	return Span{Start: start, End: end}
}

// ReadPartitions returns the partitions of up that partition p of down
// reads, from up's start through the partition containing last (an instant;
// zero means no limit, which only list and whole-table upstreams allow).
// For a time-partitioned up and a list or whole-table down, that is every
// partition of up through last.
func ReadPartitions(down *Model, p Partition, up *Model, last time.Time) []Partition {
	if up.Kind() != TimePartitioned {
		return up.Partitions(time.Time{}, time.Time{})
	}
	span := DependencySpan(down, p, up)
	if span.All {
		if last.IsZero() {
			return nil
		}
		return up.Partitions(up.Config.Start, last)
	}
	// Extents reach at most a day beyond windows; look that far around.
	from, to := span.Start.Add(-26*time.Hour), span.End.Add(26*time.Hour)
	if !last.IsZero() && to.After(last) {
		to = last
	}
	var out []Partition
	for _, q := range up.Partitions(from, to) {
		if span.Overlaps(up, q) {
			out = append(out, q)
		}
	}
	return out
}

// Dependents returns the partitions of down that depend on partition u of
// up, as the half-open range of their starts [from, to). all is true when
// every partition of down depends on u.
func Dependents(down, up *Model, u Partition) (from, to time.Time, all bool) {
	if down.Kind() != TimePartitioned || up.Kind() != TimePartitioned {
		return time.Time{}, time.Time{}, true
	}
	uStart, uEnd := up.Extent(u)
	if sameDates(down, up) {
		uStart, uEnd = u.Start, u.End
	}
	// The first partition whose span ends after u starts: spans move
	// forward with their partitions, so step back from the one holding
	// u's start while the previous one still reaches u.
	q := down.PartitionAt(uStart)
	for {
		prev := down.Next(q, -1)
		if !DependencySpan(down, prev, up).End.After(uStart) {
			break
		}
		q = prev
	}
	for !DependencySpan(down, q, up).End.After(uStart) {
		q = down.Next(q, 1)
	}
	from = q.Start
	for DependencySpan(down, q, up).Start.Before(uEnd) {
		q = down.Next(q, 1)
	}
	return from, q.Start, false
}
