package statuspage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// synthSpec describes a synthetic model: n partitions of grain from
// start, or, without a grain, n list values (n = 1: a whole table).
type synthSpec struct {
	name  string
	grain models.Grain
	loc   *time.Location
	start time.Time
	n     int
}

// synthModel makes a model and its partitions, all done.
func synthModel(sp synthSpec, rng *rand.Rand) plan.ModelStatus {
	m := &models.Model{Name: sp.name, Config: models.Config{Grain: sp.grain, Location: sp.loc, Start: sp.start, Description: "A synthetic model."}}
	ms := plan.ModelStatus{Model: m, Counts: map[plan.State]int{}}
	built := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s := sp.start
	for i := range sp.n {
		p := models.Partition{Key: "all"}
		switch {
		case sp.grain != 0:
			p = models.Partition{Key: sp.grain.Key(s), Start: s, End: sp.grain.Add(s, 1)}
			s = p.End
		case sp.n > 1:
			p = models.Partition{Key: fmt.Sprintf("region_%d", i), Value: i}
		}
		rows := int64(1 + rng.IntN(5000))
		if rng.IntN(1000) < 3 {
			rows = 0
		}
		rec := &adapters.Record{Model: sp.name, Partition: p.Key, State: adapters.RecordDone, Rows: rows, RunID: "20250102T030405Z-a1b2c3",
			StartedAt: built, FinishedAt: built.Add(1500 * time.Millisecond), PublishedAt: built}
		ms.Partitions = append(ms.Partitions, plan.PartitionStatus{Partition: p, State: plan.StateDone, Record: rec})
	}
	return ms
}

// setState puts partition i of ms in state with detail (the error, for a
// failed partition).
func setState(ms *plan.ModelStatus, i int, state plan.State, detail string) {
	ps := &ms.Partitions[i]
	ps.State, ps.Detail = state, firstLine(detail)
	switch state {
	case plan.StateMissing:
		ps.Record = nil
	case plan.StateFailed:
		rec := *ps.Record
		rec.State, rec.Error = adapters.RecordFailed, detail
		ps.Record = &rec
	}
}

// syntheticStatus is the status of a project in the middle of its
// backfill: mostly done, with the last tenth of each time-partitioned
// model missing, failures scattered with one error, a day of the first
// hourly model failing with another and what that blocks in the next
// model, a changed model (the third), stale hours in the middle hourly
// model, and a few pending, drifted and partial partitions.
func syntheticStatus(specs []synthSpec) ([]plan.ModelStatus, map[string]map[string]plan.Step) {
	rng := rand.New(rand.NewPCG(1, 2))
	var st []plan.ModelStatus
	var hourly []int
	for i, sp := range specs {
		st = append(st, synthModel(sp, rng))
		if sp.grain == models.Hour {
			hourly = append(hourly, i)
		}
	}
	built := func(ms *plan.ModelStatus) int {
		if ms.Model.Config.Grain == 0 {
			return len(ms.Partitions)
		}
		return len(ms.Partitions) - len(ms.Partitions)/10
	}
	for mi := range st {
		ms := &st[mi]
		for i := built(ms); i < len(ms.Partitions); i++ {
			setState(ms, i, plan.StateMissing, "")
		}
		for range min(5, len(ms.Partitions)/20) {
			i := rng.IntN(built(ms))
			setState(ms, i, plan.StateFailed, fmt.Sprintf("Conversion Error: Could not convert string 'n/a' to DOUBLE\nLINE %d: SELECT ... WHERE day = '%s'",
				10+rng.IntN(90), ms.Partitions[i].Partition.Key))
		}
	}
	blocked := map[string]map[string]plan.Step{}
	if len(hourly) > 0 {
		failing := &st[hourly[0]]
		from := built(failing) / 2
		from -= failing.Partitions[from].Partition.Start.Hour()
		for i := from; i < from+24; i++ {
			key := failing.Partitions[i].Partition.Key
			setState(failing, i, plan.StateFailed, fmt.Sprintf("Catalog Error: Table with name events_%s does not exist!", strings.ReplaceAll(key[:10], "-", "")))
		}
		fstart, fend := failing.Partitions[from].Partition.Start, failing.Partitions[from+23].Partition.End
		if next := hourly[0] + 1; next < len(st) && st[next].Model.Config.Grain != 0 {
			waiting := &st[next]
			blocked[waiting.Model.Name] = map[string]plan.Step{}
			for i, ps := range waiting.Partitions {
				if ps.Partition.Start.Before(fend) && ps.Partition.End.After(fstart) {
					setState(waiting, i, plan.StateMissing, "")
					blocked[waiting.Model.Name][ps.Partition.Key] = plan.Step{Cause: "reads failed partitions of " + failing.Model.Name,
						Detail: fmt.Sprintf("reads %s %s, which failed", failing.Model.Name, failing.Partitions[from].Partition.Key)}
				}
			}
		}
		last := &st[hourly[len(hourly)-1]]
		setState(last, built(last)-1, plan.StatePartial, "its window is still open (allow_partial): refreshed on every run")
	}
	if len(hourly) >= 3 {
		stale := &st[hourly[len(hourly)/2]]
		for i := 5000; i < 5300; i++ {
			setState(stale, i, plan.StateStale, fmt.Sprintf("upstream raw.events %s was republished at 2025-01-03 0%d:00:00, after this was built",
				stale.Partitions[i].Partition.Key, i%10))
		}
	}
	if len(st) >= 3 {
		changed := &st[2]
		for i := range built(changed) {
			setState(changed, i, plan.StateStale, "the model changed since it was built (version 3463b90811ebccdf, now b0d8184e7f4706d5; plan --explain shows the difference)")
		}
		setState(&st[0], 100, plan.StatePending, "run 20250102T030405Z-a1b2c3 started publishing it at 2025-01-02 03:04:07 and did not record the outcome")
		setState(&st[0], 200, plan.StateDrift, "the table holds 12 rows in this partition; the ledger recorded 14")
	}
	for _, ms := range st {
		for _, ps := range ms.Partitions {
			ms.Counts[ps.State]++
		}
	}
	return st, blocked
}

