package plan

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// A plan decides stretches of partitions at once: those the ledger has no
// record of (segments), and runs whose upstream partitions are all built
// or planned (readable). These tests hold that to the plan made one
// partition at a time, over random projects, ledgers and selections.

// TestRunsEqualPartitionByPartition compares, for random cases, the plan
// with the plan that looks at every partition on its own.
func TestRunsEqualPartitionByPartition(t *testing.T) {
	t.Parallel()
	cases := 1000
	if testing.Short() {
		cases = 250
	}
	// CI sets REFILL_ORACLE_BASE from the commit, so that a commit draws
	// the same cases on any machine; without it every run draws new ones.
	seed := rand.Uint64()
	if s := getenvUint("REFILL_ORACLE_BASE"); s != 0 {
		seed = s
	}
	t.Logf("seed %d (replay: RUNS_SEED=%d)", seed, seed)
	if s := getenvUint("RUNS_SEED"); s != 0 {
		seed, cases = s, 1
	}
	planned, withRuns := 0, 0
	for i := range cases {
		s := seed + uint64(i)
		c := newRandomCase(t, s)
		fast, errFast := newPlan(c.p, c.scope, c.facts, c.sel, false)
		slow, errSlow := newPlan(c.p, c.scope, c.facts, c.sel, true)
		if fmt.Sprint(errFast) != fmt.Sprint(errSlow) {
			t.Fatalf("seed %d: errors differ: %v, one by one %v\n%s", s, errFast, errSlow, c)
		}
		if errFast != nil {
			continue
		}
		planned++
		if len(fast.runs) < fast.Len() {
			withRuns++
		}
		for _, d := range diffPlans(fast, slow) {
			t.Errorf("seed %d: %s\n%s", s, d, c)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	// The generator must reach both: plans, and runs of many partitions.
	if planned < cases/3 || withRuns < cases/10 {
		t.Errorf("of %d cases, %d planned and %d had runs of many partitions: the generator misses", cases, planned, withRuns)
	}
	t.Logf("%d cases, %d planned, %d with runs of many partitions", cases, planned, withRuns)
}

// TestInitialBackfillIsOneRun: ten years of days, never built, are one
// run per model, and expand to every day.
func TestInitialBackfillIsOneRun(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")}}
	fsys["models/a.sql"] = &fstest.MapFile{Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2015-01-01\n*/\nSELECT d FROM {{ source(\"raw.e\") }} WHERE d >= {{ start }} AND d < {{ end }}")}
	fsys["models/b.sql"] = &fstest.MapFile{Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2015-01-01\n*/\nSELECT d FROM {{ ref(\"a\") }} WHERE d >= {{ start }} AND d < {{ end }}")}
	p, err := models.Load(fsys, testLoadOptions)
	if err != nil {
		t.Fatal(err)
	}
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main"}
	pl, err := NewPlan(p, scope, nil, Selection{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	const days = 3653 // 2015-01-01 through 2024-12-31
	if len(pl.Runs()) != 2 || pl.Len() != 2*days {
		t.Fatalf("%d runs of %d partitions, want 2 of %d", len(pl.Runs()), pl.Len(), 2*days)
	}
	steps := pl.Steps()
	if len(steps) != 2*days || steps[0].Partition.Key != "2015-01-01" || steps[days-1].Partition.Key != "2024-12-31" ||
		steps[days].Model.Name != "b" || steps[days].Partition.Key != "2015-01-01" {
		t.Errorf("steps: %d, first %s, last of a %s", len(steps), steps[0].Partition.Key, steps[days-1].Partition.Key)
	}
	for i := 1; i < days; i++ {
		if !steps[i].Partition.Start.Equal(steps[i-1].Partition.End) || steps[i].Reason != ReasonMissing {
			t.Fatalf("step %d: %+v after %+v", i, steps[i], steps[i-1])
		}
	}
}

var testLoadOptions = models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}}

// diffPlans says how two plans' steps, blocked steps and notes differ.
func diffPlans(a, b *Plan) []string {
	var out []string
	for _, x := range []struct {
		what string
		a, b []Step
	}{{"steps", a.Steps(), b.Steps()}, {"blocked", a.Blocked(), b.Blocked()}} {
		if len(x.a) != len(x.b) {
			out = append(out, fmt.Sprintf("%s: %d, one by one %d:\n%s\none by one:\n%s", x.what, len(x.a), len(x.b), stepLines(x.a), stepLines(x.b)))
			continue
		}
		for i := range x.a {
			if d := diffStep(x.a[i], x.b[i]); d != "" {
				out = append(out, fmt.Sprintf("%s[%d]: %s", x.what, i, d))
				break
			}
		}
	}
	if a.Len() != len(a.Steps()) || a.LenBlocked() != len(a.Blocked()) {
		out = append(out, fmt.Sprintf("Len %d and LenBlocked %d, for %d steps and %d blocked", a.Len(), a.LenBlocked(), len(a.Steps()), len(a.Blocked())))
	}
	if !reflect.DeepEqual(a.Notes, b.Notes) {
		out = append(out, fmt.Sprintf("notes:\n%q\none by one:\n%q", a.Notes, b.Notes))
	}
	return out
}

func diffStep(a, b Step) string {
	same := a.Model == b.Model && a.Partition.Key == b.Partition.Key && a.Partition.Start.Equal(b.Partition.Start) &&
		a.Partition.End.Equal(b.Partition.End) && a.Reason == b.Reason && a.Detail == b.Detail && a.Cause == b.Cause &&
		a.Record == b.Record && a.Conditional == b.Conditional && a.Horizon.Equal(b.Horizon) &&
		(a.BlockedBy == nil) == (b.BlockedBy == nil) && (a.BlockedBy == nil || *a.BlockedBy == *b.BlockedBy)
	if same {
		return ""
	}
	return fmt.Sprintf("%s\none by one:\n%s", stepLine(a), stepLine(b))
}

func stepLines(steps []Step) string {
	var lines []string
	for _, st := range steps {
		lines = append(lines, stepLine(st))
	}
	return strings.Join(lines, "\n")
}

func stepLine(st Step) string {
	s := fmt.Sprintf("  %s %s %s %q cause %q record %v conditional %v horizon %s", st.Model.Name, st.Partition.Key, st.Reason, st.Detail,
		st.Cause, st.Record != nil, st.Conditional, st.Horizon.Format(time.RFC3339))
	if st.BlockedBy != nil {
		s += fmt.Sprintf(" by %+v", *st.BlockedBy)
	}
	return s
}

// randomCase is a project, the facts a plan is made from, and a selection.
type randomCase struct {
	files map[string]string
	p     *models.Project
	scope *models.Scope
	facts Facts
	sel   Selection
}

func (c *randomCase) String() string {
	var b strings.Builder
	for name, text := range c.files {
		fmt.Fprintf(&b, "--- %s\n%s\n", name, text)
	}
	fmt.Fprintf(&b, "--- selection %+v\n--- proven %v\n--- %d records:\n", c.sel, c.facts.Proven, len(c.facts.Records))
	for _, r := range c.facts.Records {
		fmt.Fprintf(&b, "  %s %s %s fp %s window %s..%s started %s published %s\n", r.Model, r.Partition, r.State, r.Fingerprint,
			r.WindowStart.Format(time.RFC3339), r.WindowEnd.Format(time.RFC3339), r.StartedAt.Format(time.RFC3339), r.PublishedAt.Format(time.RFC3339))
	}
	return b.String()
}

var grains = []string{"hour", "day", "day", "day", "week", "month"}

// newRandomCase makes a case of up to six models over about three months.
func newRandomCase(t *testing.T, seed uint64) *randomCase {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for attempt := 0; ; attempt++ {
		c := &randomCase{files: map[string]string{}}
		n := 2 + r.IntN(5)
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		kinds := make([]string, n)
		for i := range n {
			name := fmt.Sprintf("m%d", i)
			var ups []string
			for j := range i {
				if r.IntN(3) == 0 || j == i-1 && r.IntN(2) == 0 {
					ups = append(ups, fmt.Sprintf("m%d", j))
				}
			}
			kind := "time"
			switch r.IntN(8) {
			case 0:
				kind = "table"
			case 1:
				kind = "list"
			}
			kinds[i] = kind
			var cfg []string
			grain := "day"
			switch kind {
			case "time":
				grain = grains[r.IntN(len(grains))]
				if grain == "hour" && r.IntN(2) == 0 {
					grain = "day"
				}
				start := base.AddDate(0, 0, r.IntN(20)).Format("2006-01-02")
				cfg = append(cfg, "partition_by: d", "grain: "+grain, "start: "+start)
				if r.IntN(5) == 0 {
					cfg = append(cfg, "end: "+base.AddDate(0, 1+r.IntN(3), r.IntN(20)).Format("2006-01-02"))
				}
				if grain != "hour" && r.IntN(6) == 0 {
					cfg = append(cfg, "timezone: Europe/Berlin")
				}
				if r.IntN(5) == 0 {
					cfg = append(cfg, fmt.Sprintf("lookback: %d", 1+r.IntN(3)))
				}
				if r.IntN(6) == 0 {
					cfg = append(cfg, "delay: 2h")
				}
				if r.IntN(8) == 0 {
					cfg = append(cfg, "allow_partial: true")
				}
				switch r.IntN(8) {
				case 0:
					cfg = append(cfg, "depends_on_past: self")
				case 1:
					if len(ups) > 0 {
						cfg = append(cfg, fmt.Sprintf("depends_on_past: %d", 1+r.IntN(3)))
					}
				}
			case "list":
				cfg = append(cfg, "partition_by: region", "values: [eu, us, apac]")
			}
			from := `{{ source("raw.e") }}`
			if len(ups) > 0 {
				var refs []string
				for _, u := range ups {
					refs = append(refs, fmt.Sprintf(`SELECT d FROM {{ ref("%s") }}`, u))
				}
				from = "(" + strings.Join(refs, " UNION ALL ") + ")"
			}
			var sql string
			switch kind {
			case "time":
				sql = fmt.Sprintf("SELECT d FROM %s WHERE d >= {{ start }} AND d < {{ end }}", from)
				if strings.Contains(strings.Join(cfg, "\n"), "self") {
					sql += ` UNION ALL SELECT d FROM {{ this }} WHERE d < {{ start }}`
				}
			case "list":
				sql = fmt.Sprintf("SELECT d FROM %s WHERE region = {{ partition }}", from)
			default:
				sql = fmt.Sprintf("SELECT count(*) AS n FROM %s", from)
			}
			text := sql
			if len(cfg) > 0 {
				text = "/* refill\n" + strings.Join(cfg, "\n") + "\n*/\n" + sql
			}
			c.files[name+".sql"] = text
		}
		fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")}}
		for name, text := range c.files {
			fsys["models/"+name] = &fstest.MapFile{Data: []byte(text)}
		}
		p, err := models.Load(fsys, testLoadOptions)
		if err != nil {
			if attempt > 50 {
				t.Fatalf("seed %d: no project loads; last: %v", seed, err)
			}
			continue
		}
		c.p = p
		c.scope = &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main"}
		now := base.AddDate(0, 2+r.IntN(2), r.IntN(28)).Add(time.Duration(r.IntN(24)) * time.Hour)
		c.facts = randomFacts(r, p, c.scope, now)
		c.sel = randomSelection(r, p, now)
		return c
	}
}

// randomFacts makes records of the project's partitions before now: most
// done, built in graph order, some failed, pending, partial, removed or
// stale, some built before what they read was republished, and some of
// another grain; and, at times, proven bounds and table counts.
func randomFacts(r *rand.Rand, p *models.Project, scope *models.Scope, now time.Time) Facts {
	var f Facts
	built := now.Add(-60 * 24 * time.Hour)
	for _, m := range p.Graph.Order {
		built = built.Add(time.Minute)
		fp := m.Version(scope).Fingerprint
		var parts []models.Partition
		if m.Kind() == models.TimePartitioned {
			last, ok := m.LastComplete(now)
			if !ok {
				continue
			}
			parts = m.Partitions(m.Config.Start.AddDate(0, 0, -r.IntN(3)), last)
		} else {
			parts = m.Partitions(time.Time{}, time.Time{})
		}
		density := []float64{0, 0.3, 0.9, 1, 1}[r.IntN(5)]
		for i, part := range parts {
			if r.Float64() >= density {
				continue
			}
			rec := adapters.Record{Model: m.Name, Partition: part.Key, State: adapters.RecordDone, Fingerprint: fp,
				WindowStart: part.Start, WindowEnd: part.End, Rows: int64(r.IntN(3))}
			at := built.Add(time.Duration(i) * time.Second)
			switch r.IntN(40) {
			case 0:
				rec.State, rec.Error = adapters.RecordFailed, "boom"
			case 1:
				rec.State = adapters.RecordPending
			case 2:
				rec.State = adapters.RecordRemoved
			case 3:
				rec.State = adapters.RecordPartial
			case 4, 5:
				rec.Fingerprint = "old"
			case 6:
				at = at.Add(-90 * 24 * time.Hour) // built before its upstream
			}
			rec.StartedAt, rec.FinishedAt = at, at.Add(time.Second)
			if rec.State != adapters.RecordFailed {
				rec.PublishedAt = rec.FinishedAt
			}
			f.Records = append(f.Records, rec)
		}
		if m.Kind() == models.TimePartitioned && r.IntN(10) == 0 && len(parts) > 0 {
			// A record of another grain: a month, keyed as months are.
			q := parts[r.IntN(len(parts))]
			mon := time.Date(q.Start.Year(), q.Start.Month(), 1, 0, 0, 0, 0, time.UTC)
			f.Records = append(f.Records, adapters.Record{Model: m.Name, Partition: mon.Format("2006-01"), State: adapters.RecordDone,
				Fingerprint: fp, WindowStart: mon, WindowEnd: mon.AddDate(0, 1, 0), StartedAt: built, FinishedAt: built, PublishedAt: built})
		}
		if m.Kind() == models.TimePartitioned && r.IntN(6) == 0 && len(parts) > 2 {
			// Proven done before a partition: the plan reads no record
			// before it.
			bound := parts[r.IntN(len(parts)-1)+1].Start
			if f.Proven == nil {
				f.Proven = map[string]time.Time{}
			}
			f.Proven[m.Name] = bound
			// (The summaries prove what is done; a record they did not
			// prove done, before the bound, may still be read.)
			kept := f.Records[:0]
			for _, rec := range f.Records {
				if rec.Model != m.Name || !rec.WindowStart.Before(bound) || rec.State != adapters.RecordDone && r.IntN(2) == 0 {
					kept = append(kept, rec)
				}
			}
			f.Records = kept
		}
		if r.IntN(3) == 0 {
			// The table's counts, which differ from the ledger's here and
			// there.
			if f.Tables == nil {
				f.Tables = map[string]*TableFacts{}
			}
			tf := &TableFacts{Relation: scope.Relation(m), Exists: r.IntN(10) > 0, Rows: map[string]int64{}}
			for _, rec := range f.Records {
				if rec.Model == m.Name {
					tf.Rows[rec.Partition] = rec.Rows + int64(r.IntN(12)/11)
				}
			}
			f.Tables[m.Name] = tf
		}
	}
	return f
}

// randomSelection makes a selection of the project at now.
func randomSelection(r *rand.Rand, p *models.Project, now time.Time) Selection {
	sel := Selection{Now: now}
	if r.IntN(2) == 0 {
		m := p.Graph.Order[r.IntN(len(p.Graph.Order))]
		prefix := []string{"", "+", ""}[r.IntN(3)]
		suffix := []string{"", "+"}[r.IntN(2)]
		sel.Select = []string{prefix + m.Name + suffix}
	}
	day := func() string { return now.AddDate(0, 0, -r.IntN(80)).Format("2006-01-02") }
	switch r.IntN(6) {
	case 0:
		sel.From = day()
	case 1:
		sel.To = day()
	case 2:
		a, b := day(), day()
		if a > b {
			a, b = b, a
		}
		sel.From, sel.To = a, b
	case 3:
		sel.Partitions = []string{day(), now.AddDate(0, -1, 0).Format("2006-01")}
		if r.IntN(2) == 0 {
			sel.Partitions = append(sel.Partitions, "eu")
		}
	}
	switch r.IntN(8) {
	case 0:
		sel.Mode = ModeAll
	case 1:
		sel.Mode = ModeMissing
	case 2:
		sel.Mode = ModeFailed
	}
	switch r.IntN(10) {
	case 0:
		if sel.From == "" && sel.To == "" && len(sel.Partitions) == 0 {
			sel.FullRefresh = true
		}
	case 1:
		sel.AllowMissingUpstream = true
	case 2:
		sel.Since = now.Add(-59 * 24 * time.Hour)
	}
	if r.IntN(4) == 0 {
		n := r.IntN(3)
		sel.Lookback = &n
	}
	return sel
}

func getenvUint(name string) uint64 {
	v, _ := strconv.ParseUint(os.Getenv(name), 10, 64)
	return v
}

// A removal step of an upstream partition recorded under another grain
// (a month of a model that is now daily) spans the days in its window; a
// run of the model reading it took those days for planned and kept its
// partitions whole, reading a day that was never built. Found by
// TestRunsEqualPartitionByPartition (seed 15921296567230975245): here
// without --allow-missing-upstream, where the week must be blocked.
func TestRunsRemovalsBuildNothing(t *testing.T) {
	t.Parallel()
	c := newRandomCase(t, 15921296567230975245)
	c.sel.AllowMissingUpstream = false
	fast, err := newPlan(c.p, c.scope, c.facts, c.sel, false)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := newPlan(c.p, c.scope, c.facts, c.sel, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffPlans(fast, slow) {
		t.Errorf("%s\n%s", d, c)
	}
	blocked := false
	for _, st := range fast.Blocked() {
		blocked = blocked || st.Model.Name == "m2" && st.Partition.Key == "2024-W05"
	}
	if !blocked {
		t.Errorf("m2 2024-W05, which reads m1 2024-01-29 (never built), is not blocked\n%s", c)
	}
}
