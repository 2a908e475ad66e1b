package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Finding changed source days. A model that reads a source declared with a
// time_column (models.Source) records, with each partition it builds, a
// fingerprint of the source rows inside the partition's window: their
// count and an order-independent hash of the rows, or, where the source
// declares loaded_at, their count and the latest load time. A scheduled
// run fingerprints the source again, in one grouped scan per source, and
// reruns exactly the partitions whose fingerprint moved, anywhere in the
// source's tracked history: rows that arrived late, were deleted, or were
// updated in place.
//
// The scan groups rows by a coarse bucket of the time column (the date
// itself, or the hour of a timestamp) and the buckets are mapped to
// partitions in Go, as CountPartitions does. A partition's fingerprint
// sums the buckets its window overlaps; a bucket that straddles two
// partitions (zones whose offset is not a whole number of hours) counts
// in both, so that a change in it reruns both. Hashes add up modulo 2^64,
// so a partition's hash does not depend on how its rows fall into buckets.

// Marks is what a ledger record keeps in its watermark column: the
// fingerprints of the tracked sources the partition read when it was
// built, the value of the model's watermark query, and the fingerprint of
// its own rows. Without sources or content it is stored as the query's
// value alone, as before sources were tracked.
type Marks struct {
	Sources map[string]string `json:"sources"`
	Query   string            `json:"query,omitempty"`
	// Content is the partition's content fingerprint when it was published
	// (ContentPrint), for a model with content_hash:.
	Content string `json:"content,omitempty"`
}

// ParseMarks reads a record's watermark column.
func ParseMarks(s string) Marks {
	if strings.HasPrefix(s, `{"sources":`) {
		var m Marks
		if json.Unmarshal([]byte(s), &m) == nil {
			return m
		}
	}
	return Marks{Query: s}
}

// String renders m for the watermark column.
func (m Marks) String() string {
	if len(m.Sources) == 0 && m.Content == "" {
		return m.Query
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // strings only
	}
	return string(b)
}

// Print is a source's fingerprint in one partition's window.
type Print struct {
	Rows   int64
	Hash   uint64 // the sum of the rows' hashes, modulo 2^64 (no loaded_at)
	Loaded Loaded // the latest loaded_at (with loaded_at)
	loaded bool
}

// Loaded is a value of a source's loaded_at column as text that sorts as
// the values do: "t" and a UTC time of fixed width for timestamps and
// dates, "n" and a zero-padded number for integers, "s" and the text
// otherwise; "" for none.
type Loaded string

const loadedLayout = "2006-01-02T15:04:05.000000000Z"

// LoadedOf reads a driver's value of a loaded_at column.
func LoadedOf(v any) Loaded {
	switch v := adapters.Normalize(v).(type) {
	case nil:
		return ""
	case time.Time:
		return Loaded("t" + v.UTC().Format(loadedLayout))
	case int64:
		return Loaded(fmt.Sprintf("n%020d", v))
	default:
		return Loaded("s" + fmt.Sprint(v))
	}
}

// String renders l for messages.
func (l Loaded) String() string {
	if l == "" {
		return "none"
	}
	switch l[0] {
	case 'n':
		if n := strings.TrimLeft(string(l[1:]), "0"); n != "" {
			return n
		}
		return "0"
	case 't':
		if t, err := time.Parse(loadedLayout, string(l[1:])); err == nil {
			return t.Format("2006-01-02 15:04:05.999999999")
		}
	}
	return string(l[1:])
}

