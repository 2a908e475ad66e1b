package runner_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestRefreshRules: scheduled runs rebuild a whole-table model over a
// source by its refresh rule (always by default, after a duration, never,
// or when its watermark moves); ranged runs do not; and a refresh that
// computes the rows the table holds publishes nothing.
func TestRefreshRules(t *testing.T) {
	t.Parallel()
	body := "SELECT region, count(*) AS n FROM {{ source(\"raw.events\") }} GROUP BY region"
	e := eventsEnv(t, nil, map[string]string{
		"models/always.sql":    body,
		"models/six_hours.sql": "/* refill\nrefresh: 6h\n*/\n" + body,
		"models/never.sql":     "/* refill\nrefresh: never\n*/\n" + body,
		"models/marked.sql":    "/* refill\nwatermark: SELECT count(*) FROM {{ source(\"raw.events\") }}\n*/\n" + body,
	})
	clock := apr2024
	e.runner.Clock = func() time.Time { return clock }
	e.run(plan.Selection{Now: apr2024}, runner.RunOptions{})
	refreshed := func(now time.Time, sel plan.Selection) []string {
		t.Helper()
		sel.Now = now
		var out []string
		for _, st := range e.plan(sel).Steps() {
			if st.Reason != plan.ReasonRefresh {
				t.Errorf("%s %s planned for %s: %s", st.Model.Name, st.Partition.Key, st.Reason, st.Detail)
			}
			out = append(out, st.Model.Name)
		}
		sort.Strings(out)
		return out
	}
	same := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("refreshed %v, want %v", got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("refreshed %v, want %v", got, want)
				return
			}
		}
	}
	same(refreshed(apr2024.Add(time.Hour), plan.Selection{}), "always")
	same(refreshed(apr2024.Add(7*time.Hour), plan.Selection{}), "always", "six_hours")
	// Ranged runs build what they name; refresh rules are for scheduled ones.
	same(refreshed(apr2024.Add(7*time.Hour), plan.Selection{From: "2024-03-01", To: "2024-03-02"}))
	// New source rows move the watermark.
	if _, err := e.db.DB().Exec(`INSERT INTO raw.events VALUES (TIMESTAMP '2024-03-31 10:00:00', 'apac', 1)`); err != nil {
		t.Fatal(err)
	}
	same(refreshed(apr2024.Add(time.Hour), plan.Selection{}), "always", "marked")

	// A refresh that finds what the table holds publishes nothing; one
	// that finds new rows publishes them.
	published := func(model string) time.Time {
		return e.query("SELECT published_at FROM refill.partitions WHERE model = '" + model + "'")[0][0].(time.Time)
	}
	before := published("never")
	clock = apr2024.Add(8 * time.Hour)
	if _, err := e.db.DB().Exec(`DELETE FROM raw.events WHERE region = 'apac'`); err != nil {
		t.Fatal(err)
	}
	s, err := e.runner.Run(context.Background(), e.plan(plan.Selection{Select: []string{"always", "never"}, Mode: plan.ModeAll, Now: clock}), runner.RunOptions{})
	if err != nil || s.Succeeded != 2 || s.Unchanged != 0 {
		t.Fatalf("forced run: %+v, %v", s, err)
	}
	if !published("never").After(before) {
		t.Errorf("a forced run did not publish")
	}
	clock = apr2024.Add(9 * time.Hour)
	s, err = e.runner.Run(context.Background(), e.plan(plan.Selection{Select: []string{"always"}, Now: clock}), runner.RunOptions{})
	if err != nil || s.Succeeded != 1 || s.Unchanged != 1 || !s.Partitions[0].Unchanged {
		t.Fatalf("a refresh of unchanged rows: %+v, %v", s, err)
	}
	if got := published("always"); !got.Equal(apr2024.Add(8 * time.Hour)) {
		t.Errorf("an unchanged refresh moved the publication to %v", got)
	}
}
