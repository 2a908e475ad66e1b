package runner

import (
	"time"

	"github.com/refill/refill/runner/plan"
)

// Status is a partition's outcome in a run.
type Status string

// Partition outcomes.
const (
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Skipped   Status = "skipped" // not run: an upstream failed, or the run stopped
	// Blocked: not run, because it reads upstream partitions that are
	// missing or failed and that the run did not build (Plan.Blocked).
	Blocked Status = "blocked"
)

// PartitionResult is what a run did with one partition.
type PartitionResult struct {
	Model     string
	Partition string
	Status    Status
	Rows      int64
	Attempts  int
	Duration  time.Duration
	Err       error
	// Unchanged: a refresh (ReasonRefresh) computed exactly the rows the
	// table holds, so nothing was published; or a conditional step
	// (Step.Conditional) whose refreshed upstream did not change, so it
	// did not run.
	Unchanged bool
}

// Summary is the outcome of a run.
type Summary struct {
	RunID      string
	Partitions []PartitionResult // in plan order
	Succeeded  int
	Failed     int
	Skipped    int
	Blocked    int
	// Unchanged counts the succeeded partitions whose table did not change:
	// refreshes that found the rows the table holds, and the conditional
	// steps reading only those (PartitionResult.Unchanged).
	Unchanged int
	// Interrupted is set when a stop request left partitions undone.
	// Signalled is set for any stop request: one that arrives after the
	// last partition started lets the run finish, and it is not
	// interrupted.
	Interrupted, Signalled bool
	Warnings               []string // audits of severity warn that failed
	// LostLease is set when the run stopped because it could not renew its
	// leases before they expired.
	LostLease error
	// Unrecorded is set when the adapter could not write the ledger records
	// of some publications (adapters.Deferrer): the next run redoes them.
	Unrecorded error
	Started    time.Time
	Finished   time.Time
	// Plan is the plan the run ran: the one Run was given, or the one it
	// made again after waiting for another run's leases (that run changed
	// the ledger the first was read from).
	Plan *plan.Plan
}

// EventKind tells events apart.
type EventKind int

// Events a run reports to its Observer.
const (
	EventStart        EventKind = iota // Total partitions are about to run
	EventUnit                          // a unit of Partitions of Model started
	EventRetry                         // the unit failed with transient Err; retry Attempt after Delay
	EventPartition                     // Result is final
	EventWarning                       // Message: an audit of severity warn failed
	EventWaiting                       // Message: a lease is held; waiting for it
	EventAudit                         // Audit ran on a staged unit of Model's Partitions
	EventHousekeeping                  // Message: an abandoned run was recorded, old stages dropped
)

// Event is one thing that happened during a run.
type Event struct {
	Kind       EventKind
	Total      int
	Model      string
	Partitions []string
	Attempt    int
	Delay      time.Duration
	Err        error
	Result     *PartitionResult
	Audit      *AuditResult
	Message    string
}
