package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/proto"
)

// Exception is a ClickHouse exception as the server sends it in an
// Exception packet.
type Exception struct {
	Code int32
	// Name is the exception class, "DB::Exception" for ClickHouse's own.
	Name string
	// Message is the text after "Code: N. ", e.g. "DB::Exception: Table
	// default.x does not exist. (UNKNOWN_TABLE)"; clients strip the
	// "DB::Exception: " prefix.
	Message string
}

// Error returns the exception as clickhouse-client prints it.
func (e *Exception) Error() string { return fmt.Sprintf("Code: %d. %s", e.Code, e.Message) }

// newException returns a DB::Exception with code, its text and its code's
// name in parentheses, as ClickHouse formats its own exceptions.
func newException(code proto.Error, format string, args ...any) *Exception {
	return &Exception{Code: int32(code), Name: "DB::Exception",
		Message: fmt.Sprintf("DB::Exception: %s. (%s)", strings.TrimSuffix(fmt.Sprintf(format, args...), "."), code.String())}
}

// exceptionText matches chDB's error messages: "Code: 60. DB::Exception:
// ... (UNKNOWN_TABLE)", possibly on several lines.
var exceptionText = regexp.MustCompile(`(?s)^Code: (\d+)\. (.*)$`)

// ExceptionFrom turns an engine error into the exception a server would
// send: chDB's "Code: N. Name: text" keeps its code, name and text; a
// cancelled statement is QUERY_WAS_CANCELLED; anything else is an
// std::exception (code 1001), like an error ClickHouse did not classify.
func ExceptionFrom(err error) *Exception {
	var ex *Exception
	switch {
	case errors.As(err, &ex):
		return ex
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return newException(proto.ErrQueryWasCancelled, "Query was cancelled")
	}
	text := strings.TrimSpace(err.Error())
	m := exceptionText.FindStringSubmatch(text)
	if m == nil {
		return &Exception{Code: int32(proto.ErrStdException), Name: "std::exception", Message: "std::exception: " + text}
	}
	code, convErr := strconv.ParseInt(m[1], 10, 32)
	if convErr != nil {
		return &Exception{Code: int32(proto.ErrStdException), Name: "std::exception", Message: "std::exception: " + text}
	}
	name := "DB::Exception"
	if n, _, ok := strings.Cut(m[2], ": "); ok && !strings.ContainsAny(n, " \n") {
		name = n
	}
	return &Exception{Code: int32(code), Name: name, Message: m[2]}
}
