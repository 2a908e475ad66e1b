package adapters

import (
	"context"
	"time"

	"github.com/refill/refill/models"
)

// Ledger is the part of an adapter that keeps refill's records inside the
// warehouse: one row per partition, one per run, one lease per target table.
type Ledger interface {
	// SetupLedger creates the ledger's schema and tables if they are
	// missing. It is idempotent; read-only commands never call it.
	SetupLedger(ctx context.Context) error
	// Partitions returns the current record of every partition of the named
	// models. A ledger that does not exist yet holds no records.
	Partitions(ctx context.Context, models []string) ([]Record, error)
	// RecordPartitions writes records outside a swap (failed partitions),
	// replacing any earlier record of the same partition.
	RecordPartitions(ctx context.Context, records []Record) error
	// SaveRun inserts or replaces a run's record.
	SaveRun(ctx context.Context, run *Run) error
	// LoadRun returns the run with id, or an error wrapping ErrRunNotFound.
	LoadRun(ctx context.Context, id string) (*Run, error)
	// Runs returns the latest runs, newest first, at most limit of them.
	Runs(ctx context.Context, limit int) ([]*Run, error)
	// Leases returns every lease not released, expired or not.
	Leases(ctx context.Context) ([]Lease, error)
	// SaveVersions inserts model versions, replacing those with the same
	// model and fingerprint.
	SaveVersions(ctx context.Context, versions []Version) error
	// Versions returns every version the ledger keeps of the named models.
	Versions(ctx context.Context, models []string) ([]Version, error)
	// AcquireLease takes the lease on l.Table for l.RunID. It fails with a
	// *LeaseHeldError when another run holds an unexpired lease.
	AcquireLease(ctx context.Context, l Lease) error
	// RenewLeases moves the expiry of every lease runID holds to expires.
	RenewLeases(ctx context.Context, runID string, now, expires time.Time) error
	// ReleaseLeases drops every lease runID holds.
	ReleaseLeases(ctx context.Context, runID string) error
}

// RecordState is a partition's state in the ledger (the planner's
// plan.State derives more from it).
type RecordState string

// Ledger states. Missing and stale are not stored: they are derived by
// comparing the ledger with the models.
const (
	RecordDone RecordState = "done"
	// RecordPartial is a partition published before its window was
	// complete (allow_partial); it is redone once the window closes.
	RecordPartial RecordState = "partial"
	RecordFailed  RecordState = "failed"
	// RecordPending records a publication that has started but not been
	// confirmed, for adapters whose swap and ledger write are not one
	// transaction: after a crash the table may hold the old rows or the
	// new, and the runner redoes the partition and everything reading it.
	// PublishedAt holds when the publication started.
	RecordPending RecordState = "pending"
	// RecordRemoved is a partition outside its model's start..end (the
	// model's start: moved later, or its end: earlier) whose rows a run
	// deleted. PublishedAt is when, so that what read it is stale.
	RecordRemoved RecordState = "removed"
)

// Published reports whether a record in state s describes rows the table
// holds: done or partial.
func (s RecordState) Published() bool { return s == RecordDone || s == RecordPartial }

// Record is a partition's row in the ledger.
type Record struct {
	Model     string
	Partition string
	State     RecordState
	// Fingerprint identifies the statement and config of the last attempt;
	// for a done partition, of the data in the table.
	Fingerprint string
	// Rows is the number of rows published; for a failed partition, the
	// rows still in the table from its last success.
	Rows     int64
	RunID    string
	Attempts int // attempts the last run made
	// WindowStart and WindowEnd are the partition's window in UTC; zero
	// for list and whole-table partitions.
	WindowStart, WindowEnd time.Time
	StartedAt, FinishedAt  time.Time // of the last attempt
	// PublishedAt is when the data now in the table was published; zero if
	// it never was. A downstream partition built before its upstream's
	// PublishedAt is stale.
	PublishedAt time.Time
	Error       string // why the last attempt failed
	Watermark   string // the source's freshness marker when last published
}

// RunStatus is a run's outcome.
type RunStatus string

// Run statuses.
const (
	RunRunning     RunStatus = "running"
	RunSucceeded   RunStatus = "succeeded"
	RunFailed      RunStatus = "failed"
	RunInterrupted RunStatus = "interrupted"
	// RunIncomplete is a run that failed nothing but left partitions of
	// its selection blocked: they read upstream partitions that are not
	// there.
	RunIncomplete RunStatus = "incomplete"
	// RunAbandoned is a run that stopped without recording its end (it
	// was killed): its leases expired while it was still running.
	RunAbandoned RunStatus = "abandoned"
	// RunAccepted records a refill accept: no data was computed; ledger
	// records took a new model version (forward-only).
	RunAccepted RunStatus = "accepted"
	// RunPruned records a refill prune: the tables of models the project
	// no longer has were dropped, and their partitions recorded removed.
	RunPruned RunStatus = "pruned"
)

// Run is one invocation of refill run.
type Run struct {
	ID     string
	Target string
	Status RunStatus
	// Selection is the run's resolved selection as JSON, so --resume can
	// repeat it exactly. Adapters store it without reading it.
	Selection  string
	Host       string
	PID        int
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	Succeeded  int
	Failed     int
	Skipped    int
	Error      string
}

