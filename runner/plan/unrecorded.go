package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Publications a dead run did not record. An adapter that writes ledger
// records after its swaps (adapters.Deferrer) keeps each published stage
// until its records are written, so the staging tables a dead run left
// name what it may have published unrecorded: the partitions of each
// stage's window. Each such partition is pending, as if the run had
// recorded it so before its swap, unless a record of that run or of a
// later one says otherwise. Planning and status read them so; a run
// records them before it drops the stages.
//
// When such a publication happened is known only within bounds: after the
// run started, and before its last lease expired (a run publishes only
// while it holds its tables). A pending record says the later bound, so
// that a partition built downstream after it reads as fresh, one built
// before it as stale, and two plans read the same ledger alike.

// LiveRuns returns the tokens of the runs holding an unexpired lease (and
// of runID), and each run's last heartbeat.
func (r *Reader) LiveRuns(ctx context.Context, runID string) (live map[string]bool, lastBeat map[string]time.Time, err error) {
	leases, err := r.Adapter.Leases(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading leases: %w", err)
	}
	now := r.Now()
	live, lastBeat = map[string]bool{}, map[string]time.Time{}
	if runID != "" {
		live[adapters.RunToken(runID)] = true
	}
	for _, l := range leases {
		if l.ExpiresAt.After(now) {
			live[adapters.RunToken(l.RunID)] = true
		}
		if l.HeartbeatAt.After(lastBeat[l.RunID]) {
			lastBeat[l.RunID] = l.HeartbeatAt
		}
	}
	return live, lastBeat, nil
}

// DeadRuns says which runs are dead to this ledger, given the tokens of
// the live ones (LiveRuns): the runs it recorded (a run records itself
// before it stages anything) that hold no live lease. The runs of another
// ledger (a target with another ledger_schema whose stage schema is this
// one's) are never dead to it, whatever their leases: their tables are
// that ledger's evidence of what they published, not this one's to record
// or drop. Dead reads the ledger once per token, and may be called from
// several goroutines.
type DeadRuns struct {
	ctx    context.Context
	ledger adapters.Ledger
	live   map[string]bool

	mu    sync.Mutex
	known map[string]bool // token: recorded in this ledger
	err   error
}

// DeadRuns returns the dead runs of this ledger, given the live ones.
func (r *Reader) DeadRuns(ctx context.Context, live map[string]bool) *DeadRuns {
	return &DeadRuns{ctx: ctx, ledger: r.Adapter, live: live, known: map[string]bool{}}
}