// mixedProject is a project of every kind of model, of some 2,600
// partitions (as issue 18's web-events project): hourly events over 90
// days, daily sessions in New York over a year, weekly, monthly, list and
// whole-table models.
func mixedProject() []synthSpec {
	ny, _ := time.LoadLocation("America/New_York")
	return []synthSpec{
		{"staging.events", models.Hour, time.UTC, time.Date(2024, 10, 3, 0, 0, 0, 0, time.UTC), 2160},
		{"marts.daily_sessions", models.Day, ny, time.Date(2024, 1, 1, 0, 0, 0, 0, ny), 366},
		{"marts.weekly_users", models.Week, time.UTC, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 52},
		{"marts.monthly_revenue", models.Month, time.UTC, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 12},
		{"marts.by_region", 0, nil, time.Time{}, 3},
		{"marts.users", 0, nil, time.Time{}, 1},
	}
}

// bigProject is some 100,000 partitions: five daily models over the ten
// years to 2025 (every other one in New York) and five hourly ones over
// the last 16,500 hours.
func bigProject() []synthSpec {
	ny, _ := time.LoadLocation("America/New_York")
	var out []synthSpec
	for i := range 5 {
		loc := time.UTC
		if i%2 == 1 {
			loc = ny
		}
		out = append(out, synthSpec{fmt.Sprintf("marts.daily_%d", i), models.Day, loc, time.Date(2015, 1, 1, 0, 0, 0, 0, loc), 3653})
	}
	for i := range 5 {
		out = append(out, synthSpec{fmt.Sprintf("staging.hourly_%d", i), models.Hour, time.UTC, time.Date(2023, 2, 1, 0, 0, 0, 0, time.UTC), 16500})
	}
	return out
}

// syntheticRuns is a history of n runs.
func syntheticRuns(n int) []*adapters.Run {
	var out []*adapters.Run
	at := time.Date(2025, 1, 2, 3, 0, 0, 0, time.UTC)
	for i := range n {
		r := &adapters.Run{ID: fmt.Sprintf("20250102T03%02d00Z-a1b2c3", i), Status: adapters.RunSucceeded, Host: "ci", PID: 100 + i,
			StartedAt: at, FinishedAt: at.Add(time.Minute), Succeeded: 240}
		if i%3 == 0 {
			r.Status, r.Failed, r.Skipped = adapters.RunFailed, 24, 24
		}
		out = append(out, r)
	}
	return out
}

func renderSynthetic(t testing.TB, specs []synthSpec) (int, []byte) {
	t.Helper()
	st, blocked := syntheticStatus(specs)
	n := 0
	for _, ms := range st {
		n += len(ms.Partitions)
	}
	var buf bytes.Buffer
	in := Status{Target: "prod", Adapter: "snowflake", Now: time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC), Models: st, Blocked: blocked, Runs: syntheticRuns(Runs)}
	if err := Render(&buf, in); err != nil {
		t.Fatal(err)
	}
	return n, buf.Bytes()
}

