package runner_test

import (
	"strings"
	"testing"

	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

func TestRunTwiceWritesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-31"}
	s := e.run(sel, runner.RunOptions{})
	if s.Failed != 0 || s.Succeeded == 0 {
		for _, p := range s.Partitions {
			if p.Err != nil {
				t.Log(p.Model, p.Partition, p.Status, p.Err)
			}
		}
		t.Fatalf("first run: %+v", s)
	}
	before := e.query(`SELECT count(*), round(sum(revenue), 6) FROM marts.daily_revenue`)
	if got := e.count(`SELECT count(*) FROM marts.daily_revenue`); got != 31 {
		t.Errorf("daily_revenue has %d rows, want 31", got)
	}
	if p := e.plan(sel); len(p.Steps()) != 0 {
		t.Errorf("second plan has %d steps, want none; first: %+v", len(p.Steps()), p.Steps()[0])
	}
	s = e.run(plan.Selection{From: "2024-01-01", To: "2024-01-31", Mode: plan.ModeAll}, runner.RunOptions{})
	if s.Failed != 0 {
		t.Fatalf("mode all: %+v", s)
	}
	after := e.query(`SELECT count(*), round(sum(revenue), 6) FROM marts.daily_revenue`)
	if before[0][0] != after[0][0] || before[0][1] != after[0][1] {
		t.Errorf("rewrite changed the data: %v -> %v", before, after)
	}
	if dups := e.count(`SELECT count(*) FROM (SELECT order_id FROM staging.orders GROUP BY order_id HAVING count(*) > 1)`); dups != 0 {
		t.Errorf("%d duplicated orders", dups)
	}
	for k, r := range e.records("marts.daily_revenue") {
		if strings.HasPrefix(k, "2024-01") && r.State != "done" {
			t.Errorf("%s: %s", k, r.State)
		}
	}
}
