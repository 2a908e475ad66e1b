package clickhouse

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
)

// transientCodes are the server's exception codes (ErrorCodes.cpp) for
// overload, timeouts, lost connections and replication hiccups: a later
// attempt of the same statement may succeed. Every other code (syntax 62,
// unknown identifier 47, unknown table 60, type mismatch 53, ...) is a
// problem with the SQL or the data and is not retried.
var transientCodes = map[int32]string{
	159: "TIMEOUT_EXCEEDED",
	198: "DNS_ERROR",
	202: "TOO_MANY_SIMULTANEOUS_QUERIES",
	203: "NO_FREE_CONNECTION",
	209: "SOCKET_TIMEOUT",
	210: "NETWORK_ERROR",
	216: "QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING",
	225: "NO_ZOOKEEPER",
	236: "ABORTED",
	241: "MEMORY_LIMIT_EXCEEDED",
	242: "TABLE_IS_READ_ONLY",
	244: "UNEXPECTED_ZOOKEEPER_ERROR",
	252: "TOO_MANY_PARTS",
	279: "ALL_CONNECTION_TRIES_FAILED",
	285: "TOO_FEW_LIVE_REPLICAS",
	286: "UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE",
	319: "UNKNOWN_STATUS_OF_INSERT",
	335: "BARRIER_TIMEOUT",
	364: "RECEIVED_ERROR_TOO_MANY_REQUESTS",
	369: "ALL_REPLICAS_ARE_STALE",
	373: "SESSION_IS_LOCKED",
	384: "PART_IS_TEMPORARILY_LOCKED",
	425: "SYSTEM_ERROR",
	439: "CANNOT_SCHEDULE_TASK",
	473: "DEADLOCK_AVOIDED",
	517: "CANNOT_ASSIGN_ALTER",
	999: "KEEPER_EXCEPTION",
}

// unknownTable reports whether err is the server's UNKNOWN_TABLE.
func unknownTable(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == 60
}

// Transient reports whether err is worth retrying; see isTransient.
func (a *Adapter) Transient(err error) bool { return isTransient(err) }

// isTransient reports whether err is worth retrying: errors marked with
// adapters.TransientError, server exceptions with a code of overload or
// timeout (see transientCodes), and lost or refused connections. A
// cancelled or expired context is not transient (the caller gave up); nor
// is any other server exception, whatever its message says.
func isTransient(err error) bool {
	if transient, known := adapters.KnownTransience(err); known {
		return transient
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		_, ok := transientCodes[ex.Code]
		return ok
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, clickhouse.ErrAcquireConnTimeout) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection reset", "connection refused", "broken pipe", "use of closed network connection"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
