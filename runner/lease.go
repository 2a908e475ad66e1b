package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner/plan"
)

// DefaultLeaseTTL is how long a lease lasts without a heartbeat. A run
// renews its leases every third of it; a crashed run's leases expire.
const DefaultLeaseTTL = time.Minute

// leasePoll is how often a waiting run retries a held lease.
const leasePoll = 2 * time.Second

// acquireLeases takes a lease on every table, in sorted order, waiting up
// to wait for leases other runs hold; waited says whether it had to. On
// failure it releases every lease of runID and returns the
// *adapters.LeaseHeldError.
func (r *Runner) acquireLeases(ctx context.Context, runID string, tables []string, ttl, wait time.Duration, observe func(Event)) (waited bool, err error) {
	sort.Strings(tables)
	host, _ := os.Hostname()
	deadline := r.Now().Add(wait)
	for _, t := range tables {
		for {
			now := r.Now()
			err := r.Adapter.AcquireLease(ctx, adapters.Lease{Table: t, RunID: runID, Host: host, PID: os.Getpid(),
				AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(ttl)})
			if err == nil {
				break
			}
			var held *adapters.LeaseHeldError
			if !errors.As(err, &held) || !now.Before(deadline) {
				r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
				return waited, err
			}
			waited = true
			observe(Event{Kind: EventWaiting, Message: fmt.Sprintf("waiting for %s: %v", t, held)})
			select {
			case <-ctx.Done():
				r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
				return waited, ctx.Err()
			case <-time.After(min(leasePoll, time.Until(deadline)+10*time.Millisecond)):
			}
		}
	}
	return waited, nil
}

// leaseFresh takes the leases of tables, as acquireLeases does. What the
// run writes was computed from a ledger that may have changed since: a
// run it waited for changed it, and a run that stopped without recording
// what it published (adapters.Deferrer) shows it only once its leases
// expire, which may be after the plan and before these leases. Then
// refresh computes it again and returns the tables it writes, and the
// leases of any it adds are taken too. On failure every lease of runID is
// released.
func (r *Runner) leaseFresh(ctx context.Context, runID string, tables []string, ttl, wait time.Duration, observe func(Event),
	refresh func(waited bool) ([]string, error)) error {
	waited, err := r.acquireLeases(ctx, runID, tables, ttl, wait, observe)
	if err != nil {
		return err
	}
	if !waited {
		dead, err := r.AnyUnrecorded(ctx)
		if err != nil {
			r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
			return err
		}
		if !dead {
			return nil
		}
	}
	now, err := refresh(waited)
	if err != nil {
		r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
		return err
	}
	var more []string
	for _, t := range now {
		if !slices.Contains(tables, t) {
			more = append(more, t)
		}
	}
	if len(more) == 0 {
		return nil
	}
	_, err = r.acquireLeases(ctx, runID, more, ttl, wait, observe)
	return err
}

// settle returns p, or p planned again when what p read may have changed
// under it, for a plan with nothing to build (which takes no lease): a run
// that defers its records (adapters.Deferrer) and holds a table p selects
// may still publish there, or die and leave publications it did not
// record. Such a run is waited for (up to wait; past it the
// *adapters.LeaseHeldError is returned, as to a run with work), and so are
// the publications of stopped runs.
func (r *Runner) settle(ctx context.Context, p *plan.Plan, runID string, ttl, wait time.Duration, observe func(Event)) (*plan.Plan, error) {
	if _, ok := r.Adapter.(adapters.Deferrer); !ok {
		return p, nil
	}
	leases, err := r.Adapter.Leases(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading leases: %w", err)
	}
	selected := map[string]bool{}
	for _, m := range p.Models {
		selected[r.Scope.Relation(m).String()] = true
	}
	now := r.Now()
	var busy []string
	for _, l := range leases {
		if selected[l.Table] && l.RunID != runID && l.ExpiresAt.After(now) && !slices.Contains(busy, l.Table) {
			busy = append(busy, l.Table)
		}
	}
	if len(busy) > 0 {
		_, err := r.acquireLeases(ctx, runID, busy, ttl, wait, observe)
		if err != nil {
			return nil, err
		}
		if err := r.Adapter.ReleaseLeases(ctx, runID); err != nil {
			return nil, err
		}
	} else {
		dead, err := r.AnyUnrecorded(ctx)
		if err != nil || !dead {
			return p, err
		}
	}
	fresh, err := r.Plan(ctx, p.Selection)
	if err != nil {
		return nil, fmt.Errorf("planning again: %w", err)
	}
	if fresh.Len() > 0 || fresh.LenBlocked() > 0 {
		observe(replanned(len(busy) > 0, p, fresh))
	}
	return fresh, nil
}

// replanned is the event of a run that planned again, after waiting for
// another run or for what stopped runs left unrecorded.
func replanned(waited bool, was, now *plan.Plan) Event {
	why := "with what stopped runs may have published without recording it"
	if waited {
		why = "from the ledger as the other run left it"
	}
	return Event{Kind: EventWaiting, Message: fmt.Sprintf("planned again, %s: %d partitions to run, %d blocked (the plan shown had %d and %d)",
		why, now.Len(), now.LenBlocked(), was.Len(), was.LenBlocked())}
}

