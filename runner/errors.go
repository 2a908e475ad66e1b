package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/refill/refill/runner/plan"
)

// usageErrorf reports a request the runner cannot act on, as plan.ErrUsage.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", plan.ErrUsage, fmt.Sprintf(format, args...))
}

// VerifyError reports staged rows outside the partition window. It is not
// retried: the model's query is wrong, not the warehouse.
type VerifyError struct {
	Model   string
	Outside int64  // rows outside the window (or with a NULL partition key)
	Total   int64  // rows staged
	Example string // one offending partition value
	Window  string // the window, as text
	Column  string
	Missing bool // the query's result has no partition column at all
	// TypeMismatch is the partition column's type when it cannot hold the
	// window's values (a timestamp for local-date windows).
	TypeMismatch string
	Hint         string // what to change, when refill can tell
}

func (e *VerifyError) Error() string {
	var msg string
	switch {
	case e.Missing:
		msg = fmt.Sprintf("verification failed: the query returns no column %q (partition_by)", e.Column)
	case e.TypeMismatch != "":
		msg = fmt.Sprintf("verification failed: partition column %s is a %s", e.Column, e.TypeMismatch)
	default:
		msg = fmt.Sprintf("verification failed: %d of %d rows have %s outside %s (e.g. %s)",
			e.Outside, e.Total, e.Column, e.Window, e.Example)
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg + "; nothing was swapped"
}

// AuditError reports blocking audits that failed on a staged partition.
type AuditError struct {
	Failures []AuditResult
}

func (e *AuditError) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = fmt.Sprintf("%s (%s:%d): %s", f.Name, f.File, f.Line, f.Message)
	}
	return "audit failed: " + strings.Join(msgs, "; ") + "; nothing was swapped"
}

// permanent reports errors that retrying cannot fix.
func permanent(err error) bool {
	var v *VerifyError
	var a *AuditError
	var s *plan.SchemaError
	return errors.As(err, &v) || errors.As(err, &a) || errors.As(err, &s)
}
