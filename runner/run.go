package runner

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// RunOptions tune how a plan runs.
type RunOptions struct {
	RunID string // generated when empty
	// Concurrency is how many units run at once; 0 means the adapter's
	// default (Info.DefaultConcurrency).
	Concurrency int
	// MaxConcurrency, when positive, caps Concurrency, the default
	// included (a target's concurrency: setting).
	MaxConcurrency int
	// Retries is how many times a unit that failed with a transient error
	// is retried, after RetryDelay doubled per attempt (with jitter).
	Retries    int
	RetryDelay time.Duration
	// Batch, when positive, overrides the batch size of every model that
	// declares batch: (see BatchSize).
	Batch int
	// SplitFailed retries each partition of a failed batch on its own.
	SplitFailed bool
	// FailFast stops launching work after the first failed partition.
	FailFast bool
	// Together stages and verifies every partition first, then publishes
	// all of them in one transaction (adapters with Info.MultiTable only).
	Together bool
	// Review, when set, is given the diff of every staged partition
	// against its table (as refill diff makes them: the rows that would be
	// published) once all are staged and before any is published. It
	// needs Together. An error it returns publishes nothing: every
	// partition is skipped with it as the reason. ReviewExamples is how
	// many example rows of each kind a diff carries.
	Review         func([]PartitionDiff) error
	ReviewExamples int
	// Wait is how long to wait for leases other runs hold; 0 fails at once.
	Wait     time.Duration
	LeaseTTL time.Duration // DefaultLeaseTTL when 0
	// Observe receives progress events, from the goroutine of each unit
	// running at once: it must be safe for concurrent use and not block
	// for long.
	Observe func(Event)
	// Stop, when closed, stops launching work: in-flight units finish (their
	// swaps commit or roll back) and the rest are skipped. Cancelling ctx
	// aborts in-flight work too; transactions keep every partition whole.
	Stop <-chan struct{}
	// Redact, when set, rewrites every error text the run writes to the
	// ledger (a failed partition's, the run's), to mask secrets a failed
	// statement may quote.
	Redact func(string) string
}

// redact applies o.Redact to text.
func (o RunOptions) redact(text string) string {
	if o.Redact == nil {
		return text
	}
	return o.Redact(text)
}

// ErrTogetherUnsupported is returned (wrapped) by Validate and Run for
// Together on an adapter that cannot commit several tables at once.
var ErrTogetherUnsupported = errors.New("--publish together is not supported")

// Validate reports whether the adapter described by info can run with o:
// it returns ErrTogetherUnsupported for Together on an adapter without
// Info.MultiTable. Run validates o first; callers validate early to
// refuse before planning.
func (o RunOptions) Validate(info adapters.Info) error {
	if o.Review != nil && !o.Together {
		return fmt.Errorf("%w: a review stages every partition before publishing any", ErrTogetherUnsupported)
	}
	if o.Review != nil && !info.MultiTable {
		return fmt.Errorf("%w on %s: --review stages every partition and publishes them together, in one transaction, which %s cannot commit (refill diff shows the same diff without publishing)", ErrTogetherUnsupported, info.Name, info.Name)
	}
	if o.Together && !info.MultiTable {
		return fmt.Errorf("%w on %s: it cannot commit several tables in one transaction (run without it to swap partition by partition)", ErrTogetherUnsupported, info.Name)
	}
	return nil
}

// runnable reports whether the adapter can publish what p rebuilds, in
// the way opts asks.
func (r *Runner) runnable(p *plan.Plan, opts RunOptions) error {
	if _, ok := r.Adapter.(adapters.Rebuilder); !ok && len(p.Rebuild) > 0 {
		for m := range p.Rebuild {
			return usageErrorf("%s is to be rebuilt (a full refresh), and the %s adapter cannot rebuild a table", m.Name, r.Adapter.Info().Name)
		}
	}
	if opts.Together && len(p.Rebuild) > 0 {
		for m := range p.Rebuild {
			return usageErrorf("%s is rebuilt (a full refresh), which replaces its table on its own: run it without --publish together", m.Name)
		}
	}
	return nil
}