// heartbeat renews runID's leases until ctx is done. A renewal that fails
// is retried at the next tick; when the leases expire before one
// succeeds, another run may take the tables, so lost is called and the
// heartbeat stops.
func (r *Runner) heartbeat(ctx context.Context, runID string, ttl time.Duration, observe func(Event), lost func(error)) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	renewed := r.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := r.Now()
			err := r.Adapter.RenewLeases(ctx, runID, now, now.Add(ttl))
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				renewed = now
				continue
			}
			if !now.Before(renewed.Add(ttl)) {
				lost(fmt.Errorf("the run's leases expired at %s and could not be renewed (%v); it stopped writing",
					renewed.Add(ttl).UTC().Format(time.RFC3339), err))
				return
			}
			observe(Event{Kind: EventWarning, Message: fmt.Sprintf("renewing leases (they expire at %s): %v", renewed.Add(ttl).UTC().Format("15:04:05"), err)})
		}
	}
}

// housekeeping records runs that were killed (still "running", with
// every lease expired) as abandoned, and drops the staging tables of the
// ledger's runs that hold no live lease. Errors are warnings: they do not
// stop the run.
func (r *Runner) housekeeping(ctx context.Context, runID string, observe func(Event)) {
	live, lastBeat, err := r.LiveRuns(ctx, runID)
	if err != nil {
		observe(Event{Kind: EventWarning, Message: err.Error()})
		return
	}
	now := r.Now()
	if runs, err := r.Adapter.Runs(ctx, abandonedScan); err != nil {
		observe(Event{Kind: EventWarning, Message: fmt.Sprintf("reading runs: %v", err)})
	} else {
		for _, run := range runs {
			if run.Status != adapters.RunRunning || run.ID == runID || live[adapters.RunToken(run.ID)] {
				continue
			}
			// A run records itself before it stages anything, after taking
			// its leases; with none live it is gone.
			if now.Sub(run.StartedAt) < DefaultLeaseTTL {
				continue
			}
			run.Status = adapters.RunAbandoned
			run.FinishedAt = lastBeat[run.ID]
			if run.FinishedAt.IsZero() {
				run.FinishedAt = run.StartedAt
			}
			run.Error = "abandoned: the run stopped without recording its end (killed?); its leases expired"
			if err := r.Adapter.SaveRun(ctx, run); err != nil {
				observe(Event{Kind: EventWarning, Message: fmt.Sprintf("recording run %s as abandoned: %v", run.ID, err)})
				continue
			}
			observe(Event{Kind: EventHousekeeping, Message: fmt.Sprintf("run %s (pid %d on %s) was abandoned; recorded it", run.ID, run.PID, run.Host)})
		}
	}
	// The stages of dead runs are the evidence of what they published
	// without recording it: recorded pending first, then dropped.
	if err := r.recordUnrecorded(ctx, live); err != nil {
		observe(Event{Kind: EventWarning, Message: fmt.Sprintf("%v; the staging tables of stopped runs are kept for the next run", err)})
		return
	}
	r.cleanStages(ctx, live, observe)
}

// dropDeadStages drops the staging tables of the ledger's runs that hold
// no live lease, for a run that has nothing to build (so takes no lease). If a
// stage may hold a publication the ledger does not show, they are all
// left to the next run that builds something: recording it pending
// would make a run that built nothing change what status says.
func (r *Runner) dropDeadStages(ctx context.Context, observe func(Event)) {
	if _, ok := r.Adapter.(adapters.StageCleaner); !ok {
		return
	}
	live, _, err := r.LiveRuns(ctx, "")
	if err != nil {
		observe(Event{Kind: EventWarning, Message: err.Error()})
		return
	}
	pending, err := r.Unrecorded(ctx, live)
	if err != nil {
		observe(Event{Kind: EventWarning, Message: fmt.Sprintf("%v; the staging tables of stopped runs are kept for the next run", err)})
		return
	}
	if len(pending) > 0 {
		observe(Event{Kind: EventHousekeeping, Message: fmt.Sprintf("kept the staging tables of stopped runs: they may hold %d unrecorded publications, which the next run that builds records", len(pending))})
		return
	}
	r.cleanStages(ctx, live, observe)
}

// cleanStages drops the staging tables of the runs dead to this ledger
// (plan.DeadRuns): those of another ledger's runs are left to it.
func (r *Runner) cleanStages(ctx context.Context, live map[string]bool, observe func(Event)) {
	c, ok := r.Adapter.(adapters.StageCleaner)
	if !ok {
		return
	}
	dead := r.DeadRuns(ctx, live)
	if err := errors.Join(c.CleanStages(ctx, dead.Dead), dead.Err()); err != nil {
		observe(Event{Kind: EventWarning, Message: fmt.Sprintf("dropping staging tables that stopped runs left: %v", err)})
	}
}

// abandonedScan is how many recent runs housekeeping looks at.
const abandonedScan = 100

// RecentRuns returns the latest n runs, newest first. A run still marked
// running whose leases have all expired is reported as abandoned (a later
// run records it so).
func (r *Runner) RecentRuns(ctx context.Context, n int) ([]*adapters.Run, error) {
	runs, err := r.Adapter.Runs(ctx, n)
	if err != nil || len(runs) == 0 {
		return runs, err
	}
	leases, err := r.Adapter.Leases(ctx)
	if err != nil {
		return nil, err
	}
	now := r.Now()
	live := map[string]bool{}
	for _, l := range leases {
		if l.ExpiresAt.After(now) {
			live[l.RunID] = true
		}
	}
	for _, run := range runs {
		if run.Status == adapters.RunRunning && !live[run.ID] && now.Sub(run.StartedAt) >= DefaultLeaseTTL {
			run.Status = adapters.RunAbandoned
		}
	}
	return runs, nil
}