// TestStatusHTMLSize keeps the page small: its size follows the number of
// changes of state, not the number of partitions. Before the calendar the
// page took 232 bytes a partition: 601 KB for the mixed project, 23.4 MB
// for the big one; now they take 35 KB and 137 KB.
func TestStatusHTMLSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                 string
		specs                []synthSpec
		partitions, maxBytes int
	}{
		{"mixed", mixedProject(), 2594, 45_000},
		{"big", bigProject(), 100_765, 170_000},
	} {
		start := time.Now()
		n, page := renderSynthetic(t, c.specs)
		took := time.Since(start)
		if n != c.partitions {
			t.Fatalf("%s: %d partitions, want %d", c.name, n, c.partitions)
		}
		t.Logf("%s: %d partitions: %d bytes (%.2f a partition) in %v", c.name, n, len(page), float64(len(page))/float64(n), took.Round(time.Millisecond))
		if len(page) > c.maxBytes {
			t.Errorf("%s: the page of %d partitions is %d bytes, more than %d", c.name, n, len(page), c.maxBytes)
		}
	}
}

// calendarOf lays out parts of model m, each in class.
func calendarOf(m *models.Model, starts []time.Time, class func(i int) string) (*calendar, []cellRef) {
	parts := make([]partCell, len(starts))
	for i, s := range starts {
		parts[i] = partCell{key: m.Config.Grain.Key(s), start: s, class: class(i), title: m.Config.Grain.Key(s)}
	}
	return buildCalendar(layoutFor(m, starts[0], starts[len(starts)-1]), parts)
}

func periods(g models.Grain, from time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = from
		from = g.Add(from, 1)
	}
	return out
}

// drawn writes a calendar as text, a row a line: the row's label, then
// each cell as its class (or "_" for blank columns) and span.
func drawn(cal *calendar) string {
	var b strings.Builder
	for _, r := range cal.Rows {
		b.WriteString(r.Label + ":")
		for _, c := range r.Cells {
			class := c.Class
			if class == "" {
				class = "_"
			}
			fmt.Fprintf(&b, " %s×%d", class, c.Span)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestStatusHTMLCalendars(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		grain   models.Grain
		loc     *time.Location
		from    time.Time
		n       int
		class   func(i int) string
		corner  string
		columns int
		want    string
	}{
		{
			// Hours from 22:00: the first row starts under column 22; five
			// whole days of done fold into one band, two do not.
			name: "hours", grain: models.Hour, loc: time.UTC, from: time.Date(2024, 3, 1, 22, 0, 0, 0, time.UTC), n: 2 + 24*7 + 3,
			class: func(i int) string {
				switch {
				case i == 2+24*5+1:
					return "failed"
				case i >= 2+24*7:
					return "missing"
				}
				return "done"
			},
			corner: "day (UTC)", columns: 24,
			want: "2024-03-01 Fri: _×22 done×2\n2024-03-02 … 2024-03-06: done×24\n2024-03-07 Thu: done×1 failed×1 done×22\n" +
				"2024-03-08 Fri: done×24\n2024-03-09 Sat: missing×3\n",
		},
		{
			// Days in New York: a row per local month, across the change to
			// summer time.
			name: "days", grain: models.Day, loc: ny, from: time.Date(2024, 3, 9, 0, 0, 0, 0, ny), n: 26,
			class:  func(i int) string { return map[bool]string{true: "stale", false: "done"}[i == 1] },
			corner: "month (America/New_York)", columns: 31,
			want: "2024-03: _×8 done×1 stale×1 done×21\n2024-04: done×3\n",
		},
		{
			// ISO weeks: 2020 has 53.
			name: "weeks", grain: models.Week, loc: time.UTC, from: time.Date(2020, 12, 21, 0, 0, 0, 0, time.UTC), n: 4,
			class:  func(i int) string { return "done" },
			corner: "ISO year", columns: 53,
			want: "2020: _×51 done×2\n2021: done×2\n",
		},
		{
			// Weeks from Sunday sit in the ISO week of their Monday: the
			// week from Sunday 2024-12-29 is in 2025's first column.
			name: "sunday weeks", grain: models.SundayWeek, loc: time.UTC, from: time.Date(2024, 12, 15, 0, 0, 0, 0, time.UTC), n: 4,
			class:  func(i int) string { return []string{"done", "done", "failed", "done"}[i] },
			corner: "ISO year", columns: 53,
			want: "2024: _×50 done×2\n2025: failed×1 done×1\n",
		},
		{
			// Fiscal years of weeks by the year they start in: the one from
			// 2022-01-02 and the one from 2023-01-01, though the latter
			// begins on the first day of its calendar year and the former
			// ends on the last day of the previous one (2022-12-31).
			name: "fiscal years", grain: models.WeekFiscalYear(time.January, time.Sunday), loc: time.UTC, from: time.Date(2022, 1, 2, 0, 0, 0, 0, time.UTC), n: 4,
			class:  func(i int) string { return []string{"done", "done", "stale", "done"}[i] },
			corner: "", columns: 4,
			want: "years: done×2 stale×1 done×1\n",
		},
		{
			name: "months", grain: models.Month, loc: time.UTC, from: time.Date(2023, 11, 1, 0, 0, 0, 0, time.UTC), n: 4,
			class:  func(i int) string { return []string{"done", "empty", "empty", "pending"}[i] },
			corner: "year", columns: 12,
			want: "2023: _×10 done×1 empty×1\n2024: empty×1 pending×1\n",
		},
		{
			name: "years", grain: models.Year, loc: time.UTC, from: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), n: 4,
			class:  func(i int) string { return "done" },
			corner: "", columns: 4,
			want: "years: done×4\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &models.Model{Name: "m", Config: models.Config{Grain: c.grain, Location: c.loc}}
			starts := periods(c.grain, c.from, c.n)
			cal, refs := calendarOf(m, starts, c.class)
			if cal.Corner != c.corner || len(cal.Columns) != c.columns {
				t.Errorf("corner %q and %d columns, want %q and %d", cal.Corner, len(cal.Columns), c.corner, c.columns)
			}
			if diff := cmp.Diff(c.want, drawn(cal)); diff != "" {
				t.Errorf("calendar (-want +got):\n%s", diff)
			}
			// Every partition's cell is in its class, and a cell's
			// columns add up to its row's.
			for i, r := range refs {
				if got := cal.Rows[r.row].Cells[r.cell].Class; got != c.class(i) {
					t.Errorf("partition %s is in a %s cell, want %s", m.Config.Grain.Key(starts[i]), got, c.class(i))
				}
			}
			for _, r := range cal.Rows {
				span := 0
				for _, cell := range r.Cells {
					span += cell.Span
				}
				if span > len(cal.Columns) {
					t.Errorf("row %s spans %d columns of %d", r.Label, span, len(cal.Columns))
				}
			}
		})
	}
}