// Run executes plan. Partition failures are reported in the Summary, not
// as an error; the error is for a run that could not start or finish (a
// held lease, an unreachable ledger). Blocked steps (Plan.Blocked) are not
// run; the summary reports them.
func (r *Runner) Run(ctx context.Context, p *plan.Plan, opts RunOptions) (*Summary, error) {
	info := r.Adapter.Info()
	if err := opts.Validate(info); err != nil {
		return nil, err
	}
	if err := r.runnable(p, opts); err != nil {
		return nil, err
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID(r.Now())
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = max(info.DefaultConcurrency, 1)
	}
	if opts.MaxConcurrency > 0 {
		opts.Concurrency = min(opts.Concurrency, opts.MaxConcurrency)
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Observe == nil {
		opts.Observe = func(Event) {}
	}
	e := &execution{r: r, plan: p, opts: opts, observe: opts.Observe, counts: map[string]map[string]int64{}, dag: &dag{}}
	e.summary = &Summary{RunID: opts.RunID, Started: r.Now(), Plan: p}
	settled := false // planned again since the plan given
	if p.Len() == 0 {
		fresh, err := r.settle(ctx, p, opts.RunID, opts.LeaseTTL, opts.Wait, opts.Observe)
		if err != nil {
			return nil, err
		}
		if err := r.runnable(fresh, opts); err != nil {
			return nil, err
		}
		settled = fresh != p
		p, e.plan, e.summary.Plan = fresh, fresh, fresh
	}
	if p.Len() == 0 {
		// Nothing to build, but a run that went on with a node down may
		// have left staging tables there, and no later run would drop
		// them. Dropping the stages of dead runs needs no lease (and
		// finds none where there is no ledger yet).
		r.dropDeadStages(ctx, opts.Observe)
		return e.finish(), nil
	}
	if err := r.Adapter.SetupLedger(ctx); err != nil {
		return nil, fmt.Errorf("setting up the ledger: %w", err)
	}
	sel := p.Selection
	sel.Shape = opts.shape()
	host, _ := os.Hostname()
	run := &adapters.Run{ID: opts.RunID, Target: r.Target, Status: adapters.RunRunning, Selection: sel.JSON(),
		Host: host, PID: os.Getpid(), StartedAt: e.summary.Started}
	err := r.leaseFresh(ctx, opts.RunID, e.tables(), opts.LeaseTTL, opts.Wait, opts.Observe, func(waited bool) ([]string, error) {
		if settled && !waited {
			return e.tables(), nil
		}
		fresh, err := r.Plan(ctx, p.Selection)
		if err != nil {
			return nil, fmt.Errorf("planning again: %w", err)
		}
		opts.Observe(replanned(waited, p, fresh))
		if err := r.runnable(fresh, opts); err != nil {
			return nil, err
		}
		p, e.plan, e.summary.Plan = fresh, fresh, fresh
		return e.tables(), nil
	})
	if err != nil {
		return nil, err
	}
	defer r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), opts.RunID)
	if err := r.Adapter.SaveRun(ctx, run); err != nil {
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	r.housekeeping(ctx, opts.RunID, opts.Observe)
	if err := r.saveVersions(ctx, p); err != nil {
		opts.Observe(Event{Kind: EventWarning, Message: fmt.Sprintf("recording model versions (p --explain needs them): %v", err)})
	}
	// A run that loses its leases (heartbeats failing past their expiry)
	// must stop writing: another run may take its tables.
	runCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	hbCtx, stopHeartbeat := context.WithCancel(runCtx)
	go r.heartbeat(hbCtx, opts.RunID, opts.LeaseTTL, opts.Observe, func(err error) {
		e.stop("not run: the run lost its leases")
		abort(err)
	})
	defer stopHeartbeat()

	e.dag = schedule(p, e.batchSize)
	opts.Observe(Event{Kind: EventStart, Total: len(e.nodes)})
	if opts.Together {
		e.together(runCtx)
	} else {
		e.loop(runCtx)
		e.cleanupStaged(runCtx) // the overlays of rebuilds
	}
	if d, ok := r.Adapter.(adapters.Deferrer); ok {
		// Before the leases go: the records of the last publications.
		e.summary.Unrecorded = d.Flush(context.WithoutCancel(ctx))
	}
	s := e.finish()
	e.warnEmpty()
	if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil {
		e.summary.LostLease = cause
	}

	run.FinishedAt, run.Succeeded, run.Failed, run.Skipped = s.Finished, s.Succeeded, s.Failed, s.Skipped+s.Blocked
	switch {
	case s.Interrupted:
		run.Status = adapters.RunInterrupted
	case s.Failed > 0 || s.Skipped > 0 || s.LostLease != nil || s.Unrecorded != nil:
		run.Status = adapters.RunFailed
	case s.Blocked > 0:
		run.Status = adapters.RunIncomplete
	default:
		run.Status = adapters.RunSucceeded
	}
	if s.LostLease != nil {
		run.Error = opts.redact(s.LostLease.Error())
	} else if s.Unrecorded != nil {
		run.Error = opts.redact(s.Unrecorded.Error())
	}
	if err := r.Adapter.SaveRun(context.WithoutCancel(ctx), run); err != nil {
		opts.Observe(Event{Kind: EventWarning, Message: fmt.Sprintf("recording the run's end: %v", err)})
	}
	return s, nil
}

