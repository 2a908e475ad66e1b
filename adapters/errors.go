package adapters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// ErrRunNotFound is returned (wrapped) by Ledger.LoadRun for an unknown run.
var ErrRunNotFound = errors.New("run not found")

// ErrNotSupported is returned (wrapped) for a capability the warehouse lacks,
// such as publishing several tables in one transaction on ClickHouse.
var ErrNotSupported = errors.New("not supported by this adapter")

// ErrMaybePublished is returned (wrapped) by Publish when it failed after
// it began changing a target it cannot change atomically: readers may see
// some of the new rows. The runner records such a partition as failed and
// as published at the attempt, so that what read the old rows is redone.
var ErrMaybePublished = errors.New("the publication may have been partly applied")

// LeaseHeldError is returned by Ledger.AcquireLease when another run holds
// the table.
type LeaseHeldError struct {
	Held Lease
}

func (e *LeaseHeldError) Error() string {
	h := e.Held
	return fmt.Sprintf("%s is being written by run %s (pid %d on %s, started %s, lease expires in %s)",
		h.Table, h.RunID, h.PID, h.Host, h.AcquiredAt.UTC().Format(time.RFC3339),
		time.Until(h.ExpiresAt).Round(time.Second))
}

// LockedError is returned when opening a target fails because another
// process holds it (DuckDB allows one writing process per file).
type LockedError struct {
	What   string // the locked thing: a file, a table
	Holder string // who holds it, as far as is known
	Err    error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is locked by %s", e.What, e.Holder)
}

func (e *LockedError) Unwrap() error { return e.Err }

// TransientError marks an error as worth retrying. Adapters classify
// warehouse errors through Adapter.Transient; this type lets wrappers (and
// tests injecting faults) mark their own.
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// IsTransient reports whether err is marked with TransientError.
func IsTransient(err error) bool {
	var t *TransientError
	return errors.As(err, &t)
}

// KnownTransience settles what every adapter's Transient says alike: no
// error, and a cancelled or expired context (the caller gave up), are not
// worth retrying; an error marked with TransientError is. known is false
// when the adapter's own classification of err must decide.
func KnownTransience(err error) (transient, known bool) {
	switch {
	case err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return false, true
	case IsTransient(err):
		return true, true
	}
	return false, false
}

// A StatementError is a warehouse's error about one statement that says
// where in the statement it is: Offset is the byte offset in Statement
// the warehouse points at. Adapters return it (wrapping the driver's
// error, whose text it keeps) when they can tell the offset, so that the
// runner can point at the line of the model file that the offset
// renders.
type StatementError struct {
	Statement string
	Offset    int
	Err       error
}

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// OffsetOf returns the byte offset of column col (1-based, in
// characters) of line (1-based) of stmt, or -1 if stmt has no such line.
func OffsetOf(stmt string, line, col int) int {
	off := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(stmt[off:], '\n')
		if j < 0 {
			return -1
		}
		off += j + 1
	}
	end := len(stmt)
	if j := strings.IndexByte(stmt[off:], '\n'); j >= 0 {
		end = off + j
	}
	for i := range stmt[off:end] {
		if col <= 1 {
			return off + i
		}
		col--
	}
	return end
}

// An ExecError is an engine's error about one statement it ran: the step
// of the run the statement served (a Tag's Step: stage, verify, audit,
// publish, ledger, ...) and the statement, whose first line the message
// names, so that a failure says where it happened without --verbose. It
// wraps the driver's error (or a StatementError), which errors.As and
// errors.Is still reach. Secrets in the statement are the caller's to
// redact, as with every error text (runner.RunOptions.Redact).
type ExecError struct {
	Step      string // empty when the engine was not told
	Statement string
	Err       error
}

// maxStatementShown is how much of a statement's first line an
// ExecError's message shows, in characters.
const maxStatementShown = 160

func (e *ExecError) Error() string {
	line, rest, _ := strings.Cut(strings.TrimSpace(e.Statement), "\n")
	line = strings.TrimSpace(line)
	cut := strings.TrimSpace(rest) != ""
	if r := []rune(line); len(r) > maxStatementShown {
		line, cut = string(r[:maxStatementShown]), true
	}
	if cut {
		line += " …"
	}
	if e.Step == "" {
		return fmt.Sprintf("%s: %v", line, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Step, line, e.Err)
}

func (e *ExecError) Unwrap() error { return e.Err }

// ExecFailed returns err, the failure of statement stmt in step, as an
// *ExecError; nil for nil. An error that already names its statement is
// returned as it is.
func ExecFailed(step, stmt string, err error) error {
	var ee *ExecError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &ExecError{Step: step, Statement: stmt, Err: err}
}

// AtModelLine points err, if the warehouse said where in a statement holding
// sql (m rendered for parts in scope) it failed, at the line of m's file
// that rendered that place.
func AtModelLine(m *models.Model, scope *models.Scope, parts []models.Partition, sql string, err error) error {
	var se *StatementError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	i := strings.Index(se.Statement, sql)
	if i < 0 || se.Offset < i || se.Offset > i+len(sql) {
		return err
	}
	// The model's line says more than the statement's (an
	// adapters.ExecError's) first line: locate the warehouse's error alone.
	if located := m.Locate(scope, parts, se.Offset-i, se); located != error(se) {
		return located
	}
	return err
}