func TestStatusHTMLGroups(t *testing.T) {
	t.Parallel()
	g := newGrouper()
	g.add("failed", "Binder Error: no column x in 2024-01-02 (line 3)", "", 0, 4)
	g.add("failed", "Binder Error: no column x in 2024-01-03 (line 5)", "", 0, 5)
	g.add("failed", "Binder Error: no column x in 2024-01-09 (line 3)", "", 1, 9)
	g.add("failed", "Catalog Error: no table raw.orders", "", 0, 7)
	g.add("blocked", "reads a 2024-01-02, which failed", "reads failed partitions of a", 2, 1)
	g.add("blocked", "reads b 2024-01-02, which is blocked", "reads blocked partitions of b", 3, 1)
	g.add("blocked", "reads b 2024-01-03, which is blocked", "reads blocked partitions of b", 3, 2)
	names := []string{"a", "b", "c", "d"}
	secs := g.sections(names, func(mi, part int) string { return fmt.Sprintf("K%d", part) },
		func(mi, part int) string { return fmt.Sprintf("#%s@K%d", names[mi], part) })
	type group struct {
		Count  int
		Text   string
		Varies bool
		Where  []groupWhere
	}
	var got [][]group
	for _, s := range secs {
		var gs []group
		for _, g := range s.Groups {
			gs = append(gs, group{g.Count, g.Text, g.Varies, g.Where})
		}
		got = append(got, gs)
	}
	span := func(label, href string) keySpan { return keySpan{Label: label, Href: href} }
	want := [][]group{
		{
			{3, "Binder Error: no column x in 2024-01-02 (line 3)", true, []groupWhere{
				{Model: "a", Anchor: "#a", Spans: []keySpan{span("K4 … K5 (2)", "#a@K4")}},
				{Model: "b", Anchor: "#b", Spans: []keySpan{span("K9", "#b@K9")}}}},
			{1, "Catalog Error: no table raw.orders", false, []groupWhere{{Model: "a", Anchor: "#a", Spans: []keySpan{span("K7", "#a@K7")}}}},
		},
		{ // what waits for a failure before what waits for a blocked partition
			{1, "reads failed partitions of a", false, []groupWhere{{Model: "c", Anchor: "#c", Spans: []keySpan{span("K1", "#c@K1")}}}},
			{2, "reads blocked partitions of b", false, []groupWhere{{Model: "d", Anchor: "#d", Spans: []keySpan{span("K1 … K2 (2)", "#d@K1")}}}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}