// execution is the state of one Run.
type execution struct {
	r       *Runner
	plan    *plan.Plan
	opts    RunOptions
	observe func(Event)
	*dag    // the partitions, their units and results (schedule)
	summary *Summary

	mu       sync.Mutex
	stopping bool   // no new work is launched
	why      string // why the remaining work was skipped

	// For --publish together: units staged and verified but not yet
	// published, and the overlay views downstream models read.
	staged   []*stagedUnit
	overlays []models.Relation
	refs     map[string]models.SQL
	// counts are the rows this run staged per model and partition, for
	// audits that compare a partition with the previous one.
	counts map[string]map[string]int64
	// columns are the target tables' columns, as the run last saw them.
	columns tableColumns
	// this replaces, for a model that reads its own past while its earlier
	// partitions are staged but not published (--publish together, a
	// rebuild), its own table with an overlay of those stages.
	this map[*models.Model]models.SQL
}

// thisOf returns the overlay m reads as its own table, or "".
func (e *execution) thisOf(m *models.Model) models.SQL {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.this[m]
}

// overlaySelf makes m read its own table as the overlay of stages
// (replace: of the stages alone, for a rebuild).
func (e *execution) overlaySelf(ctx context.Context, m *models.Model, stages []*adapters.Stage, replace bool) error {
	ov, ok := e.r.Adapter.(adapters.Overlayer)
	if !ok {
		return fmt.Errorf("%s reads its own past, which %s cannot show it before publishing: run it without --publish together or a rebuild", m.Name, e.r.Adapter.Info().Name)
	}
	view, err := ov.Overlay(ctx, e.r.Scope.Relation(m), stages, replace)
	if err != nil {
		return fmt.Errorf("creating the overlay %s reads as its own table: %w", m.Name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.overlays = append(e.overlays, view)
	if e.this == nil {
		e.this = map[*models.Model]models.SQL{}
	}
	e.this[m] = models.SQL(view.Quote(e.r.Adapter.Dialect()))
	return nil
}

// rebuilding reports whether the run rebuilds m's whole table.
func (e *execution) rebuilding(m *models.Model) bool { return e.plan.Rebuild[m] }

func (e *execution) tables() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range e.targets() {
		if !seen[t.String()] {
			seen[t.String()] = true
			out = append(out, t.String())
		}
	}
	return out
}

func (e *execution) targets() []models.Relation {
	var out []models.Relation
	seen := map[*models.Model]bool{}
	for _, s := range e.plan.Runs() {
		if !seen[s.Model] {
			seen[s.Model] = true
			out = append(out, e.r.Scope.Relation(s.Model))
		}
	}
	return out
}

func (e *execution) batchSize(m *models.Model) int {
	if m.Kind() != models.TimePartitioned {
		return 1
	}
	return BatchSize(m, e.opts.Batch)
}

// BatchSize returns how many partitions of m one statement computes, with
// the --batch override (0 for none). Only models that declare batch: are
// batched: batching a model whose SQL is not batch-safe (one that selects
// {{ start }} as a value, say) would publish one partition's rows under
// another's key.
func BatchSize(m *models.Model, override int) int {
	if m.Kind() != models.TimePartitioned || m.Config.Batch == 0 {
		return 1
	}
	if override > 0 {
		return override
	}
	return m.Config.Batch
}

func (e *execution) stopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopping && e.opts.Stop != nil {
		select {
		case <-e.opts.Stop:
			e.stopping, e.why = true, "interrupted"
			e.summary.Signalled = true
		default:
		}
	}
	return e.stopping
}

// interrupted records that a stop request left work of the run undone:
// the run was interrupted, whatever else it finished.
func (e *execution) interrupted() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.summary.Signalled {
		e.summary.Interrupted = true
	}
}

func (e *execution) stop(why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopping {
		e.stopping, e.why = true, why
	}
}

