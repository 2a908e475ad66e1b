package models

import (
	"fmt"
	"time"
)

// Kind says how a model is partitioned.
type Kind int

// The ways a model may be partitioned.
const (
	WholeTable      Kind = iota // no partition_by: the table is rebuilt as a whole
	TimePartitioned             // partition_by and grain
	ListPartitioned             // partition_by and values
)

func (k Kind) String() string {
	switch k {
	case TimePartitioned:
		return "time"
	case ListPartitioned:
		return "list"
	}
	return "table"
}

// WholeTableKey is the partition key of a model without partition_by.
const WholeTableKey = "all"

// Partition is one unit refill computes, verifies and swaps: a time window,
// a list value, or the whole table.
type Partition struct {
	// Key names the partition: 2024-01-02T13, 2024-01-02, 2024-W01,
	// 2024-01, 2024, a list value, or "all" for a whole-table model.
	Key string
	// Start and End bound a time partition's half-open window, in UTC.
	// Both are zero for list and whole-table partitions.
	Start, End time.Time
	// Value is a list partition's value as written in the model's config.
	Value any
}

// Kind returns m's partitioning.
func (m *Model) Kind() Kind {
	switch {
	case m.Config.Grain != 0:
		return TimePartitioned
	case m.Config.Values != nil:
		return ListPartitioned
	}
	return WholeTable
}

// partitionFrom returns the time partition starting at start (a period start
// in the model's location).
func (m *Model) partitionFrom(start time.Time) Partition {
	g := m.Config.Grain
	return Partition{Key: g.Key(start), Start: start.UTC(), End: g.Add(start, 1).UTC()}
}

// PartitionAt returns the time partition containing instant t.
func (m *Model) PartitionAt(t time.Time) Partition {
	return m.partitionFrom(m.Config.Grain.Truncate(t, m.Config.Location))
}

// Next returns the time partition n partitions after p (n may be negative).
func (m *Model) Next(p Partition, n int) Partition {
	start := p.Start.In(m.Config.Location)
	return m.partitionFrom(m.Config.Grain.Add(start, n))
}

// Partition returns the partition of m named key.
func (m *Model) Partition(key string) (Partition, error) {
	switch m.Kind() {
	case TimePartitioned:
		start, err := m.Config.Grain.ParseKey(key, m.Config.Location)
		if err != nil {
			return Partition{}, err
		}
		return m.partitionFrom(start), nil
	case ListPartitioned:
		for _, v := range m.Config.Values {
			if fmt.Sprint(v) == key {
				return Partition{Key: key, Value: v}, nil
			}
		}
		return Partition{}, fmt.Errorf("%q is not one of %s's values %v", key, m.Name, m.Config.Values)
	}
	if key != WholeTableKey {
		return Partition{}, fmt.Errorf("%s is not partitioned: its only partition is %q", m.Name, WholeTableKey)
	}
	return Partition{Key: WholeTableKey}, nil
}

// Partitions returns m's partitions from the one containing instant first
// through the one containing instant last, never before the model's start.
// List and whole-table models return all their partitions whatever the range.
func (m *Model) Partitions(first, last time.Time) []Partition {
	switch m.Kind() {
	case ListPartitioned:
		out := make([]Partition, len(m.Config.Values))
		for i, v := range m.Config.Values {
			out[i] = Partition{Key: fmt.Sprint(v), Value: v}
		}
		return out
	case WholeTable:
		return []Partition{{Key: WholeTableKey}}
	}
	if first.Before(m.Config.Start) {
		first = m.Config.Start
	}
	if !m.Config.End.IsZero() && !last.Before(m.Config.End) {
		last = m.Config.End.Add(-time.Nanosecond)
	}
	var out []Partition
	g, loc := m.Config.Grain, m.Config.Location
	if (g == Hour || g == Day) && last.After(first) {
		n := last.Sub(first) / time.Hour
		if g == Day {
			n /= 24
		}
		out = make([]Partition, 0, n+2)
	}
	for s := g.Truncate(first, loc); !s.After(last); s = g.Add(s, 1) {
		out = append(out, m.partitionFrom(s))
	}
	return out
}

// LastComplete returns the instant inside m's last partition whose window
// has fully passed at now, allowing for the model's delay; with
// allow_partial it is the partition containing now. ok is false when no
// partition is complete yet.
func (m *Model) LastComplete(now time.Time) (last time.Time, ok bool) {
	if m.Kind() != TimePartitioned {
		return time.Time{}, true
	}
	cutoff := now.Add(-m.Config.Delay)
	p := m.PartitionAt(cutoff)
	if !m.Config.AllowPartial && p.End.After(cutoff) {
		p = m.Next(p, -1)
	}
	if end := m.Config.End; !end.IsZero() && p.End.After(end) {
		p = m.PartitionAt(end.Add(-time.Nanosecond)) // the model ends before now
	}
	if p.End.Before(m.Config.Start) || p.Start.Before(m.Config.Start) {
		return time.Time{}, false
	}
	return p.Start, true
}

// KeyRange names the partitions from first to last, keys: first..last, or
// first alone when they are the same.
func KeyRange(first, last string) string {
	if first == last {
		return first
	}
	return first + ".." + last
}

// AsOf names horizon h of m, a whole-table or list model (the end of the
// upstream time it read; see runner.Step.Horizon), by the partition key of
// its finest time-partitioned upstream holding the last instant before h:
// "2024-04-30" for a horizon of 1 May over daily models. "" when h is zero
// or m reads no time-partitioned model.
func (m *Model) AsOf(h time.Time) string {
	if h.IsZero() {
		return ""
	}
	var finest *Model
	for _, up := range m.Upstream {
		if up.Kind() == TimePartitioned && (finest == nil || up.Config.Grain < finest.Config.Grain) {
			finest = up
		}
	}
	if finest == nil {
		return ""
	}
	return finest.PartitionAt(h.Add(-time.Nanosecond)).Key
}

// RefreshRule returns when a scheduled run rebuilds m, a whole-table or
// list model, though it is done: its refresh: setting; else watermark
// when it declares a watermark query, always when it reads a source()
// (which refill does not track), and never otherwise. Time-partitioned
// models have none (lookback reruns their recent partitions).
func (m *Model) RefreshRule() Refresh {
	switch {
	case m.Kind() == TimePartitioned:
		return Refresh{Mode: RefreshNever}
	case m.Config.Refresh.Mode != "":
		return m.Config.Refresh
	case m.ReadsSources():
		return Refresh{Mode: RefreshAlways}
	}
	return Refresh{Mode: RefreshNever}
}

// ReadsSources reports whether m's SQL reads a table through source().
func (m *Model) ReadsSources() bool {
	return m.SQL != nil && len(m.SQL.Source) > 0
}
