package plan_test

import (
	"fmt"
	"sort"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// TestPlanReasons plans an in-memory project against hand-made ledger
// records, one for each reason a partition runs.
func TestPlanReasons(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")},
		"models/src.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nlookback: 2\n*/\n" +
			"SELECT d FROM {{ source(\"raw.e\") }} WHERE d >= {{ start }} AND d < {{ end }}")},
		"models/down.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT d FROM {{ ref(\"src\") }} WHERE d >= {{ start }} AND d < {{ end }}")},
	}
	p, err := models.Load(fsys, loadOptions)
	if err != nil {
		t.Fatal(err)
	}
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main"}
	built := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	rec := func(model, key string, mutate func(*adapters.Record)) adapters.Record {
		m, _ := p.Model(model)
		part, _ := m.Partition(key)
		r := adapters.Record{Model: model, Partition: key, State: adapters.RecordDone, Fingerprint: m.Version(scope).Fingerprint,
			WindowStart: part.Start, WindowEnd: part.End, StartedAt: built, FinishedAt: built, PublishedAt: built}
		if mutate != nil {
			mutate(&r)
		}
		return r
	}
	later := built.Add(time.Hour)
	records := []adapters.Record{
		rec("src", "2024-01-01", nil),
		rec("src", "2024-01-02", func(r *adapters.Record) { r.State, r.Error = adapters.RecordFailed, "boom" }),
		rec("src", "2024-01-03", func(r *adapters.Record) { r.Fingerprint = "0000000000000000" }),
		rec("src", "2024-01-04", func(r *adapters.Record) { r.PublishedAt = later }), // republished after down built on it
		// 2024-01-05 of src is missing
		rec("src", "2024-01-06", nil),
		rec("src", "2024-01-07", nil),
		rec("down", "2024-01-01", nil),
		rec("down", "2024-01-04", nil),
		rec("down", "2024-01-06", nil),
		rec("down", "2024-01-07", nil),
	}
	pl := func(sel plan.Selection) map[string]plan.Reason {
		t.Helper()
		sel.Now = time.Date(2024, 1, 8, 1, 0, 0, 0, time.UTC) // 01-07 is the last complete day
		pl, err := plan.NewPlan(p, scope, records, sel)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]plan.Reason{}
		for _, s := range append(pl.Steps(), pl.Blocked()...) {
			out[s.Model.Name+" "+s.Partition.Key] = s.Reason
		}
		return out
	}
	check := func(name string, got map[string]plan.Reason, want map[string]plan.Reason) {
		t.Helper()
		if fmt.Sprint(sortedMap(got)) != fmt.Sprint(sortedMap(want)) {
			t.Errorf("%s:\n got %v\nwant %v", name, sortedMap(got), sortedMap(want))
		}
	}
	// The scheduled form: everything not done and current, plus src's
	// lookback (its last two days); down's partitions that read rewritten
	// src partitions follow as upstream.
	check("scheduled", pl(plan.Selection{}), map[string]plan.Reason{
		"src 2024-01-02": "failed", "src 2024-01-03": "stale", "src 2024-01-05": "missing",
		"src 2024-01-06": "lookback", "src 2024-01-07": "lookback",
		"down 2024-01-02": "missing", "down 2024-01-03": "missing", "down 2024-01-04": "upstream", "down 2024-01-05": "missing",
		"down 2024-01-06": "upstream", "down 2024-01-07": "upstream",
	})
	// An explicit range: no lookback; only src selected: down is untouched.
	check("range", pl(plan.Selection{Select: []string{"src"}, From: "2024-01-01", To: "2024-01-07"}), map[string]plan.Reason{
		"src 2024-01-02": "failed", "src 2024-01-03": "stale", "src 2024-01-05": "missing",
	})
	// down's 2nd reads src's failed 2nd, which --mode missing does not
	// rerun: it is blocked.
	check("missing", pl(plan.Selection{Mode: plan.ModeMissing, From: "2024-01-01"}), map[string]plan.Reason{
		"src 2024-01-05": "missing", "down 2024-01-02": "blocked", "down 2024-01-03": "missing", "down 2024-01-05": "missing",
	})
	check("failed", pl(plan.Selection{Mode: plan.ModeFailed, From: "2024-01-01"}), map[string]plan.Reason{"src 2024-01-02": "failed"})
	forced := pl(plan.Selection{Select: []string{"src"}, Mode: plan.ModeAll, Partitions: []string{"2024-01-01", "2024-01-05"}})
	check("forced", forced, map[string]plan.Reason{"src 2024-01-01": "forced", "src 2024-01-05": "missing"})
	// Selecting src+ propagates a forced rewrite of the 1st to down's 1st.
	check("propagated", pl(plan.Selection{Select: []string{"src+"}, Mode: plan.ModeAll, Partitions: []string{"2024-01-01"}}),
		map[string]plan.Reason{"src 2024-01-01": "forced", "down 2024-01-01": "forced"})
	for _, bad := range []plan.Selection{{From: "2024-02-30"}, {From: "2024-01-05", To: "2024-01-01"}, {Select: []string{"nope"}},
		{Partitions: []string{"2024-01-01"}, From: "2024-01-01"}} {
		bad.Now = time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC)
		if _, err := plan.NewPlan(p, scope, records, bad); err == nil {
			t.Errorf("NewPlan(%+v) succeeded", bad)
		}
	}
}

func sortedMap(m map[string]plan.Reason) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+string(v))
	}
	sort.Strings(out)
	return out
}

// loadOptions load the test projects, whose targets may set DuckDB's
// settings.
var loadOptions = models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}}