// loop launches ready units, at most Concurrency at a time, until every
// node is final or the run stops.
func (e *execution) loop(ctx context.Context) {
	ready := &readyUnits{}
	for i := range e.units {
		if u := &e.units[i]; u.waiting == 0 {
			heap.Push(ready, u)
		}
	}
	done := make(chan *unit)
	running := 0
	stop := e.opts.Stop
	for {
		for running < e.opts.Concurrency && ready.Len() > 0 && !e.stopped() && ctx.Err() == nil {
			u := heap.Pop(ready).(*unit)
			running++
			go func() {
				e.runUnit(ctx, u)
				done <- u
			}()
		}
		if running == 0 {
			break
		}
		select {
		case u := <-done:
			running--
			for _, n := range u.nodes {
				for _, w := range e.waitersOf(n) {
					if w.waiting--; w.waiting == 0 {
						heap.Push(ready, w)
					}
				}
			}
		case <-stop:
			stop = nil
			e.stopped()
		}
	}
}

// readyUnits is a heap of units that may start, first in graph and
// partition order.
type readyUnits []*unit

func (h readyUnits) Len() int           { return len(h) }
func (h readyUnits) Less(i, j int) bool { return h[i].order < h[j].order }
func (h readyUnits) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyUnits) Push(x any)        { *h = append(*h, x.(*unit)) }
func (h *readyUnits) Pop() any {
	old := *h
	u := old[len(old)-1]
	*h = old[:len(old)-1]
	return u
}

// runUnit runs the unit's partitions whose upstreams all succeeded, as
// batches of adjacent partitions.
func (e *execution) runUnit(ctx context.Context, u *unit) {
	if e.rebuilding(u.model) {
		e.rebuildUnit(ctx, u)
		return
	}
	var runnable []*node
	for _, n := range u.nodes {
		if why := e.failedDep(n); why != "" {
			e.settle(n, PartitionResult{Status: Skipped, Err: errors.New(why)})
			continue
		}
		if n.run.Conditional && !e.changedDep(n) {
			// What it reads was refreshed and came out the same: it is
			// still done, as its record says.
			var rows int64
			if r := n.run.Record; r != nil {
				rows = r.Rows
			}
			e.settle(n, PartitionResult{Status: Succeeded, Rows: rows, Unchanged: true})
			continue
		}
		runnable = append(runnable, n)
	}
	for _, group := range runs(runnable) {
		if group[0].run.Reason == plan.ReasonRemove {
			e.runGroup(ctx, group) // one deletion
			continue
		}
		for len(group) > 0 {
			size := min(len(group), e.batchSize(u.model))
			e.runGroup(ctx, group[:size])
			group = group[size:]
		}
	}
}

// changedDep reports whether a partition n reads, planned in this run,
// published new rows.
func (g *dag) changedDep(n *node) bool {
	for _, d := range g.depsOf(n) {
		if d.result.Status == Succeeded && !d.result.Unchanged {
			return true
		}
	}
	return false
}

// failedDep explains why n cannot run, or returns "".
func (g *dag) failedDep(n *node) string { return g.failedDepOutside(n, nil) }

// runGroup runs one batch with retries, then splits it when it failed.
func (e *execution) runGroup(ctx context.Context, group []*node) {
	if e.stopped() || ctx.Err() != nil {
		return
	}
	_, err, attempts, dur := e.attempt(ctx, group, false)
	if err != nil && len(group) > 1 && e.opts.SplitFailed && !e.stopped() && ctx.Err() == nil {
		e.observe(Event{Kind: EventWarning, Model: group[0].run.Model.Name, Err: err,
			Message: fmt.Sprintf("batch %s failed; retrying its %d partitions one by one", keyRange(group), len(group))})
		for _, n := range group {
			e.runGroup(ctx, []*node{n})
		}
		return
	}
	if err != nil {
		e.fail(ctx, group, err, attempts, dur)
	}
}

// attempt runs group until it succeeds, fails for good, or runs out of
// retries. On success it settles the nodes, or with keep returns the
// staged unit for a later publication.
func (e *execution) attempt(ctx context.Context, group []*node, keep bool) (su *stagedUnit, err error, attempts int, dur time.Duration) {
	m := group[0].run.Model
	keys := make([]string, len(group))
	for i, n := range group {
		keys[i] = n.result.Partition
	}
	e.observe(Event{Kind: EventUnit, Model: m.Name, Partitions: keys})
	start := time.Now()
	for attempts = 1; ; attempts++ {
		var staged *stagedUnit
		staged, err = e.execute(ctx, group, attempts, keep)
		if err == nil {
			dur = time.Since(start)
			if keep {
				return staged, nil, attempts, dur
			}
			for i, n := range group {
				e.settle(n, PartitionResult{Status: Succeeded, Rows: staged.records[i].Rows, Attempts: attempts, Duration: dur, Unchanged: staged.unchanged})
			}
			return nil, nil, attempts, dur
		}
		if permanent(err) || !adapters.Transient(e.r.Adapter, err) || attempts > e.opts.Retries || e.stopped() || ctx.Err() != nil {
			return nil, err, attempts, time.Since(start)
		}
		delay := backoff(e.opts.RetryDelay, attempts)
		e.observe(Event{Kind: EventRetry, Model: m.Name, Partitions: keys, Attempt: attempts + 1, Delay: delay, Err: err})
		select {
		case <-ctx.Done():
			return nil, err, attempts, time.Since(start)
		case <-e.opts.Stop:
			return nil, err, attempts, time.Since(start)
		case <-time.After(delay):
		}
	}
}