// literal renders l as a SQL literal of dialect d.
func (l Loaded) literal(d models.Dialect) string {
	switch l[0] {
	case 't':
		t, err := time.Parse(loadedLayout, string(l[1:]))
		if err == nil {
			return d.Timestamp(t)
		}
	case 'n':
		if n, err := strconv.ParseInt(string(l[1:]), 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	}
	return d.QuoteString(string(l[1:]))
}

// String renders p as the ledger keeps it.
func (p Print) String() string {
	if p.loaded {
		return fmt.Sprintf("%d@%s", p.Rows, string(p.Loaded))
	}
	return fmt.Sprintf("%d:%016x", p.Rows, p.Hash)
}

// parsePrint reads a Print from its String form.
func parsePrint(s string) (Print, bool) {
	if n, loaded, ok := strings.Cut(s, "@"); ok {
		rows, err := strconv.ParseInt(n, 10, 64)
		return Print{Rows: rows, Loaded: Loaded(loaded), loaded: true}, err == nil
	}
	n, h, ok := strings.Cut(s, ":")
	rows, err := strconv.ParseInt(n, 10, 64)
	hash, herr := strconv.ParseUint(h, 16, 64)
	return Print{Rows: rows, Hash: hash}, ok && err == nil && herr == nil
}

// add sums q into p.
func (p *Print) add(q Print) {
	p.Rows += q.Rows
	p.Hash += q.Hash
	p.Loaded = max(p.Loaded, q.Loaded)
}

// SourceChange says how a source's rows in a partition's window changed
// since the partition was built, in words; "" when they did not.
func SourceChange(source, then, now string) string {
	if then == now {
		return ""
	}
	if then == "" {
		return fmt.Sprintf("%s: no fingerprint of its rows was recorded when the partition was built", source)
	}
	a, aok := parsePrint(then)
	b, bok := parsePrint(now)
	switch {
	case !aok || !bok || a.loaded != b.loaded:
		return fmt.Sprintf("%s: its rows were fingerprinted differently when the partition was built (loaded_at changed)", source)
	case a.Rows != b.Rows:
		return fmt.Sprintf("%s: %s when built, %d now", source, Plural(int(a.Rows), "row"), b.Rows)
	case a.loaded:
		return fmt.Sprintf("%s: rows loaded since it was built (latest loaded_at %s, was %s)", source, b.Loaded, a.Loaded)
	}
	return fmt.Sprintf("%s: rows changed in place (%s then and now, different content)", source, Plural(int(a.Rows), "row"))
}

// bucket is one group of a source scan: rows whose time column falls in
// one date or hour.
type bucket struct {
	lo, hi time.Time // the earliest and latest time value
	date   bool      // the time column holds dates
	print  Print
}

// SourceScan is one grouped scan of a source's rows, by a coarse bucket of
// its time column, which ScanSource returns and Prints maps onto a model's
// partitions.
type SourceScan struct {
	Source  *models.Source
	buckets []bucket
	// Latest is the latest loaded_at the scan read, for a source with
	// loaded_at; "" when it read no rows.
	Latest Loaded
}

// ScanSource fingerprints the rows of src whose time column lies in
// [from, to), a zero bound being open, in one statement. With since (a
// Loaded value, for a source with loaded_at), it reads only the rows
// loaded after it.
func ScanSource(ctx context.Context, a adapters.Adapter, scope *models.Scope, src *models.Source, from, to time.Time, since Loaded, tag adapters.Tag) (*SourceScan, error) {
	return scanSource(ctx, a, scope, src, from, to, since, nil, tag)
}

// stretch is a stretch of time, [from, to).
type stretch struct{ from, to time.Time }

// scanSource is ScanSource; with within, it reads only the rows in those
// spans (each moved out to its buckets' edges).
func scanSource(ctx context.Context, a adapters.Adapter, scope *models.Scope, src *models.Source, from, to time.Time, since Loaded, within []stretch, tag adapters.Tag) (*SourceScan, error) {
	d := a.Dialect()
	rel, err := scope.SourceRelation(src.Name)
	if err != nil {
		return nil, err
	}
	tag.Step = "fingerprint"
	cols, err := a.Describe(ctx, "SELECT * FROM "+rel.Quote(d), tag)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of source %s: %w", src.Name, err)
	}
	var timeType string
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = d.QuoteIdent(c.Name)
		if strings.EqualFold(c.Name, src.TimeColumn) {
			timeType = c.Type
		}
	}
	if timeType == "" {
		return nil, fmt.Errorf("source %s has no column %s (its time_column in %s line %d)", src.Name, src.TimeColumn, models.ProjectFile, src.Line)
	}
	col := d.QuoteIdent(src.TimeColumn)
	date := adapters.IsDateType(timeType)
	group, lit := d.DateTrunc(models.Hour, col), d.Timestamp
	if date {
		group, lit = col, d.Date
	}
	var where []string
	// A bucket is read whole: bounds move out to the bucket's edges, and
	// one bucket further, for zones whose day starts off the hour.
	if !from.IsZero() {
		where = append(where, fmt.Sprintf("%s >= %s", col, lit(edge(from, date, -1))))
	}
	if !to.IsZero() {
		where = append(where, fmt.Sprintf("%s < %s", col, lit(edge(to, date, 1))))
	}
	if len(within) > 0 {
		var or []string
		for _, sp := range within {
			or = append(or, fmt.Sprintf("%s >= %s AND %s < %s", col, lit(edge(sp.from, date, -1)), col, lit(edge(sp.to, date, 1))))
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	what := d.CastString(d.HashRows(names))
	if src.LoadedAt != "" {
		what = "max(" + d.QuoteIdent(src.LoadedAt) + ")"
		if since != "" {
			// From the last check's latest on: rows loaded in the same
			// instant as it, but after the check, are read again.
			where = append(where, fmt.Sprintf("%s >= %s", d.QuoteIdent(src.LoadedAt), since.literal(d)))
		}
	}
	q := fmt.Sprintf("SELECT min(%s) AS refill_lo, max(%s) AS refill_hi, count(*) AS refill_n, %s AS refill_print FROM %s%s GROUP BY %s",
		col, col, what, rel.Quote(d), whereClause(strings.Join(where, " AND ")), group)
	res, err := a.Query(ctx, q, tag)
	if err != nil {
		return nil, fmt.Errorf("fingerprinting source %s: %w", src.Name, err)
	}
	s := &SourceScan{Source: src}
	for _, row := range res.Rows {
		lo, lok := adapters.Normalize(row[0]).(time.Time)
		hi, hok := adapters.Normalize(row[1]).(time.Time)
		if !lok || !hok {
			continue // NULL times: in no partition
		}
		b := bucket{lo: lo, hi: hi, date: date, print: Print{Rows: adapters.Int(row[2])}}
		if src.LoadedAt != "" {
			b.print.Loaded, b.print.loaded = LoadedOf(row[3]), true
			s.Latest = max(s.Latest, b.print.Loaded)
		} else if b.print.Hash, err = hashOf(row[3]); err != nil {
			return nil, fmt.Errorf("fingerprinting source %s: %w", src.Name, err)
		}
		s.buckets = append(s.buckets, b)
	}
	return s, nil
}

var mod64 = new(big.Int).Lsh(big.NewInt(1), 64)

// edge moves t out to the edge of its bucket and one bucket further in
// direction dir (-1 earlier, 1 later).
func edge(t time.Time, date bool, dir int) time.Time {
	if date {
		y, m, d := t.UTC().Date()
		return time.Date(y, m, d+dir, 0, 0, 0, 0, time.UTC)
	}
	return t.UTC().Truncate(time.Hour).Add(time.Duration(dir) * time.Hour)
}

// Prints returns the fingerprint of the scanned rows in each partition of
// m in want (every partition, when want is nil), by key. A partition with
// no rows has the fingerprint of none.
func (s *SourceScan) Prints(m *models.Model, want []models.Partition) map[string]string {
	sums := map[string]*Print{}
	zero := Print{loaded: s.Source.LoadedAt != ""}
	for _, p := range want {
		z := zero
		sums[p.Key] = &z
	}
	at := func(t time.Time, date bool) models.Partition {
		if date {
			y, mo, d := t.UTC().Date()
			t = time.Date(y, mo, d, 0, 0, 0, 0, m.Config.Location)
		}
		return m.PartitionAt(t)
	}
	for _, b := range s.buckets {
		last := at(b.hi, b.date)
		for p := at(b.lo, b.date); !p.Start.After(last.Start); p = m.Next(p, 1) {
			sum := sums[p.Key]
			if sum == nil {
				if want != nil {
					continue
				}
				z := zero
				sum = &z
				sums[p.Key] = sum
			}
			sum.add(b.print)
		}
	}
	out := make(map[string]string, len(sums))
	for k, p := range sums {
		out[k] = p.String()
	}
	return out
}

// SourceMarks fingerprints, for a unit of partitions of m about to be
// built, the rows of each source m tracks inside their windows: one scan
// per source. It returns nil when m tracks none.
func SourceMarks(ctx context.Context, a adapters.Adapter, p *models.Project, scope *models.Scope, m *models.Model, parts []models.Partition, tag adapters.Tag) ([]map[string]string, error) {
	sources := p.TrackedSources(m)
	if len(sources) == 0 || len(parts) == 0 {
		return nil, nil
	}
	out := make([]map[string]string, len(parts))
	from, to := parts[0].Start, parts[0].End
	for i, part := range parts {
		out[i] = map[string]string{}
		from, to = earliest(from, part.Start), latest(to, part.End)
	}
	for _, src := range sources {
		scan, err := ScanSource(ctx, a, scope, src, from, to, "", tag)
		if err != nil {
			return nil, err
		}
		prints := scan.Prints(m, parts)
		for i, part := range parts {
			out[i][src.Name] = prints[part.Key]
		}
	}
	return out, nil
}

// sourceFacts is what sourceChanges finds.
type sourceFacts struct {
	// changed says, by model and partition key, how the rows of the
	// tracked sources in a done partition's window changed since it was
	// built.
	changed map[string]map[string]string
	// checked is, by model and source with loaded_at, the latest
	// loaded_at the check read (Selection.Checked).
	checked map[string]map[string]Loaded
	// parts is, by model and source, the states of the source's physical
	// partitions the check read (Selection.Parts).
	parts map[string]map[string]map[string]string
}

// sourceChanges fingerprints, for a scheduled run of sel, the tracked
// sources of the selected models, one scan per source, and compares every
// done partition's recorded fingerprints with them.
//
// A source without loaded_at is scanned over its tracked history, and a
// partition reruns when its rows' count or hash moved. A source with
// loaded_at is scanned for the rows loaded after the latest loaded_at the
// last succeeded scheduled run of the same models read (none: the whole
// tracked history), and a partition reruns when rows of its window were
// loaded after those it read.
func (r *Reader) sourceChanges(ctx context.Context, sel Selection) (*sourceFacts, error) {
	selected, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	now := sel.Now
	if now.IsZero() {
		now = r.Now()
	}
	readers := map[*models.Source][]*models.Model{}
	var sources []*models.Source
	var tracked []string
	for _, m := range selected {
		if r.Defer != nil && r.Defer.Models[m.Name] {
			continue
		}
		srcs := r.Project.TrackedSources(m)
		for _, src := range srcs {
			if readers[src] == nil {
				sources = append(sources, src)
			}
			readers[src] = append(readers[src], m)
		}
		if len(srcs) > 0 {
			tracked = append(tracked, m.Name)
		}
	}
	if len(tracked) == 0 {
		return &sourceFacts{}, nil
	}
	records, err := r.Adapter.Partitions(ctx, tracked)
	if err != nil {
		return nil, err
	}
	byModel := map[string][]*adapters.Record{}
	for i := range records {
		if rec := &records[i]; rec.State == adapters.RecordDone {
			byModel[rec.Model] = append(byModel[rec.Model], rec)
		}
	}
	checked, priorParts, err := r.lastChecked(ctx, tracked)
	if err != nil {
		return nil, err
	}
	out := &sourceFacts{changed: map[string]map[string]string{}, checked: map[string]map[string]Loaded{},
		parts: map[string]map[string]map[string]string{}}
	note := func(m *models.Model, key, why string) {
		if out.changed[m.Name] == nil {
			out.changed[m.Name] = map[string]string{}
		}
		if prev := out.changed[m.Name][key]; prev != "" {
			why = prev + "; " + why
		}
		out.changed[m.Name][key] = why
	}
	for _, src := range sources {
		ms := readers[src]
		// The scan starts where the earliest tracked partition of a model
		// reading the source does.
		var from time.Time
		if src.Track > 0 {
			for i, m := range ms {
				if low := m.PartitionAt(now.Add(-src.Track)).Start; i == 0 || low.Before(from) {
					from = low
				}
			}
		}
		var since Loaded
		if src.LoadedAt != "" {
			// Rows loaded after what every reading model's last check read.
			for i, m := range ms {
				c := checked[m.Name][src.Name]
				if i == 0 || c < since {
					since = c
				}
			}
		}
		// Without loaded_at, the source's physical partitions whose state
		// has not moved since the last check prove their rows unchanged.
		var proof *partProof
		if src.LoadedAt == "" {
			if proof, err = r.partProof(ctx, src, ms, priorParts); err != nil {
				return nil, err
			}
			if proof != nil {
				for _, m := range ms {
					if out.parts[m.Name] == nil {
						out.parts[m.Name] = map[string]map[string]string{}
					}
					out.parts[m.Name][src.Name] = proof.now
				}
			}
		}
		var within []stretch
		if proof != nil && proof.prior {
			within = proof.rescan(ms, from)
		}
		scan := &SourceScan{Source: src}
		if proof == nil || !proof.prior || len(within) > 0 {
			if scan, err = scanSource(ctx, r.Adapter, r.Scope, src, from, time.Time{}, since, within, adapters.Tag{Model: ms[0].Name}); err != nil {
				return nil, err
			}
		}
		if src.LoadedAt != "" {
			latest := max(scan.Latest, since)
			for _, m := range ms {
				if out.checked[m.Name] == nil {
					out.checked[m.Name] = map[string]Loaded{}
				}
				out.checked[m.Name][src.Name] = latest
			}
		}
		none := Print{loaded: src.LoadedAt != ""}.String()
		for _, m := range ms {
			prints := scan.Prints(m, nil)
			var low time.Time
			if src.Track > 0 {
				low = m.PartitionAt(now.Add(-src.Track)).Start
			}
			for _, rec := range byModel[m.Name] {
				if rec.WindowStart.Before(low) {
					continue // older than the source's tracked history
				}
				then := ParseMarks(rec.Watermark).Sources[src.Name]
				if then != "" && proof != nil && proof.prior && !proof.touches(rec.WindowStart, rec.WindowEnd) {
					continue // in no physical partition that changed: proven
				}
				cur, ok := prints[rec.Partition]
				if src.LoadedAt != "" && then != "" && since != "" {
					// Only rows loaded since the last check were read: the
					// partition changed if some were loaded after its own.
					if ok && loadedAfter(cur, then) {
						note(m, rec.Partition, loadedChange(src.Name, then, cur))
					}
					continue
				}
				if !ok {
					cur = none
				}
				if why := SourceChange(src.Name, then, cur); why != "" {
					note(m, rec.Partition, why)
				}
			}
		}
	}
	return out, nil
}

// loadedChange says how rows loaded since the last check changed a
// partition whose rows' fingerprint was then.
func loadedChange(source, then, now string) string {
	a, _ := parsePrint(then)
	b, _ := parsePrint(now)
	return fmt.Sprintf("%s: %s loaded since it was built (latest loaded_at %s, was %s)", source, Plural(int(b.Rows), "row"), b.Loaded, a.Loaded)
}

// loadedAfter reports whether fingerprint now, of rows loaded since the
// last check, holds rows loaded after those of fingerprint then.
func loadedAfter(now, then string) bool {
	a, aok := parsePrint(then)
	b, bok := parsePrint(now)
	return !aok || !bok || !a.loaded || b.Loaded > a.Loaded
}

// lastChecked returns, by model and source, what the last succeeded run
// that checked the model's sources read (Selection.Checked and .Parts):
// the latest loaded_at, and the states of the physical partitions. The
// rows up to them are in what that run found and rebuilt. Runs that did
// not succeed may not have rebuilt what their check found.
func (r *Reader) lastChecked(ctx context.Context, names []string) (map[string]map[string]Loaded, map[string]map[string]map[string]string, error) {
	checked, parts := map[string]map[string]Loaded{}, map[string]map[string]map[string]string{}
	runs, err := r.Adapter.Runs(ctx, checkedRuns)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the runs: %w", err)
	}
	for _, run := range runs {
		if run.Status != adapters.RunSucceeded {
			continue
		}
		var sel Selection
		if json.Unmarshal([]byte(run.Selection), &sel) != nil {
			continue
		}
		for _, name := range names {
			if checked[name] == nil && sel.Checked[name] != nil {
				checked[name] = sel.Checked[name]
			}
			if parts[name] == nil && sel.Parts[name] != nil {
				parts[name] = sel.Parts[name]
			}
		}
	}
	return checked, parts, nil
}