// Dead reports whether the run of token (adapters.RunToken) is dead. A
// run whose record cannot be read counts as alive, so its tables stay;
// Err says why.
func (d *DeadRuns) Dead(token string) bool {
	if d.live[token] {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ours, seen := d.known[token]
	if !seen {
		_, err := d.ledger.LoadRun(d.ctx, runIDOf(token))
		switch {
		case err == nil:
			ours = true
		case !errors.Is(err, adapters.ErrRunNotFound) && d.err == nil:
			d.err = fmt.Errorf("reading run %s: %w", runIDOf(token), err)
		}
		d.known[token] = ours
	}
	return ours
}

// Err returns the first error of reading a run, if any.
func (d *DeadRuns) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// unrecordedStages returns the staging tables dead runs left that may hold
// unrecorded publications; none unless the adapter defers its records.
func (r *Reader) unrecordedStages(ctx context.Context, live map[string]bool) ([]string, error) {
	d, ok := r.Adapter.(adapters.Deferrer)
	if !ok {
		return nil, nil
	}
	dead := r.DeadRuns(ctx, live)
	names, err := d.Unrecorded(ctx, dead.Dead)
	if err = cmp.Or(err, dead.Err()); err != nil {
		return nil, fmt.Errorf("listing the staging tables of stopped runs: %w", err)
	}
	return names, nil
}

// unrecordedRecords returns a pending record for every partition the
// stages may hold that records (the ledger's latest, one per partition)
// do not show recorded by the stage's run or a later one.
func (r *Reader) unrecordedRecords(ctx context.Context, stages []string, records []adapters.Record) ([]adapters.Record, error) {
	if len(stages) == 0 {
		return nil, nil
	}
	last := map[string]*adapters.Record{}
	for i := range records {
		last[records[i].Model+"\x00"+records[i].Partition] = &records[i]
	}
	stopped, err := r.stoppedBy(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []adapters.Record
	for _, name := range stages {
		m := r.stageModel(name)
		token, ok := adapters.StageRun(name)
		started, ok2 := adapters.TokenTime(token)
		if m == nil || !ok || !ok2 {
			continue
		}
		var parts []models.Partition
		switch m.Kind() {
		case models.TimePartitioned:
			start, end, ok := adapters.StageWindow(name)
			if !ok {
				continue // made by a refill that recorded pending before its swaps
			}
			// Every partition of the window, those outside the model's
			// range too: a removal publishes an empty stage over
			// partitions the model no longer has.
			for p := m.PartitionAt(start); p.Start.Before(end); p = m.Next(p, 1) {
				if !p.Start.Before(start) && !p.End.After(end) {
					parts = append(parts, p)
				}
			}
		default:
			parts = m.Partitions(time.Time{}, time.Time{})
		}
		for _, p := range parts {
			k := m.Name + "\x00" + p.Key
			prev := last[k]
			if seen[k] || prev != nil && (adapters.RunToken(prev.RunID) == token || prev.StartedAt.After(started)) {
				continue
			}
			seen[k] = true
			by, known := stopped[token]
			if !known {
				by = r.Now() // the run left no trace of its end: it may have published until now
			}
			by = latest(by, started)
			rec := adapters.Record{Model: m.Name, Partition: p.Key, State: adapters.RecordPending, RunID: runIDOf(token),
				Attempts: 1, WindowStart: p.Start, WindowEnd: p.End, StartedAt: started, FinishedAt: started, PublishedAt: by,
				Error: fmt.Sprintf("run %s may have published it, before %s, and stopped without recording it (it kept the staging table %s)",
					runIDOf(token), by.UTC().Format("2006-01-02 15:04:05"), name)}
			if prev != nil {
				rec.Fingerprint, rec.Rows, rec.Watermark = prev.Fingerprint, prev.Rows, prev.Watermark
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// stoppedBy returns, for each run token the leases or the runs name, when
// the run stopped writing at the latest: when its last lease expired, or
// else when it recorded its own end. (An abandoned run's end, recorded by
// another, is its last heartbeat: it may have published after it.)
func (r *Reader) stoppedBy(ctx context.Context) (map[string]time.Time, error) {
	leases, err := r.Adapter.Leases(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading leases: %w", err)
	}
	by := map[string]time.Time{}
	for _, l := range leases {
		if t := adapters.RunToken(l.RunID); l.ExpiresAt.After(by[t]) {
			by[t] = l.ExpiresAt
		}
	}
	runs, err := r.Adapter.Runs(ctx, stoppedScan)
	if err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	for _, run := range runs {
		if t := adapters.RunToken(run.ID); by[t].IsZero() && !run.FinishedAt.IsZero() && run.Status != adapters.RunAbandoned {
			by[t] = run.FinishedAt
		}
	}
	return by, nil
}

// stoppedScan is how many recent runs stoppedBy reads.
const stoppedScan = 100

// stageModel returns the model whose table a staging table was made for.
func (r *Reader) stageModel(name string) *models.Model {
	for _, m := range r.Project.Models {
		prefix := adapters.StagePrefix(r.Scope.Relation(m))
		if len(name) > len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) && !strings.Contains(name[len(prefix):], "__") {
			return m
		}
	}
	return nil
}

// runIDOf returns the run ID a token was made from (RunToken of
// 20240102T030405Z-1a2b3c is 20240102t030405z1a2b3c).
func runIDOf(token string) string {
	if len(token) <= 16 {
		return token
	}
	return strings.ToUpper(token[:16]) + "-" + token[16:]
}

// deadStages returns the stages that dead runs kept because they may have
// published them without recording it (adapters.Deferrer).
func (r *Reader) deadStages(ctx context.Context) ([]string, error) {
	if _, ok := r.Adapter.(adapters.Deferrer); !ok {
		return nil, nil
	}
	live, _, err := r.LiveRuns(ctx, "")
	if err != nil {
		return nil, err
	}
	return r.unrecordedStages(ctx, live)
}

// AnyUnrecorded reports whether dead runs may have published stages they
// did not record.
func (r *Reader) AnyUnrecorded(ctx context.Context) (bool, error) {
	stages, err := r.deadStages(ctx)
	return len(stages) > 0, err
}

// withUnrecorded overlays records with the pending records of what dead
// runs may have published unrecorded.
func (r *Reader) withUnrecorded(ctx context.Context, records []adapters.Record) ([]adapters.Record, error) {
	stages, err := r.deadStages(ctx)
	if err != nil || len(stages) == 0 {
		return records, err
	}
	pending, err := r.unrecordedRecords(ctx, stages, records)
	if err != nil || len(pending) == 0 {
		return records, err
	}
	replace := map[string]adapters.Record{}
	for _, p := range pending {
		replace[p.Model+"\x00"+p.Partition] = p
	}
	out := make([]adapters.Record, 0, len(records)+len(pending))
	for _, rec := range records {
		if p, ok := replace[rec.Model+"\x00"+rec.Partition]; ok {
			out = append(out, p)
			delete(replace, rec.Model+"\x00"+rec.Partition)
			continue
		}
		out = append(out, rec)
	}
	for _, p := range pending {
		if _, ok := replace[p.Model+"\x00"+p.Partition]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// Unrecorded returns the pending records of what the stages of
// dead runs may hold and the ledger does not show recorded since: none
// when every such stage's publication was recorded (by its run, on a
// later attempt, or by a later run).
func (r *Reader) Unrecorded(ctx context.Context, live map[string]bool) ([]adapters.Record, error) {
	stages, err := r.unrecordedStages(ctx, live)
	if err != nil || len(stages) == 0 {
		return nil, err
	}
	var names []string
	for _, m := range r.Project.Models {
		names = append(names, m.Name)
	}
	records, err := r.Adapter.Partitions(ctx, names)
	if err != nil {
		return nil, err
	}
	return r.unrecordedRecords(ctx, stages, records)
}
