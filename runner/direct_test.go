package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// stageCounter counts the stages an adapter makes, per model.
type stageCounter struct {
	*duckdb.Adapter
	mu     sync.Mutex
	stages map[string]int
}

func (s *stageCounter) Stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	s.mu.Lock()
	s.stages[req.Model.Name]++
	s.mu.Unlock()
	return s.Adapter.Stage(ctx, req)
}

// TestDirectPublication runs the example shop one partition at a time,
// where models without audits are published without a stage (their rows
// written once, adapters.DirectPublisher), and again with the default
// concurrency, where everything is staged: the tables and row counts are
// the same.
func TestDirectPublication(t *testing.T) {
	t.Parallel()
	queries := []string{
		// (Sums of doubles are rounded: their order varies.)
		"SELECT month_start, orders, round(revenue, 6), days FROM marts.monthly_revenue ORDER BY ALL",
		"SELECT day, round(revenue_7d, 6), orders_7d FROM marts.rolling_revenue ORDER BY ALL",
		"SELECT region, orders, round(revenue, 6) FROM marts.revenue_by_region ORDER BY ALL",
		"SELECT model, partition_key, state, row_count FROM refill.partitions ORDER BY ALL",
	}
	same := func(a, b *env, how string) {
		t.Helper()
		for _, q := range queries {
			if got, want := fmt.Sprint(a.query(q)), fmt.Sprint(b.query(q)); got != want {
				t.Errorf("%s: %s differs:\n%.2000s\nstaged:\n%.2000s", how, q, got, want)
			}
		}
	}
	direct := newEnv(t, nil)
	sc := &stageCounter{Adapter: direct.db, stages: map[string]int{}}
	direct.runner = direct.with(sc)
	if s := direct.run(plan.Selection{}, runner.RunOptions{Concurrency: 1}); s.Failed > 0 {
		t.Fatalf("%+v", s)
	}
	// No stage, unless the model has audits (staging.orders: 18 batches
	// of 7 days).
	for model, want := range map[string]int{"marts.monthly_revenue": 0, "marts.rolling_revenue": 0, "staging.orders": 18} {
		if got := sc.stages[model]; got != want {
			t.Errorf("%s: %d stages, want %d", model, got, want)
		}
	}
	staged := newEnv(t, nil)
	staged.run(plan.Selection{}, runner.RunOptions{})
	same(direct, staged, "published directly")
	// A batch is published directly too, and counted per partition.
	n := sc.stages["marts.rolling_revenue"]
	direct.run(plan.Selection{Select: []string{"marts.rolling_revenue"}, Mode: plan.ModeAll}, runner.RunOptions{Concurrency: 1, Batch: 30})
	if sc.stages["marts.rolling_revenue"] != n {
		t.Errorf("the batches of rolling_revenue were staged")
	}
	same(direct, staged, "published directly in batches")
}

// TestDirectPublicationOutsideWindow: a unit published without a stage
// whose query returns a row outside its window fails as a staged one does,
// saying how many rows and which, and changes nothing.
func TestDirectPublicationOutsideWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.run(plan.Selection{}, runner.RunOptions{})
	before := fmt.Sprint(e.query("SELECT * FROM marts.monthly_revenue ORDER BY ALL"))
	// The same columns, a month late.
	sql := string(e.fsys["models/marts/monthly_revenue.sql"].Data)
	at := strings.Index(sql, "SELECT")
	e.fsys["models/marts/monthly_revenue.sql"].Data = []byte(sql[:at] + "SELECT CAST(month_start + INTERVAL 1 MONTH AS DATE) AS month_start, orders, revenue, days FROM (\n" + sql[at:] + "\n) AS shifted")
	e.load()
	sc := &stageCounter{Adapter: e.db, stages: map[string]int{}}
	e.runner = e.with(sc)
	s := e.run(plan.Selection{Select: []string{"marts.monthly_revenue"}, Partitions: []string{"2024-02"}}, runner.RunOptions{Concurrency: 1})
	if s.Failed != 1 {
		t.Fatalf("%+v", s)
	}
	var ve *runner.VerifyError
	if err := s.Partitions[0].Err; !errors.As(err, &ve) || ve.Outside != 1 || ve.Total != 1 || ve.Example != "2024-03-01" {
		t.Errorf("the error is %v (%#v)", err, ve)
	}
	if sc.stages["marts.monthly_revenue"] != 1 {
		t.Errorf("the failed unit was staged %d times, want once (to say what is wrong)", sc.stages["marts.monthly_revenue"])
	}
	if after := fmt.Sprint(e.query("SELECT * FROM marts.monthly_revenue ORDER BY ALL")); before != after {
		t.Errorf("a failed direct publication changed the table:\n%s\n%s", before, after)
	}
	if r := e.records("marts.monthly_revenue")["2024-02"]; r.State != adapters.RecordFailed || r.Rows != 1 {
		t.Errorf("the failed partition's record: %+v", r)
	}
}

