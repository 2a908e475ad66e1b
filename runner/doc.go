// Package runner executes backfills against the adapters.Adapter
// interface.
//
// What must run and why is package runner/plan's: a Runner is a
// plan.Reader that also writes. Execution (Run) turns a plan into a
// partition-level DAG and works through it: render,
// stage, verify, audit, publish, with retries, batches, a concurrency cap,
// per-table leases and graceful interruption. refill test is package
// runner/check's, which stands on this one.
package runner
