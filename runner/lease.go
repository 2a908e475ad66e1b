package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/refill/refill/adapters"
)

// DefaultLeaseTTL is how long a lease lasts without a heartbeat. A run
// renews its leases every third of it; a crashed run's leases expire.
const DefaultLeaseTTL = time.Minute

// leasePoll is how often a waiting run retries a held lease.
const leasePoll = 2 * time.Second

// acquireLeases takes a lease on every table, in sorted order, waiting up
// to wait for leases other runs hold. On failure it releases what it took
// and returns the *adapters.LeaseHeldError.
func (r *Runner) acquireLeases(ctx context.Context, runID string, tables []string, ttl, wait time.Duration, observe func(Event)) error {
	sort.Strings(tables)
	host, _ := os.Hostname()
	deadline := r.now().Add(wait)
	for _, t := range tables {
		for {
			now := r.now()
			err := r.Adapter.AcquireLease(ctx, adapters.Lease{Table: t, RunID: runID, Host: host, PID: os.Getpid(),
				AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(ttl)})
			if err == nil {
				break
			}
			var held *adapters.LeaseHeldError
			if !errors.As(err, &held) || !now.Before(deadline) {
				r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
				return err
			}
			observe(Event{Kind: EventWaiting, Message: fmt.Sprintf("waiting for %s: %v", t, held)})
			select {
			case <-ctx.Done():
				r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
				return ctx.Err()
			case <-time.After(min(leasePoll, time.Until(deadline)+10*time.Millisecond)):
			}
		}
	}
	return nil
}

// heartbeat renews runID's leases until ctx is done.
func (r *Runner) heartbeat(ctx context.Context, runID string, ttl time.Duration, observe func(Event)) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := r.now()
			if err := r.Adapter.RenewLeases(ctx, runID, now, now.Add(ttl)); err != nil && ctx.Err() == nil {
				observe(Event{Kind: EventWarning, Message: fmt.Sprintf("renewing leases: %v", err)})
			}
		}
	}
}
