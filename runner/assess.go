package runner

import (
	"fmt"

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
)

// assessment is what the ledger says of one partition.
type assessment struct {
	state       State
	reason      Reason // for stale: stale or upstream
	detail      string
	fingerprint string
	record      *adapters.Record
}

// assessor compares partitions with the ledger.
type assessor struct {
	scope  *models.Scope
	ledger *ledger
}

// fingerprint renders p of m alone, with the real table names, and hashes it.
func (a *assessor) fingerprint(m *models.Model, p models.Partition) (string, error) {
	sql, err := m.Render(a.scope, p)
	if err != nil {
		return "", err
	}
	return m.Fingerprint(sql), nil
}

func (a *assessor) assess(m *models.Model, p models.Partition) (assessment, error) {
	rec := a.ledger.record(m.Name, p.Key)
	if rec == nil {
		return assessment{state: StateMissing, reason: ReasonMissing}, nil
	}
	fp, err := a.fingerprint(m, p)
	if err != nil {
		return assessment{}, err
	}
	as := assessment{record: rec, fingerprint: fp}
	if rec.State == adapters.StateFailed {
		as.state, as.reason, as.detail = StateFailed, ReasonFailed, firstLine(rec.Error)
		return as, nil
	}
	if rec.Fingerprint != fp {
		as.state, as.reason = StateStale, ReasonStale
		as.detail = fmt.Sprintf("the model changed (fingerprint %s, now %s)", rec.Fingerprint, fp)
		return as, nil
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

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
