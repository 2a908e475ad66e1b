package snowflake_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/snowflake"
)

func sfErr(number int, state, msg string, args ...any) error {
	return &gosnowflake.SnowflakeError{Number: number, SQLState: state, Message: msg, MessageArgs: args}
}

func TestTransient(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"session token expired", sfErr(390112, "08001", "Session token has expired."), true},
		{"master token expired after 4 idle hours", sfErr(390114, "08001", "Authentication token has expired.  The user must authenticate again."), true},
		{"session gone", sfErr(gosnowflake.ErrSessionGone, "", "Session no longer exists."), true},
		{"too many waiters on a table lock", sfErr(625, "57014", "Statement '01b4' has locked table 'PARTITIONS' in transaction 1715330074481000000 and this lock has not yet been released. Your statement '01b5' was aborted because the number of waiters for this lock exceeds the 20 statements limit."), true},
		{"canceled by the server", sfErr(604, "57014", "SQL execution canceled"), true},
		{"internal error", sfErr(603, "XX000", "SQL execution internal error: Processing aborted due to error 300005:4035105626; incident 1234."), true},
		{"queued too long", sfErr(630, "57014", "Statement reached its statement or warehouse queued timeout of 600 second(s) and was canceled."), true},
		{"ran out of time", sfErr(630, "57014", "Statement reached its statement or warehouse timeout of 300 second(s) and was canceled."), false},
		{"throttled", sfErr(gosnowflake.ErrFailedToPostQuery, "08006", "failed to POST. HTTP: %v, URL: %v", 429, "https://acct.snowflakecomputing.com/queries/v1/query-request"), true},
		{"service unavailable", sfErr(gosnowflake.ErrFailedToPostQuery, "08006", "failed to POST. HTTP: %v, URL: %v", 503, "https://x"), true},
		{"forbidden", sfErr(gosnowflake.ErrFailedToPostQuery, "08006", "failed to POST. HTTP: %v, URL: %v", 403, "https://x"), false},
		{"chunk download failed", sfErr(gosnowflake.ErrFailedToGetChunk, "", "failed to get a chunk of result sets. idx: %v", 3), true},
		{"syntax error", sfErr(1003, "42000", "SQL compilation error: syntax error line 1 at position 7 unexpected 'FORM'."), false},
		{"object does not exist", sfErr(2003, "42S02", "SQL compilation error: Object 'MARTS.DAILY' does not exist or not authorized."), false},
		{"invalid identifier", sfErr(904, "42000", "SQL compilation error: error line 1 at position 7 invalid identifier 'ORDER_DAT'"), false},
		{"bad credentials", sfErr(390100, "08004", "Incorrect username or password was specified."), false},
		{"wrapped session expiry", fmt.Errorf("publishing: %w", sfErr(390114, "08001", "Authentication token has expired.")), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"http timeout", &url.Error{Op: "Post", URL: "https://x", Err: timeoutErr{}}, true},
		{"unknown host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nope.snowflakecomputing.com", IsNotFound: true}}, false},
		{"bad connection", fmt.Errorf("exec: %w", driver.ErrBadConn), true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"a reset reported as text", errors.New("post https://x: read tcp 10.0.0.1:5->10.0.0.2:443: read: connection reset by peer"), true},
		{"marked by a wrapper", &adapters.TransientError{Err: errors.New("injected")}, true},
		{"our own cancellation", fmt.Errorf("stage: %w", context.Canceled), false},
		{"our own deadline", context.DeadlineExceeded, false},
		{"nil", nil, false},
	} {
		if got := new(snowflake.Adapter).Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "Client.Timeout exceeded while awaiting headers" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestMinicoreOff: gosnowflake's minicore, which leaves a directory in the
// system's temporary directory behind each short-lived process, is off
// before gosnowflake initializes (see internal/nominicore).
func TestMinicoreOff(t *testing.T) {
	t.Parallel()
	if v := os.Getenv("SF_DISABLE_MINICORE"); v != "true" {
		t.Errorf("SF_DISABLE_MINICORE = %q, want true", v)
	}
}
