// Package plan decides what a backfill must run and why.
//
// A Reader reads the facts from a target: the ledger's records (only
// those a summarized ledger cannot vouch for), what dead runs may have
// published without recording it, the watermarks a scheduled run checks,
// the tables' row counts (drift), the models' versions and their schema
// changes. It never writes; it is the only reader of facts for a plan.
// NewPlanFacts then decides, with no I/O, each selected partition's
// Reason (missing, stale, failed, upstream, lookback, pending, ...) or why
// it is blocked, through what reads what, and NewStatusFacts says which
// partitions are done: exactly those a plan would not run.
//
// Executing a plan is package runner's, which stands on this one.
package plan