// partProof is what a source's physical partitions prove (PartStater).
type partProof struct {
	now map[string]string // the states read now, by partition id
	// prior: every model reading the source was last checked with the
	// same states, so changed holds what moved since; otherwise nothing
	// is proven and the source is read whole.
	prior   bool
	changed []stretch // the ranges of the partitions whose state moved, appeared or went
}

// partProof reads the states of src's physical partitions, when the
// adapter keeps them, and compares them with those the last succeeded
// check of ms read (prior, by model).
func (r *Reader) partProof(ctx context.Context, src *models.Source, ms []*models.Model, prior map[string]map[string]map[string]string) (*partProof, error) {
	ps, ok := r.Adapter.(adapters.PartStater)
	if !ok {
		return nil, nil
	}
	rel, err := r.Scope.SourceRelation(src.Name)
	if err != nil {
		return nil, err
	}
	states, err := ps.PartStates(ctx, rel, src.TimeColumn)
	if err != nil || states == nil {
		return nil, err
	}
	p := &partProof{now: map[string]string{}}
	for _, st := range states {
		p.now[st.ID] = fmt.Sprintf("%s|%s|%s", st.State, st.Min.UTC().Format(time.RFC3339), st.Max.UTC().Format(time.RFC3339))
	}
	before := prior[ms[0].Name][src.Name]
	for _, m := range ms {
		if b := prior[m.Name][src.Name]; b == nil || !maps.Equal(b, before) {
			return p, nil
		}
	}
	p.prior = true
	moved := func(state string) {
		_, rest, _ := strings.Cut(state, "|")
		lo, hi, _ := strings.Cut(rest, "|")
		from, err1 := time.Parse(time.RFC3339, lo)
		to, err2 := time.Parse(time.RFC3339, hi)
		if err1 != nil || err2 != nil {
			p.prior = false // unreadable: prove nothing
			return
		}
		// Max is the greatest value held: the span ends after it, a day
		// after for dates (in any zone, the next day's bucket edge).
		p.changed = append(p.changed, stretch{from: from.Add(-24 * time.Hour), to: to.Add(24 * time.Hour)})
	}
	for id, st := range p.now {
		if before[id] != st {
			moved(st)
		}
	}
	for id, st := range before {
		if _, ok := p.now[id]; !ok {
			moved(st)
		}
	}
	return p, nil
}

// touches reports whether the window [start, end) meets a changed span.
func (p *partProof) touches(start, end time.Time) bool {
	for _, sp := range p.changed {
		if start.Before(sp.to) && sp.from.Before(end) {
			return true
		}
	}
	return false
}

// rescan returns the spans a check reads: the windows of the partitions
// of ms (from from on) that meet a changed span, whole.
func (p *partProof) rescan(ms []*models.Model, from time.Time) []stretch {
	var out []stretch
	for _, sp := range p.changed {
		lo, hi := sp.from, sp.to
		for _, m := range ms {
			lo = earliest(lo, m.PartitionAt(sp.from).Start)
			hi = latest(hi, m.PartitionAt(sp.to.Add(-time.Nanosecond)).End)
		}
		if !from.IsZero() && !hi.After(from) {
			continue
		}
		out = append(out, stretch{from: lo, to: hi})
	}
	return out
}

// checkedRuns is how many of the latest runs lastChecked reads: past them,
// a source is scanned over its whole tracked history again.
const checkedRuns = 200
