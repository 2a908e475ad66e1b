package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// faulty wraps an adapter and fails a fraction of its statements with
// transient errors: some before the statement runs, and some after it ran
// (a lost acknowledgement), which retries must survive without writing
// anything twice.
type faulty struct {
	adapters.Adapter
	rate   float64
	mu     sync.Mutex
	rng    *rand.Rand
	faults atomic.Int64
	stages atomic.Int64 // Stage calls, to count model queries
}

func (f *faulty) roll() (before, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.rate {
		return false, false
	}
	f.faults.Add(1)
	if f.rng.IntN(2) == 0 {
		return true, false
	}
	return false, true
}

var errInjected = errors.New("injected: connection reset by peer")

func (f *faulty) Stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	f.stages.Add(1)
	if before, _ := f.roll(); before {
		return nil, &adapters.TransientError{Err: errInjected}
	}
	return f.Adapter.Stage(ctx, req)
}

func (f *faulty) Query(ctx context.Context, q string, tag adapters.Tag) (*adapters.Result, error) {
	if before, after := f.roll(); before || after {
		return nil, &adapters.TransientError{Err: errInjected}
	}
	return f.Adapter.Query(ctx, q, tag)
}

func (f *faulty) Publish(ctx context.Context, swaps []adapters.Swap) error {
	before, after := f.roll()
	if before {
		return &adapters.TransientError{Err: errInjected}
	}
	if err := f.Adapter.Publish(ctx, swaps); err != nil {
		return err
	}
	if after {
		return &adapters.TransientError{Err: fmt.Errorf("%w (after the commit)", errInjected)}
	}
	return nil
}

func TestFaultInjectionCompletesExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	f := &faulty{Adapter: e.db, rate: 0.05, rng: rand.New(rand.NewPCG(1, 2))}
	r := e.with(f)
	sel := plan.Selection{From: "2024-01-01", To: "2024-02-29", Now: jan2024}
	pl, err := r.Plan(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	// One partition per unit: many units, many statements to fail.
	s, err := r.Run(context.Background(), pl, runner.RunOptions{Retries: 20, RetryDelay: time.Millisecond, Concurrency: 4, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Failed != 0 || s.Skipped != 0 {
		for _, p := range s.Partitions {
			if p.Status != runner.Succeeded {
				t.Errorf("%s %s: %s %v", p.Model, p.Partition, p.Status, p.Err)
			}
		}
		t.Fatalf("run did not complete: %d failed, %d skipped", s.Failed, s.Skipped)
	}
	if f.faults.Load() < 20 {
		t.Fatalf("only %d faults were injected", f.faults.Load())
	}
	retried := 0
	for _, p := range s.Partitions {
		if p.Attempts > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no partition needed a retry")
	}
	// Exactly once: every source order appears once, and the daily totals
	// match a direct computation.
	if n := e.count(`SELECT count(*) FROM (SELECT order_id FROM staging.orders GROUP BY order_id HAVING count(*) > 1)`); n != 0 {
		t.Errorf("%d orders appear more than once", n)
	}
	want := e.count(`SELECT count(*) FROM raw.orders WHERE order_date < DATE '2024-03-01' AND amount >= 10 AND status <> 'test'`)
	if got := e.count(`SELECT count(*) FROM staging.orders`); got != want {
		t.Errorf("staging.orders has %d rows, want %d", got, want)
	}
	if got := e.count(`SELECT count(*) FROM marts.daily_revenue`); got != 60 {
		t.Errorf("daily_revenue has %d rows, want 60", got)
	}
	if got := e.count(`SELECT count(*) FROM refill.partitions WHERE state = 'done'`); got != int64(len(pl.Steps())) {
		t.Errorf("ledger has %d done partitions, want %d", got, len(pl.Steps()))
	}
	if got := e.count(`SELECT max(attempts) FROM refill.partitions`); got < 2 {
		t.Errorf("the ledger does not keep attempt counts: max %d", got)
	}
	t.Logf("%d partitions, %d injected faults, %d partitions retried", len(pl.Steps()), f.faults.Load(), retried)
}

func TestBatchIssuesOneQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	f := &faulty{Adapter: e.db, rng: rand.New(rand.NewPCG(1, 2))}
	r := e.with(f)
	pl, err := r.Plan(context.Background(), plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-30", Now: jan2024})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Run(context.Background(), pl, runner.RunOptions{Batch: 30})
	if err != nil || s.Succeeded != 30 {
		t.Fatalf("run: %+v %v", s, err)
	}
	if n := f.stages.Load(); n != 1 {
		t.Errorf("batch of 30 issued %d model queries, want 1", n)
	}
	recs := e.records("staging.orders")
	if len(recs) != 30 {
		t.Fatalf("ledger has %d partitions, want 30", len(recs))
	}
	for key, rec := range recs {
		want := e.count(fmt.Sprintf(`SELECT count(*) FROM staging.orders WHERE order_date = DATE '%s'`, key))
		if rec.State != "done" || rec.Rows != want || rec.Rows == 0 {
			t.Errorf("%s: %s with %d rows, want done with %d", key, rec.State, rec.Rows, want)
		}
	}
}

// boomOn returns the orders model, failing with a SQL error on the given day.
func boomOn(day string) string {
	return `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
batch: 1
*/
SELECT order_id, customer_id, order_date, status, region,
       amount + (CASE WHEN order_date = DATE '` + day + `' THEN CAST('boom' AS INTEGER) ELSE 0 END) AS amount
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}`
}

func TestFailedBatchSplits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"models/staging/orders.sql": boomOn("2024-01-05")})
	f := &faulty{Adapter: e.db, rng: rand.New(rand.NewPCG(1, 2))}
	r := e.with(f)
	pl, _ := r.Plan(context.Background(), plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-10", Now: jan2024})
	s, err := r.Run(context.Background(), pl, runner.RunOptions{Batch: 10, SplitFailed: true, Retries: 2, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Succeeded != 9 || s.Failed != 1 {
		t.Fatalf("want 9 succeeded and 1 failed, got %+v", s)
	}
	if n := f.stages.Load(); n != 11 {
		t.Errorf("%d model queries, want 11: the batch once (a SQL error is not retried), then each day", n)
	}
	for _, p := range s.Partitions {
		if (p.Partition == "2024-01-05") != (p.Status == runner.Failed) {
			t.Errorf("%s: %s", p.Partition, p.Status)
		}
	}

	// Without splitting, the batch fails as a whole.
	e2 := newEnv(t, map[string]string{"models/staging/orders.sql": boomOn("2024-01-05")})
	s = e2.run(plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-10"}, runner.RunOptions{Batch: 10})
	if s.Failed != 10 {
		t.Errorf("unsplit batch: %d failed, want 10", s.Failed)
	}
}

func TestFailFastAndSkips(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"models/staging/orders.sql": boomOn("2024-01-03")})
	s := e.run(plan.Selection{Select: []string{"staging.orders+"}, From: "2024-01-01", To: "2024-01-10"},
		runner.RunOptions{Concurrency: 1, FailFast: true})
	if s.Failed != 1 {
		t.Fatalf("%d failed, want 1", s.Failed)
	}
	for _, p := range s.Partitions {
		if p.Model == "staging.orders" && p.Partition > "2024-01-03" && p.Status != runner.Skipped {
			t.Errorf("fail-fast ran %s %s: %s", p.Model, p.Partition, p.Status)
		}
	}
	if got := e.count(`SELECT count(*) FROM refill.partitions WHERE model = 'staging.orders' AND state = 'done'`); got != 2 {
		t.Errorf("%d done, want the 2 days before the failure", got)
	}

	// Without fail-fast the others go on, and only the dependents of the
	// failed day are skipped.
	e2 := newEnv(t, map[string]string{"models/staging/orders.sql": boomOn("2024-01-03")})
	s = e2.run(plan.Selection{Select: []string{"staging.orders+"}, From: "2024-01-01", To: "2024-01-10"}, runner.RunOptions{Concurrency: 2})
	for _, p := range s.Partitions {
		switch {
		case p.Model == "staging.orders":
			if want := p.Partition != "2024-01-03"; (p.Status == runner.Succeeded) != want {
				t.Errorf("%s %s: %s", p.Model, p.Partition, p.Status)
			}
		case p.Model == "marts.daily_revenue":
			if want := p.Partition != "2024-01-03"; (p.Status == runner.Succeeded) != want {
				t.Errorf("%s %s: %s (%v)", p.Model, p.Partition, p.Status, p.Err)
			}
		case p.Model == "marts.rolling_revenue":
			// Day d reads d-6..d: the days from 01-03 to 01-09 read the failed one.
			reads := p.Partition >= "2024-01-03" && p.Partition <= "2024-01-09"
			if reads != (p.Status == runner.Skipped) {
				t.Errorf("%s %s: %s (%v)", p.Model, p.Partition, p.Status, p.Err)
			}
		}
	}
}

// unflushable is an adapter that defers its ledger records
// (adapters.Deferrer) and fails to write them at the end of the run.
type unflushable struct {
	adapters.Adapter
	flushes atomic.Int64
}

func (u *unflushable) Flush(context.Context) error {
	u.flushes.Add(1)
	return errors.New("recording 3 published partitions in the ledger: connection reset by peer")
}

func (u *unflushable) Unrecorded(context.Context, func(string) bool) ([]string, error) {
	return nil, nil
}

// A run whose adapter cannot record what it published fails, says why,
// and is recorded as failed, even though every partition succeeded.
func TestUnrecordedPublicationsFailTheRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	u := &unflushable{Adapter: e.db}
	r := e.with(u)
	pl, err := r.Plan(context.Background(), plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-03", Now: jan2024})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Run(context.Background(), pl, runner.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.flushes.Load() == 0 || s.Unrecorded == nil || s.Failed != 0 || s.Succeeded == 0 {
		t.Fatalf("flushes %d, summary %+v; want the partitions succeeded and the run's Unrecorded set", u.flushes.Load(), s)
	}
	runs, err := e.db.Runs(context.Background(), 1)
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	if runs[0].Status != adapters.RunFailed || runs[0].Error != s.Unrecorded.Error() {
		t.Errorf("the run is recorded %s (%q); want failed, with the ledger error", runs[0].Status, runs[0].Error)
	}
}
