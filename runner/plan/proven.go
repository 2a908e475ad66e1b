package plan

import (
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// A plan over years of history reads the ledger in two steps when the
// adapter can summarize it (adapters.LedgerSummarizer). First it reads one
// summary per model and bucket: a calendar month, or a calendar year for
// windows before last year, with the current month cut at today (see
// buckets). A bucket whose summary proves every partition
// of the model in it done, built by the current version, and built after
// every upstream partition it reads was last published needs no record:
// the plan starts each model at its proven bound, the first bucket it cannot prove
// so, and reads only the records that partitions from there on, and the
// partitions that reading them may reach, look at. A model with records
// outside its start..end (not yet removed) has steps anywhere: the records
// of what reads it are read whole. An hourly run with
// nothing to do reads O(models × (years + months)) summary rows and the
// records of the last day or so, not every record.

// never is the proven bound of a model none of whose partitions need a look.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// summariesApply reports whether sel can plan from the summaries: modes and resumes
// that look at every partition cannot.
func summariesApply(sel Selection) bool {
	return sel.Mode != ModeAll && sel.Since.IsZero() && len(sel.Partitions) == 0 && !sel.FullRefresh
}

// provenPlan is what planProven decides.
type provenPlan struct {
	// proven holds, per time-partitioned model, the instant before which
	// every partition is proven done and up to date (zero: none is).
	proven map[string]time.Time
	query  adapters.RecordQuery
}

// planProven decides each model's proven bound from the ledger's summaries and
// the records the plan must read. tables and rebuild are the facts read
// before it (drift, schema changes); the records of the models in whole
// are read whole.
func planProven(p *models.Project, scope *models.Scope, sel Selection, sums []adapters.RecordSummary,
	tables map[string]*TableFacts, rebuild map[string]string, whole map[string]bool) provenPlan {
	byModel := map[string][]adapters.RecordSummary{}
	for _, s := range sums {
		byModel[s.Model] = append(byModel[s.Model], s)
	}
	f := &prover{sel: sel, buckets: buckets(p, sel.Now), scope: scope, sums: byModel, tables: tables, rebuild: rebuild,
		proven: map[*models.Model]time.Time{}, low: map[*models.Model]time.Time{}, may: map[*models.Model]bool{},
		refreshOnly: map[*models.Model]bool{}}
	// Proven bounds and how far back steps may reach, upstream first.
	for _, m := range p.Graph.Order {
		if m.Kind() != models.TimePartitioned {
			f.may[m] = !f.quiet(m)
			for _, up := range m.Upstream {
				f.may[m] = f.may[m] || f.may[up]
			}
			if !f.may[m] && f.refreshes(m) {
				// It runs by its refresh rule alone: what it reads was not
				// republished since it was built, so the upstream
				// partitions before their proven bounds are built, and
				// their records need no reading.
				f.may[m], f.refreshOnly[m] = true, true
			}
			continue
		}
		proven := f.timeProven(m)
		for key := range lookbackKeys(m, sel) {
			if part, err := m.Partition(key); err == nil && part.Start.Before(proven) {
				proven = part.Start
			}
		}
		// A model selected with a leading + runs what its readers'
		// candidates read: the partitions of m that read an upstream
		// partition from the upstream's proven bound on stay candidates.
		for _, up := range m.Upstream {
			if uf, ok := f.proven[up]; ok && uf.Before(never) {
				if l := reading(m, uf); l.Before(proven) {
					proven = l
				}
			}
			// Every partition of m reads the whole of a whole-table or
			// list upstream, which is a candidate of a leading + only if
			// m has one: when the upstream may run, m's last complete
			// partition stays one.
			if up.Kind() != models.TimePartitioned && f.may[up] {
				if last, complete := m.LastComplete(sel.Now); complete && last.Before(proven) {
					proven = last
				}
			}
		}
		if proven.Before(m.Config.Start) {
			proven = time.Time{}
		}
		f.proven[m] = proven
		low := proven
		if f.outside(m) {
			// Its partitions outside start..end are removed (a step each),
			// wherever they lie, and what read them is rebuilt.
			low = time.Time{}
		}
		for _, up := range m.Upstream {
			switch {
			case !f.may[up]:
			case up.Kind() != models.TimePartitioned || f.low[up].IsZero():
				low = time.Time{}
			default:
				if l := reading(m, f.low[up]); l.Before(low) {
					low = l
				}
			}
		}
		f.low[m], f.may[m] = low, low.Before(never)
	}
	// What each model's records must cover: its own partitions from its
	// low on (and the one before, which audits and cumulative models
	// read), and what the partitions of its readers from their low on read.
	out := provenPlan{proven: map[string]time.Time{}, query: adapters.RecordQuery{Since: map[string]time.Time{}}}
	for _, x := range p.Graph.Order {
		if x.Kind() != models.TimePartitioned {
			out.query.All = append(out.query.All, x.Name)
			continue
		}
		if f.proven[x].After(x.Config.Start) {
			// A proven bound at the start (an empty ledger's) proves nothing.
			out.proven[x.Name] = f.proven[x]
		}
		from := never
		if f.may[x] {
			// From the partition before the first that may run: audits
			// and models reading their own past look at it.
			from = x.Next(x.PartitionAt(f.low[x]), -1).Start
		}
		for _, d := range p.Graph.Downstream(x) {
			if !f.may[d] || f.refreshOnly[d] {
				continue
			}
			if d.Kind() != models.TimePartitioned || f.low[d].IsZero() {
				from = time.Time{}
				break
			}
			// A partition of d starting at low reads x's partitions from
			// the one holding its span's start, an extent (and the pad
			// ReadPartitions looks around) before its window.
			reach := time.Duration(d.DependsOnPast(x))*maxLen(d.Config.Grain) + 2*models.ExtentPad
			if l := x.PartitionAt(f.low[d].Add(-reach)).Start; l.Before(from) {
				from = l
			}
		}
		switch {
		case from.IsZero() || !from.After(x.Config.Start) || whole[x.Name] || f.outside(x):
			out.query.All = append(out.query.All, x.Name)
		case from.Before(never):
			out.query.Since[x.Name] = from
		}
	}
	return out
}

// summaryQuery asks for the summaries of every model of p, with the
// dependencies that pair up on windows (see aligned).
func summaryQuery(p *models.Project, now time.Time) adapters.SummaryQuery {
	q := buckets(p, now)
	for _, m := range p.Graph.Order {
		q.Models = append(q.Models, m.Name)
		if m.Config.Self {
			q.Self = append(q.Self, m.Name)
		}
		for _, up := range m.Upstream {
			if g, ok := paired(m, up); ok {
				q.Edges = append(q.Edges, adapters.Edge{Down: m.Name, Up: up.Name, Grain: g})
			}
		}
	}
	return q
}

// paired reports whether the ledger's summaries count the records of down
// that read a record of up published after them (adapters.Edge): when the
// two are aligned on a grain the warehouse truncates to
// (models.Dialect.DateTrunc; not a fiscal year).
func paired(down, up *models.Model) (models.Grain, bool) {
	g, ok := aligned(down, up)
	return g, ok && !g.IsFiscal()
}

// aligned reports whether each partition of down reads exactly the
// partitions of up whose windows fall in the same period of the coarser of
// their grains, and returns that grain: both have UTC windows, one grain
// divides the other, and down does not read up's past.
func aligned(down, up *models.Model) (models.Grain, bool) {
	utc := func(m *models.Model) bool {
		return m.Kind() == models.TimePartitioned && (m.Config.Location == nil || m.Config.Location == time.UTC)
	}
	if !utc(down) || !utc(up) || down == up || down.DependsOnPast(up) > 0 {
		return 0, false
	}
	g, h := down.Config.Grain, up.Config.Grain
	if g < h {
		g, h = h, g
	}
	if !h.Divides(g) {
		return 0, false // weeks do not divide months, nor calendar years fiscal ones
	}
	return g, true
}

type prover struct {
	sel     Selection
	buckets adapters.SummaryQuery // its Yearly and Recent: the summaries' buckets
	scope   *models.Scope
	sums    map[string][]adapters.RecordSummary
	tables  map[string]*TableFacts
	rebuild map[string]string
	proven  map[*models.Model]time.Time
	// low is, per time-partitioned model, the earliest instant a partition
	// this plan may run can start at, through what reads what.
	low map[*models.Model]time.Time
	// may says whether a model may have steps at all.
	may map[*models.Model]bool
	// refreshOnly holds the list and whole-table models that may run by
	// their refresh rule alone (see refreshes).
	refreshOnly map[*models.Model]bool
}

// suspect reports whether m's records cannot be summarized: its table
// drifted from the ledger, or it is rebuilt.
func (f *prover) suspect(m *models.Model) bool {
	if tf := f.tables[m.Name]; tf != nil && (!tf.Exists || tf.Rows != nil) {
		return true
	}
	return f.rebuild[m.Name] != ""
}

// clean reports whether summary s proves its records done, built by m's
// current version, with n of them.
func (f *prover) clean(m *models.Model, s *adapters.RecordSummary, n int64) bool {
	fp := m.Version(f.scope).Fingerprint
	return s != nil && s.Records == n && s.Done == n && s.MinFingerprint == fp && s.MaxFingerprint == fp &&
		(!m.Config.Self || s.SelfStale == 0)
}

// refreshes reports whether a scheduled run may rebuild m, a list or
// whole-table model, by its refresh rule alone.
func (f *prover) refreshes(m *models.Model) bool {
	return f.sel.Scheduled() && f.sel.Mode == ModeDefault && m.RefreshRule().Mode != models.RefreshNever
}

// outside reports whether m's summaries have records not removed in
// buckets outside its start..end: partitions a run removes
// (planner.removals), which the plan must read, and whose readers it
// rebuilds.
func (f *prover) outside(m *models.Model) bool {
	first := f.bucketOf(m.Config.Start)
	for _, s := range f.sums[m.Name] {
		if s.Records > s.Removed && (s.Bucket.Before(first) || !m.Config.End.IsZero() && !s.Bucket.Before(m.Config.End)) {
			return true
		}
	}
	// A bucket holding start (or end) may hold records outside too: more
	// than the partitions there.
	if s := f.bucket(m, first); s != nil && s.Records-s.Removed > countStarts(m, m.PartitionAt(m.Config.Start).Start, never, first, f.bucketEnd(first)) {
		return true
	}
	if !m.Config.End.IsZero() {
		last := f.bucketOf(m.Config.End.Add(-time.Nanosecond))
		if s := f.bucket(m, last); s != nil && s.Records-s.Removed > countStarts(m, m.PartitionAt(m.Config.Start).Start, m.Config.End, last, f.bucketEnd(last)) {
			return true
		}
	}
	return false
}

// bucket returns m's summary of the bucket starting at b, or nil.
func (f *prover) bucket(m *models.Model, b time.Time) *adapters.RecordSummary {
	for i := range f.sums[m.Name] {
		if f.sums[m.Name][i].Bucket.Equal(b) {
			return &f.sums[m.Name][i]
		}
	}
	return nil
}

// quiet reports whether a list or whole-table model has nothing to do but,
// maybe, a refresh (refreshes).
func (f *prover) quiet(m *models.Model) bool {
	if f.suspect(m) {
		return false
	}
	var s *adapters.RecordSummary
	for i := range f.sums[m.Name] {
		if f.sums[m.Name][i].Bucket.IsZero() {
			s = &f.sums[m.Name][i]
		}
	}
	if !f.clean(m, s, int64(len(m.Partitions(time.Time{}, time.Time{})))) {
		return false
	}
	for _, up := range m.Upstream {
		if f.published(up, time.Time{}, time.Time{}).After(s.MinStarted) {
			return false
		}
	}
	return true
}

// timeProven returns the start of m's first bucket (month, or year; see
// adapters.SummaryQuery) that its summaries do not prove done and up to
// date; never when there is none.
func (f *prover) timeProven(m *models.Model) time.Time {
	last, complete := m.LastComplete(f.sel.Now)
	if f.suspect(m) || !complete {
		return time.Time{}
	}
	byBucket := map[time.Time]*adapters.RecordSummary{}
	for i, s := range f.sums[m.Name] {
		byBucket[s.Bucket] = &f.sums[m.Name][i]
	}
	// The dependencies whose freshness Stale does not count.
	var unpaired []*models.Model
	for _, up := range m.Upstream {
		if _, ok := paired(m, up); !ok {
			unpaired = append(unpaired, up)
		}
	}
	first := m.PartitionAt(m.Config.Start).Start
	lastPart := m.PartitionAt(last)
	end := m.Next(lastPart, 1).Start // the first partition not complete yet
	bucket := f.bucketOf(first)
	for ; bucket.Before(end); bucket = f.bucketEnd(bucket) {
		next := f.bucketEnd(bucket)
		if end.Before(next) {
			return bucket // the bucket holds partitions not complete yet
		}
		n := countStarts(m, first, end, bucket, next)
		s := byBucket[bucket]
		if n == 0 && s == nil {
			continue
		}
		if !f.clean(m, s, n) || s.Stale > 0 {
			return bucket
		}
		if len(unpaired) == 0 {
			continue
		}
		// The spans of m's partitions starting in this bucket.
		firstIn, lastIn := startingIn(m, bucket, next)
		_, hi := m.Extent(lastIn)
		for _, up := range unpaired {
			// Every upstream partition these spans may read was
			// published before the first of them started.
			lo, _ := m.Extent(m.Next(firstIn, -m.DependsOnPast(up)))
			if f.published(up, lo, hi).After(s.MinStarted) {
				return bucket
			}
		}
	}
	return never
}

// published returns the latest publication of up's partitions whose
// extents may overlap [lo, hi); of all of them when hi is zero or up is
// not time-partitioned.
func (f *prover) published(up *models.Model, lo, hi time.Time) time.Time {
	var latest time.Time
	for _, s := range f.sums[up.Name] {
		if !hi.IsZero() && up.Kind() == models.TimePartitioned && !s.Bucket.IsZero() {
			first, last := startingIn(up, s.Bucket, f.bucketEnd(s.Bucket))
			start, _ := up.Extent(first)
			_, end := up.Extent(last)
			if !start.Before(hi) || !end.After(lo) {
				continue
			}
		}
		if s.MaxPublished.After(latest) {
			latest = s.MaxPublished
		}
	}
	return latest
}

// startingIn returns m's first and last partitions starting in [from, to),
// a bucket; for a yearly model with no partition starting in a month, both
// are the partition holding from.
func startingIn(m *models.Model, from, to time.Time) (first, last models.Partition) {
	first = m.PartitionAt(from)
	if first.Start.Before(from) {
		if next := m.Next(first, 1); next.Start.Before(to) {
			first = next
		}
	}
	last = m.PartitionAt(to.Add(-time.Nanosecond))
	if last.Start.Before(first.Start) {
		last = first
	}
	return first, last
}

// reading returns the start of m's first partition whose span reaches
// past instant t of an upstream (a zone's dates reach past UTC windows).
func reading(m *models.Model, t time.Time) time.Time {
	if t.IsZero() || !t.After(m.Config.Start) {
		return time.Time{}
	}
	p := m.PartitionAt(t.Add(-models.ExtentPad))
	for {
		if _, end := m.Extent(p); end.After(t) {
			return p.Start
		}
		p = m.Next(p, 1)
	}
}

// bucketOf returns the first instant of the summaries' bucket holding t.
func (f *prover) bucketOf(t time.Time) time.Time { return f.buckets.Bucket(t) }

// bucketEnd returns the end of the summaries' bucket starting at b.
func (f *prover) bucketEnd(b time.Time) time.Time { return f.buckets.BucketEnd(b) }

// buckets returns the bucketing of a plan of p at now's summaries (the
// Yearly and Recent of an adapters.SummaryQuery). Windows before the
// first day of the year before now's are summarized by year, later ones
// by month, and the current month is cut at the start of the day holding
// now less the longest delay of p's models: every partition before that
// day may be complete, and so proven done by its summary, with none of
// its records read. (Uncut, a plan late in a month reads the month's
// records of every model.)
func buckets(p *models.Project, now time.Time) adapters.SummaryQuery {
	now = now.UTC()
	q := adapters.SummaryQuery{Yearly: time.Date(now.Year()-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	var delay time.Duration
	for _, m := range p.Models {
		if m.Kind() == models.TimePartitioned && m.Config.Delay > delay {
			delay = m.Config.Delay
		}
	}
	recent := now.Add(-delay)
	if recent = time.Date(recent.Year(), recent.Month(), recent.Day(), 0, 0, 0, 0, time.UTC); !recent.Before(q.Yearly) {
		q.Recent = recent
	}
	return q
}

// countStarts counts m's partitions from the one starting at first up to
// (not including) the one starting at end whose starts fall in [from, to).
func countStarts(m *models.Model, first, end, from, to time.Time) int64 {
	if from.Before(first) {
		from = first
	}
	if end.Before(to) {
		to = end
	}
	if !from.Before(to) {
		return 0
	}
	g, loc := m.Config.Grain, m.Config.Location
	if g == models.Hour || g == models.Day && (loc == nil || loc == time.UTC) {
		// Fixed lengths aligned on first: count the starts arithmetically.
		step := maxLen(g)
		if g == models.Day {
			step = 24 * time.Hour
		}
		firstIn := (from.Sub(first) + step - 1) / step
		lastIn := (to.Sub(first) + step - 1) / step
		return int64(lastIn - firstIn)
	}
	var n int64
	for s := g.Truncate(from, loc); s.Before(to); s = g.Add(s, 1) {
		if !s.Before(from) {
			n++
		}
	}
	return n
}

// maxLen bounds the length of one partition of grain g.
func maxLen(g models.Grain) time.Duration {
	switch g {
	case models.Hour:
		return time.Hour
	case models.Day:
		return 25 * time.Hour
	case models.Week, models.SundayWeek:
		return 7*24*time.Hour + time.Hour
	case models.Month:
		return 31*24*time.Hour + time.Hour
	}
	return 371*24*time.Hour + time.Hour // a fiscal year of 53 weeks
}
