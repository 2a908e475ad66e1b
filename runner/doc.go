// Package runner plans and executes backfills against the adapters.Adapter
// interface.
//
// Planning is pure: Plan and Assess compute, from a project's models and the
// ledger's records, which partitions need to run and why. Execution (Run)
// turns a plan into a partition-level DAG and works through it: render,
// stage, verify, audit, publish, with retries, batches, a concurrency cap,
// per-table leases and graceful interruption. refill test is package
// runner/check's, which stands on this one.
package runner