// TestDirectPublicationOfANewTableFails: the first unit of a new table,
// published without a stage, fails at run time: the table is not left
// behind, empty or otherwise.
func TestDirectPublicationOfANewTableFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"models/marts/boom.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
end: 2024-01-03
*/
SELECT {{ start }} AS d, CAST(CASE WHEN range = 0 THEN error('boom') END AS INTEGER) AS n FROM range(1)`})
	sc := &stageCounter{Adapter: e.db, stages: map[string]int{}}
	e.runner = e.with(sc)
	s := e.run(plan.Selection{Select: []string{"marts.boom"}}, runner.RunOptions{Concurrency: 1, Retries: -1})
	if s.Failed == 0 || !strings.Contains(fmt.Sprint(s.Partitions[0].Err), "boom") {
		t.Fatalf("%+v", s)
	}
	if sc.stages["marts.boom"] != 0 {
		t.Errorf("marts.boom was staged %d times; it needs no stage", sc.stages["marts.boom"])
	}
	if n := e.count("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'marts' AND table_name = 'boom'"); n != 0 {
		t.Errorf("a failed first publication left the table marts.boom")
	}
}

// TestDirectBatchCountsPerPartition: a batch published without a stage
// counts its rows per partition from the table (adapters.RowGroup), per
// date for a date column and per hour for a timestamp: each partition's
// record holds the rows its day holds.
func TestDirectBatchCountsPerPartition(t *testing.T) {
	t.Parallel()
	model := func(col string) string {
		return "/* refill\npartition_by: placed\ngrain: day\nstart: 2024-01-01\nend: 2024-04-30\nbatch: 30\n*/\n" +
			"SELECT order_id, " + col + " AS placed FROM {{ ref(\"staging.orders\") }}\n" +
			"WHERE order_date >= {{ start }} AND order_date < {{ end }}"
	}
	e := newEnv(t, map[string]string{
		"models/marts/orders_on.sql": model("order_date"),
		"models/marts/orders_at.sql": model("order_date + INTERVAL (order_id % 24) HOUR + INTERVAL (order_id % 59) MINUTE"),
	})
	sc := &stageCounter{Adapter: e.db, stages: map[string]int{}}
	e.runner = e.with(sc)
	if s := e.run(plan.Selection{}, runner.RunOptions{Concurrency: 1, Batch: 30}); s.Failed > 0 {
		t.Fatalf("%+v", s)
	}
	for _, name := range []string{"marts.orders_on", "marts.orders_at"} {
		if n := sc.stages[name]; n != 0 {
			t.Errorf("%s: %d stages, want none", name, n)
		}
		days := map[string]int64{}
		for _, row := range e.query("SELECT strftime(placed, '%Y-%m-%d'), count(*) FROM " + name + " GROUP BY ALL") {
			days[row[0].(string)] = adapters.Int(row[1])
		}
		recs := e.records(name)
		if len(recs) != 121 {
			t.Errorf("%s: %d records, want 121", name, len(recs))
		}
		var total int64
		for key, r := range recs {
			if r.Rows != days[key] {
				t.Errorf("%s %s: the record counts %d rows, the table holds %d", name, key, r.Rows, days[key])
			}
			total += days[key]
		}
		if all := e.count("SELECT count(*) FROM " + name); total != all || all == 0 {
			t.Errorf("%s: the records count %d rows of %d", name, total, all)
		}
	}
}