// fail records the group's partitions as failed, in the ledger and the
// summary. An interrupted attempt is not a failure of the partition: its
// data is untouched, so it is reported as skipped and not recorded.
func (e *execution) fail(ctx context.Context, group []*node, err error, attempts int, dur time.Duration) {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		e.mu.Lock()
		e.summary.Interrupted = true
		e.mu.Unlock()
		for _, n := range group {
			e.settle(n, PartitionResult{Status: Skipped, Attempts: attempts, Err: errors.New("interrupted")})
		}
		return
	}
	now := e.r.Now()
	records := make([]adapters.Record, len(group))
	for i, n := range group {
		records[i] = e.failedRecord(n, err, attempts, now)
	}
	if lerr := e.r.Adapter.RecordPartitions(context.WithoutCancel(ctx), records); lerr != nil {
		e.observe(Event{Kind: EventWarning, Message: fmt.Sprintf("recording failure of %s %s: %v", group[0].run.Model.Name, keyRange(group), lerr)})
	}
	for _, n := range group {
		e.settle(n, PartitionResult{Status: Failed, Attempts: attempts, Duration: dur, Err: err})
	}
	if e.opts.FailFast {
		e.stop("not run: --fail-fast stopped the run after a failure")
	}
}

func (e *execution) failedRecord(n *node, err error, attempts int, now time.Time) adapters.Record {
	st := n.run
	part := n.part()
	rec := adapters.Record{Model: st.Model.Name, Partition: part.Key, State: adapters.RecordFailed,
		RunID: e.opts.RunID, Attempts: attempts, WindowStart: part.Start, WindowEnd: part.End,
		StartedAt: now, FinishedAt: now, Error: e.opts.redact(err.Error())}
	rec.Fingerprint = st.Model.Version(e.r.Scope).Fingerprint
	if prev := st.Record; prev != nil {
		// The table still holds the last published data.
		rec.Rows, rec.PublishedAt, rec.Watermark = prev.Rows, prev.PublishedAt, prev.Watermark
		if st.Model.Kind() != models.TimePartitioned {
			rec.WindowEnd = prev.WindowEnd // the horizon of those rows
		}
	}
	if errors.Is(err, adapters.ErrMaybePublished) {
		// Some of the new rows may be visible: what read the old ones is
		// stale from now on.
		rec.PublishedAt = now
	}
	return rec
}

// settle records n's final result.
func (e *execution) settle(n *node, res PartitionResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	res.Model, res.Partition = n.result.Model, n.result.Partition
	*n.result = res
	e.observe(Event{Kind: EventPartition, Model: res.Model, Partitions: []string{res.Partition}, Result: n.result})
}

// finish skips whatever did not run and totals the summary.
func (e *execution) finish() *Summary {
	s := e.summary
	why := e.why
	if why == "" {
		why = "not run"
	}
	skipped := errors.New(why) // one for all: a stop early in a long run skips millions
	for _, n := range e.nodes {
		if !n.done() {
			e.settle(n, PartitionResult{Status: Skipped, Err: skipped})
			// A stop that left work undone interrupted the run; one that
			// came after the last partition started did not.
			s.Interrupted = s.Interrupted || s.Signalled
		}
		switch n.result.Status {
		case Succeeded:
			s.Succeeded++
			if n.result.Unchanged {
				s.Unchanged++
			}
		case Failed:
			s.Failed++
		default:
			s.Skipped++
		}
	}
	s.Partitions = e.results
	for st := range e.plan.AllBlocked() {
		s.Partitions = append(s.Partitions, PartitionResult{Model: st.Model.Name, Partition: st.Partition.Key,
			Status: Blocked, Err: errors.New(st.Detail)})
		s.Blocked++
	}
	s.Finished = e.r.Now()
	return s
}

func keyRange(group []*node) string {
	return models.KeyRange(group[0].result.Partition, group[len(group)-1].result.Partition)
}
