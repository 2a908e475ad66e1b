package plan

import (
	"fmt"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// State is a partition's state as plan and status report it.
type State string

// Partition states.
const (
	StateDone    State = "done"
	StateMissing State = "missing"
	StateStale   State = "stale"
	StateFailed  State = "failed"
	// StatePending: a publication was started and may or may not have
	// finished (a crash between a non-transactional swap and its ledger
	// row); the partition and what reads it are redone.
	StatePending State = "pending"
	// StatePartial: published before its window was complete.
	StatePartial State = "partial"
	// StateDrift: the table does not hold what the ledger recorded (it
	// was dropped, or rows were deleted or added outside refill).
	StateDrift State = "drift"
	// StateOutside: built, but outside the model's start..end now (its
	// start: moved later, or its end: earlier): the next run deletes its
	// rows.
	StateOutside State = "outside"
)

// Reason says why a plan runs a partition.
type Reason string

// Plan reasons.
const (
	ReasonMissing   Reason = "missing"   // never built
	ReasonFailed    Reason = "failed"    // the last attempt failed
	ReasonStale     Reason = "stale"     // the model's SQL or config changed
	ReasonUpstream  Reason = "upstream"  // an upstream partition was rewritten after it was built
	ReasonForced    Reason = "forced"    // --mode all
	ReasonLookback  Reason = "lookback"  // inside the late-data lookback window
	ReasonWatermark Reason = "watermark" // inside the lookback window, and the source's watermark moved
	// ReasonSource: the rows of a tracked source (models.Source) inside the
	// partition's window changed since it was built: late, deleted or
	// updated rows, found by their fingerprint, anywhere in history.
	ReasonSource  Reason = "source"
	ReasonPending Reason = "pending" // its last publication may not have finished
	ReasonPartial Reason = "partial" // published before its window was complete
	ReasonDrift   Reason = "drift"   // the table does not hold what the ledger recorded
	ReasonRebuild Reason = "rebuild" // the whole table is rebuilt (--full-refresh, on_schema_change: rebuild)
	// ReasonRemove: a built partition outside the model's start..end
	// (start: moved later, end: earlier): the run deletes its rows and
	// records it removed.
	ReasonRemove Reason = "remove"
	// ReasonRefresh: a whole-table or list model that is done, rebuilt by a
	// scheduled run as its refresh rule says (it reads a source refill
	// does not track). When its new rows equal its table's, nothing is
	// published and what reads it stays done.
	ReasonRefresh Reason = "refresh"
	// ReasonBlocked marks a partition that needs to run but reads upstream
	// partitions that are missing, failed or blocked, which the plan does
	// not build (Plan.Blocked).
	ReasonBlocked Reason = "blocked"
)

// Reasons lists every reason, in the order plan summarizes them.
var Reasons = []Reason{ReasonMissing, ReasonFailed, ReasonPending, ReasonStale, ReasonUpstream, ReasonDrift,
	ReasonPartial, ReasonSource, ReasonLookback, ReasonWatermark, ReasonRefresh, ReasonForced, ReasonRebuild, ReasonRemove, ReasonBlocked}

// assessment is what the ledger says of one partition.
type assessment struct {
	state       State
	reason      Reason // for stale: stale or upstream
	detail      string
	fingerprint string
	record      *adapters.Record
}

// assessor compares partitions with the ledger and the tables.
type assessor struct {
	scope  *models.Scope
	ledger *ledger
	tables map[string]*TableFacts
	now    time.Time // the clock that decides which windows are complete
}

// fingerprint returns m's current version's fingerprint.
func (a *assessor) fingerprint(m *models.Model) string {
	return m.Version(a.scope).Fingerprint
}

func (a *assessor) assess(m *models.Model, p models.Partition) (assessment, error) {
	rec := a.ledger.record(m.Name, p.Key)
	if rec == nil || rec.State == adapters.RecordRemoved {
		// (A removed partition back in range, start: moved back, is
		// built again.)
		return assessment{state: StateMissing, reason: ReasonMissing}, nil
	}
	as := assessment{record: rec}
	switch rec.State {
	case adapters.RecordFailed:
		as.state, as.reason, as.detail = StateFailed, ReasonFailed, firstLine(rec.Error)
		return as, nil
	case adapters.RecordPending:
		as.state, as.reason = StatePending, ReasonPending
		as.detail = fmt.Sprintf("run %s started publishing it at %s and did not record the outcome", rec.RunID, rec.PublishedAt.UTC().Format("2006-01-02 15:04:05"))
		if rec.Error != "" { // found from a kept stage (plan.Reader.Unrecorded)
			as.detail = firstLine(rec.Error)
		}
		return as, nil
	}
	if why := a.drifted(m, p, rec); why != "" {
		as.state, as.reason, as.detail = StateDrift, ReasonDrift, why
		return as, nil
	}
	fp := a.fingerprint(m)
	as.fingerprint = fp
	if rec.Fingerprint != fp {
		as.state, as.reason = StateStale, ReasonStale
		as.detail = fmt.Sprintf("the model changed since it was built (version %s, now %s; plan --explain shows the difference)", rec.Fingerprint, fp)
		return as, nil
	}
	if rec.State == adapters.RecordPartial && !a.now.IsZero() {
		as.state, as.reason = StatePartial, ReasonPartial
		if complete := p.End.Add(m.Config.Delay); !a.now.Before(complete) {
			as.detail = fmt.Sprintf("published at %s, before its window was complete (at %s)",
				rec.StartedAt.UTC().Format("2006-01-02 15:04"), complete.UTC().Format("2006-01-02 15:04"))
		} else {
			as.detail = "its window is still open (allow_partial): refreshed on every run"
		}
		return as, nil
	}
	if m.Config.Self {
		// A cumulative model reads its own earlier partition; its first
		// reads an empty one.
		prev := m.Next(p, -1)
		r := a.ledger.record(m.Name, prev.Key)
		switch {
		case r == nil:
		case !p.Start.After(m.Config.Start) && (r.State.Published() || r.PublishedAt.After(rec.StartedAt)):
			as.state, as.reason = StateStale, ReasonUpstream
			as.detail = fmt.Sprintf("it is the first partition since start: moved, and read its own earlier partition %s, which must read as empty", prev.Key)
			return as, nil
		case p.Start.After(m.Config.Start) && r.PublishedAt.After(rec.StartedAt) && !r.PublishedAt.Equal(rec.PublishedAt):
			as.state, as.reason = StateStale, ReasonUpstream
			as.detail = fmt.Sprintf("its own earlier partition %s was republished at %s, after this was built", prev.Key, r.PublishedAt.UTC().Format("2006-01-02 15:04:05"))
			return as, nil
		}
	}
	for _, up := range m.Upstream {
		published, key := a.ledger.lastPublished(up, models.DependencySpan(m, p, up))
		// Stale when the upstream was republished after this partition
		// began computing, unless both were published together, in one
		// transaction (--publish together): then it read those rows.
		if published.After(rec.StartedAt) && !published.Equal(rec.PublishedAt) {
			as.state, as.reason = StateStale, ReasonUpstream
			as.detail = fmt.Sprintf("upstream %s %s was republished at %s, after this was built", up.Name, key, published.UTC().Format("2006-01-02 15:04:05"))
			return as, nil
		}
	}
	as.state = StateDone
	return as, nil
}

// drifted says how partition p of m's table differs from its published
// record rec, or returns "" when it does not (or nothing was checked).
func (a *assessor) drifted(m *models.Model, p models.Partition, rec *adapters.Record) string {
	tf := a.tables[m.Name]
	if tf == nil || !rec.State.Published() {
		return ""
	}
	if !tf.Exists {
		return fmt.Sprintf("the table %s does not exist", tf.Relation)
	}
	if tf.Rows == nil {
		return ""
	}
	if n := tf.Rows[p.Key]; n != rec.Rows {
		return fmt.Sprintf("the table holds %d rows in this partition; the ledger recorded %d", n, rec.Rows)
	}
	return ""
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
