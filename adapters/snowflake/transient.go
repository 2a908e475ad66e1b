package snowflake

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters"
)

// Snowflake error numbers that a retry may get past. Where a number was
// checked, the comment says against what; the others are marked assumed.
const (
	// errCanceled is 000604 "SQL execution canceled" (SQLSTATE 57014),
	// reported when the server cancels a running statement (a warehouse
	// suspended or resized under it, a failover) and when an operator
	// cancels it. Number and text verified from real error reports; that
	// server-side cancellations use it is assumed.
	errCanceled = 604
	// errInternal is 000603 "SQL execution internal error" (SQLSTATE XX000),
	// an incident on Snowflake's side. Assumed transient.
	errInternal = 603
	// errLockWaiters is 000625 "... was aborted because the number of
	// waiters for this lock exceeds the 20 statements limit": too many
	// transactions queued on one table. Verified from real error reports.
	errLockWaiters = 625
	// errTimeout is 000630 "Statement reached its statement or warehouse
	// timeout of N second(s) and was canceled" (STATEMENT_TIMEOUT_IN_SECONDS).
	// Verified from real error reports. Rerunning a statement that ran out
	// of time repeats the cost and the timeout, so it is transient only when
	// the message says the statement timed out in the warehouse's queue
	// (STATEMENT_QUEUED_TIMEOUT_IN_SECONDS; that wording is assumed).
	errTimeout = 630
	// errSessionExpired is 390112, the session token's expiry, which
	// gosnowflake normally renews itself (its errors.go).
	errSessionExpired = 390112
	// errTokenExpired is 390114 "Authentication token has expired. The user
	// must authenticate again." after 4 hours without renewal (gosnowflake
	// issue #160). The session is dead; the adapter discards its connection
	// so that a retry logs in again.
	errTokenExpired = 390114
)

// Transient reports whether err is worth retrying: a lost or expired
// session, a network failure, HTTP throttling (429) or an unavailable
// service (5xx), too many transactions waiting on a lock, or a statement the
// server canceled. SQL errors (compilation errors such as 001003 syntax
// error or 002003 object does not exist, type and constraint errors), bad
// credentials and the caller's own cancellation are not. Errors marked with
// adapters.TransientError are. It reads nothing of a.
func (a *Adapter) Transient(err error) bool {
	if transient, known := adapters.KnownTransience(err); known {
		return transient
	}
	var se *gosnowflake.SnowflakeError
	if errors.As(err, &se) {
		return transientSnowflake(se)
	}
	return transientNetwork(err)
}

func transientSnowflake(se *gosnowflake.SnowflakeError) bool {
	switch se.Number {
	case errCanceled, errInternal, errLockWaiters, errSessionExpired, errTokenExpired,
		gosnowflake.ErrSessionGone,
		gosnowflake.ErrFailedToRenewSession,
		gosnowflake.ErrFailedToGetChunk,
		gosnowflake.ErrFailedToHeartbeat,
		gosnowflake.ErrCodeServiceUnavailable:
		return true
	case errTimeout:
		return strings.Contains(strings.ToLower(se.Error()), "queue")
	case gosnowflake.ErrFailedToPostQuery:
		// gosnowflake's restful.go puts the HTTP status first in MessageArgs.
		if len(se.MessageArgs) > 0 {
			if code, ok := se.MessageArgs[0].(int); ok {
				return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
			}
		}
	}
	return false
}

// deadSession reports whether err means the connection's session can no
// longer be used, so that the connection must not go back to the pool.
func deadSession(err error) bool {
	var se *gosnowflake.SnowflakeError
	if errors.As(err, &se) {
		switch se.Number {
		case errSessionExpired, errTokenExpired, gosnowflake.ErrSessionGone, gosnowflake.ErrFailedToRenewSession:
			return true
		}
		return false
	}
	return transientNetwork(err)
}

func transientNetwork(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary // an unknown host is a wrong account name
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, target := range []error{driver.ErrBadConn, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNRESET, syscall.ECONNABORTED, syscall.ECONNREFUSED, syscall.EPIPE, syscall.ETIMEDOUT} {
		if errors.Is(err, target) {
			return true
		}
	}
	// Errors formatted with %v lose their type; these texts come from net.
	msg := err.Error()
	for _, s := range []string{"connection reset by peer", "broken pipe", "i/o timeout", "TLS handshake timeout", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