// Version is a model version the ledger keeps (models.Version), so that
// plan --explain can show what changed since a partition was built.
type Version struct {
	Model       string
	Fingerprint string
	Text        string
	CreatedAt   time.Time
	// AcceptedFrom is set on a version that refill accept made current for
	// partitions built by an earlier version (forward-only): that version's
	// fingerprint, when, and how many partitions.
	AcceptedFrom string
	AcceptedAt   time.Time
	Accepted     int64
}

// Lease gives one run exclusive use of one target table until ExpiresAt.
type Lease struct {
	Table       string // the target table, as models.Relation.String()
	RunID       string
	Host        string
	PID         int
	AcquiredAt  time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
}

// RecordSummary sums up one model's ledger records whose windows start in
// one bucket of the query (SummaryQuery.Bucket): a calendar month (UTC), a
// calendar year before the query's Yearly, or the query's Recent month cut
// in two at Recent; with a zero Bucket, its records without a window (list
// and whole-table partitions).
type RecordSummary struct {
	Model   string
	Bucket  time.Time // the bucket's first instant
	Records int64
	Done    int64 // records in state done
	Pending int64 // records in state pending
	Removed int64 // records in state removed
	// MinFingerprint and MaxFingerprint are equal when every record has
	// the same fingerprint.
	MinFingerprint, MaxFingerprint string
	MinStarted                     time.Time // the earliest StartedAt
	MaxPublished                   time.Time // the latest PublishedAt; zero when none was published
	Rows                           int64     // the rows of done, partial and failed records
	// SelfStale counts, for models that read their own past, the records
	// whose previous partition was published after they started (and not
	// with them).
	SelfStale int64
	// Stale counts the records that read, through one of the query's
	// Edges, an upstream partition published after they started (and not
	// with them).
	Stale int64
}

// SummaryQuery asks for summaries of the records of Models.
type SummaryQuery struct {
	Models []string
	// Yearly, a year's first instant, makes the buckets of older windows
	// calendar years rather than months, so that summaries grow slowly
	// with history; zero means months throughout.
	Yearly time.Time
	// Recent, when not zero, the start of a UTC day at or after Yearly,
	// cuts its month in two buckets: windows starting in the month before
	// Recent, and those from Recent to the month's end. A plan cuts the
	// current month at today, so that its days that are complete can be
	// proven done from their summary.
	Recent time.Time
	// Self names the models among them that read their own past.
	Self []string
	// Edges are dependencies whose partitions pair up on their windows:
	// a record of Down reads the records of Up whose windows start in the
	// same period of Grain as its own.
	Edges []Edge
}

// Bucket returns the first instant of the bucket holding the window start
// t (UTC): the first of its year before Yearly; Recent from Recent to its
// month's end; the first of its month otherwise.
func (q SummaryQuery) Bucket(t time.Time) time.Time {
	t = t.UTC()
	switch {
	case !q.Yearly.IsZero() && t.Before(q.Yearly):
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case !q.Recent.IsZero() && !t.Before(q.Recent) && t.Before(q.RecentEnd()):
		return q.Recent.UTC()
	}
	return monthOf(t)
}

// BucketEnd returns the end of the bucket starting at b, the start of the
// next.
func (q SummaryQuery) BucketEnd(b time.Time) time.Time {
	b = b.UTC()
	switch {
	case !q.Yearly.IsZero() && b.Before(q.Yearly):
		return b.AddDate(1, 0, 0)
	case !q.Recent.IsZero() && b.Before(q.Recent) && b.Equal(monthOf(q.Recent)):
		return q.Recent.UTC()
	}
	return monthOf(b).AddDate(0, 1, 0)
}

// RecentEnd returns the end of the bucket starting at Recent: its month's.
func (q SummaryQuery) RecentEnd() time.Time { return monthOf(q.Recent).AddDate(0, 1, 0) }

// monthOf returns the first instant of t's month, in UTC.
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Edge is a dependency of model Down on model Up, both with UTC windows
// and grains one of which divides the other, Grain the coarser: one the
// dialect truncates to (models.Dialect.DateTrunc), never a fiscal year.
type Edge struct {
	Down, Up string
	Grain    models.Grain
}

// RecordQuery asks for the records a plan reads: every record of the
// models in All, and, of each model in Since, the records whose window
// ends after its instant or that have no window.
type RecordQuery struct {
	All   []string
	Since map[string]time.Time
}

// LedgerSummarizer is a Ledger that can summarize its records per model and
// month and read them selectively. Planning then reads O(models × months)
// summary rows, and the records of the months it cannot prove done from
// them, rather than every record of years of history.
type LedgerSummarizer interface {
	// SummarizePartitions returns the summaries q asks for. A ledger
	// that does not exist yet has none.
	SummarizePartitions(ctx context.Context, q SummaryQuery) ([]RecordSummary, error)
	// QueryPartitions returns the records q asks for.
	QueryPartitions(ctx context.Context, q RecordQuery) ([]Record, error)
}
