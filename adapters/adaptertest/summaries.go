package adaptertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// testSummaries checks an adapters.LedgerSummarizer against summaries
// computed here, in Go, from the same records: buckets by month, by year
// and of a month cut in two (SummaryQuery.Recent), the latest record of a
// partition written twice, counts by state, fingerprints, rows, a
// cumulative model's records whose previous partition was republished
// after them, and records that read, through an edge of days, hours or
// weeks from Sunday, an upstream record published after them. Then
// QueryPartitions against the same records filtered here.
func testSummaries(t *testing.T, h *Harness) {
	ls, ok := h.A.(adapters.LedgerSummarizer)
	if !ok {
		t.Skip("the adapter does not summarize its ledger")
	}
	h.SetupLedger()
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	built := at("2023-03-01 00")
	rec := func(model string, start time.Time, g models.Grain, state adapters.RecordState, started, published time.Time) adapters.Record {
		end := g.Add(start, 1)
		key := start.Format("2006-01-02")
		if g == models.Hour {
			key = start.Format("2006-01-02T15")
		}
		return adapters.Record{Model: model, Partition: key, State: state, Fingerprint: "f-" + model, Rows: 3, RunID: "r1", Attempts: 1,
			WindowStart: start, WindowEnd: end, StartedAt: started, FinishedAt: started, PublishedAt: published}
	}
	var records []adapters.Record
	day := func(model string, from string, n int, edit func(i int, r *adapters.Record)) {
		for i := range n {
			r := rec(model, at(from+" 00").AddDate(0, 0, i), models.Day, adapters.RecordDone, built, built)
			if edit != nil {
				edit(i, &r)
			}
			records = append(records, r)
		}
	}
	// d: daily, across the year's boundary and into February, one of each
	// state; the first record is written twice below.
	day("d", "2022-12-30", 6, func(i int, r *adapters.Record) {
		switch i {
		case 1:
			r.State, r.Rows = adapters.RecordFailed, 5
		case 2:
			r.State, r.PublishedAt = adapters.RecordPending, built.Add(time.Hour)
		case 3:
			r.State, r.Fingerprint = adapters.RecordPartial, "f-old"
		case 4:
			r.StartedAt = built.Add(-48 * time.Hour) // before its upstream hour was republished
		case 5:
			r.State, r.Rows = adapters.RecordRemoved, 0
		}
	})
	day("d", "2023-02-10", 2, nil)
	// u: hourly, upstream of d (days); one hour republished after d's
	// 2023-01-03 started.
	for i := range 6 {
		r := rec("u", at("2023-01-02 22").Add(time.Duration(i)*time.Hour), models.Hour, adapters.RecordDone, built.Add(-72*time.Hour), built.Add(-72*time.Hour))
		if i == 3 {
			r.PublishedAt = built.Add(-24 * time.Hour)
		}
		records = append(records, r)
	}
	// c: cumulative; 2023-01-03's previous day republished after it was
	// built, 2023-01-05's with it (together).
	day("c", "2023-01-01", 5, func(i int, r *adapters.Record) {
		switch i {
		case 1:
			r.PublishedAt = built.Add(2 * time.Hour)
		case 3:
			r.PublishedAt = built.Add(3 * time.Hour)
		case 4:
			r.PublishedAt = built.Add(3 * time.Hour)
		}
	})
	// w: weeks from Sunday, reading d; the week of 2023-01-01 read
	// d's 2023-01-02, republished after it.
	for i, start := range []string{"2022-12-25", "2023-01-01"} {
		r := rec("w", at(start+" 00"), models.SundayWeek, adapters.RecordDone, built.Add(-time.Hour), built.Add(-time.Hour))
		if i == 0 {
			r.StartedAt, r.PublishedAt = built.Add(time.Hour), built.Add(time.Hour)
		}
		records = append(records, r)
	}
	// l: a list model, without windows.
	for _, k := range []string{"eu", "us"} {
		records = append(records, adapters.Record{Model: "l", Partition: k, State: adapters.RecordDone, Fingerprint: "f-l", Rows: 1, RunID: "r1",
			Attempts: 1, StartedAt: built, FinishedAt: built, PublishedAt: built})
	}
	first := records[0]
	first.State, first.Rows, first.Fingerprint = adapters.RecordFailed, 9, "f-older"
	if err := h.A.RecordPartitions(h.Ctx, []adapters.Record{first}); err != nil {
		t.Fatal(err)
	}
	if err := h.A.RecordPartitions(h.Ctx, records); err != nil {
		t.Fatal(err)
	}

	q := adapters.SummaryQuery{Models: []string{"d", "u", "c", "w", "l"}, Yearly: at("2023-01-01 00"), Self: []string{"c"},
		Edges: []adapters.Edge{{Down: "d", Up: "u", Grain: models.Day}, {Down: "w", Up: "d", Grain: models.SundayWeek}}}
	check := func(when string) {
		t.Helper()
		// The third cuts January at its 3rd: d's days, u's hours and the
		// stale records of d fall on both sides.
		recent := q
		recent.Recent = at("2023-01-03 00")
		for _, q := range []adapters.SummaryQuery{q, {Models: q.Models}, recent} {
			got, err := ls.SummarizePartitions(h.Ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := summaryLines(got), summaryLines(summarize(records, q)); g != w {
				t.Errorf("SummarizePartitions(%+v), %s:\n got\n%s\nwant\n%s", q, when, g, w)
			}
		}
	}
	check("first")
	// Asked again, and after records change: an adapter that keeps the
	// summaries it computed (DuckDB) serves the ledger as it is now.
	check("asked again")
	records[8].PublishedAt = built.Add(time.Hour)                // u's first hour, republished after d read it
	records[6].State, records[6].Rows = adapters.RecordFailed, 4 // d's 2023-02-10
	if err := h.A.RecordPartitions(h.Ctx, []adapters.Record{records[8], records[6]}); err != nil {
		t.Fatal(err)
	}
	check("after two records changed")

	// k: 40 days, the last 3 written again: a query of its last days
	// reads a few of its records (ClickHouse reads them without FINAL).
	n := len(records)
	day("k", "2023-01-01", 40, nil)
	if err := h.A.RecordPartitions(h.Ctx, records[n:]); err != nil {
		t.Fatal(err)
	}
	for i := len(records) - 3; i < len(records); i++ {
		records[i].State, records[i].Rows = adapters.RecordFailed, int64(i)
	}
	if err := h.A.RecordPartitions(h.Ctx, records[len(records)-3:]); err != nil {
		t.Fatal(err)
	}
	for _, rq := range []adapters.RecordQuery{
		{All: []string{"l"}, Since: map[string]time.Time{"d": at("2023-01-01 00"), "c": at("2023-01-04 00")}},
		{Since: map[string]time.Time{"k": at("2023-02-04 00"), "c": at("2023-01-04 00")}},
	} {
		got, err := ls.QueryPartitions(h.Ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		var want []adapters.Record
		for _, r := range records {
			since, ok := rq.Since[r.Model]
			if slices.Contains(rq.All, r.Model) || ok && (r.WindowEnd.IsZero() || r.WindowEnd.After(since)) {
				want = append(want, r)
			}
		}
		if g, w := recordLines(got), recordLines(want); g != w {
			t.Errorf("QueryPartitions(%+v):\n got\n%s\nwant\n%s", rq, g, w)
		}
	}
}

// summarize computes what SummarizePartitions returns for q over records,
// the latest of each partition.
func summarize(records []adapters.Record, q adapters.SummaryQuery) []adapters.RecordSummary {
	bucket := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return q.Bucket(t)
	}
	type key struct {
		model  string
		bucket time.Time
	}
	sums := map[key]*adapters.RecordSummary{}
	var order []key
	for _, r := range records {
		if !slices.Contains(q.Models, r.Model) {
			continue
		}
		k := key{r.Model, bucket(r.WindowStart)}
		s := sums[k]
		if s == nil {
			s = &adapters.RecordSummary{Model: r.Model, Bucket: k.bucket, MinFingerprint: r.Fingerprint, MaxFingerprint: r.Fingerprint, MinStarted: r.StartedAt}
			sums[k] = s
			order = append(order, k)
		}
		s.Records++
		switch r.State {
		case adapters.RecordDone:
			s.Done++
		case adapters.RecordPending:
			s.Pending++
		case adapters.RecordRemoved:
			s.Removed++
		}
		if r.State == adapters.RecordDone || r.State == adapters.RecordPartial || r.State == adapters.RecordFailed {
			s.Rows += r.Rows
		}
		s.MinFingerprint, s.MaxFingerprint = min(s.MinFingerprint, r.Fingerprint), max(s.MaxFingerprint, r.Fingerprint)
		if r.StartedAt.Before(s.MinStarted) {
			s.MinStarted = r.StartedAt
		}
		if r.PublishedAt.After(s.MaxPublished) {
			s.MaxPublished = r.PublishedAt
		}
		stale := func(up adapters.Record) bool {
			return up.PublishedAt.After(r.StartedAt) && !up.PublishedAt.Equal(r.PublishedAt)
		}
		for _, p := range records {
			if slices.Contains(q.Self, r.Model) && p.Model == r.Model && !r.WindowStart.IsZero() && p.WindowEnd.Equal(r.WindowStart) && stale(p) {
				s.SelfStale++
			}
			for _, e := range q.Edges {
				if e.Down == r.Model && e.Up == p.Model && e.Grain.Truncate(p.WindowStart, time.UTC).Equal(e.Grain.Truncate(r.WindowStart, time.UTC)) && stale(p) {
					s.Stale++
				}
			}
		}
	}
	out := make([]adapters.RecordSummary, len(order))
	for i, k := range order {
		out[i] = *sums[k]
	}
	return out
}

// summaryLines prints summaries one per line, sorted; Stale only as
// whether there is any (an engine may count pairs or records).
func summaryLines(sums []adapters.RecordSummary) string {
	lines := make([]string, len(sums))
	for i, s := range sums {
		lines[i] = fmt.Sprintf("%s %s: %d records, %d done, %d pending, %d removed, fingerprints %s..%s, started from %s, published to %s, %d rows, self-stale %d, stale %v",
			s.Model, s.Bucket.Format(time.DateOnly), s.Records, s.Done, s.Pending, s.Removed, s.MinFingerprint, s.MaxFingerprint,
			s.MinStarted.Format(time.DateTime), s.MaxPublished.Format(time.DateTime), s.Rows, s.SelfStale, s.Stale > 0)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// recordLines prints records one per line, sorted.
func recordLines(recs []adapters.Record) string {
	lines := make([]string, len(recs))
	for i, r := range recs {
		lines[i] = fmt.Sprintf("%s %s %s %s", r.Model, r.Partition, r.State, r.Fingerprint)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// DailyPair returns done records of models up and down, one per day for
// days days from 2024-01-01, each published a day after its window opened,
// down's a minute after up's: what adapters' tests of kept summaries
// write to a ledger.
func DailyPair(days int) []adapters.Record {
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var records []adapters.Record
	for i := range days {
		start := day.AddDate(0, 0, i)
		for j, m := range []string{"up", "down"} {
			at := start.AddDate(0, 0, 1).Add(time.Duration(j) * time.Minute)
			records = append(records, adapters.Record{Model: m, Partition: start.Format(time.DateOnly), State: adapters.RecordDone,
				Fingerprint: "f", Rows: 2, RunID: "r", Attempts: 1, WindowStart: start, WindowEnd: start.AddDate(0, 0, 1),
				StartedAt: at, FinishedAt: at, PublishedAt: at})
		}
	}
	return records
}
