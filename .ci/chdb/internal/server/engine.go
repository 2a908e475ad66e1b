package server

import "context"

// Engine runs statements for the server. It is one session shared by every
// client connection, so the server passes each statement the state of the
// connection that sent it (current database, settings), and the engine
// must apply that state for the statement only. Implementations must be
// safe for concurrent use; they may run one statement at a time.
type Engine interface {
	// Run runs one statement and returns its output. An error whose text
	// starts with "Code: N." is a ClickHouse exception with code N (see
	// ExceptionFrom); a cancelled ctx returns ctx.Err() if the statement
	// has not started.
	Run(ctx context.Context, req Request) (Output, error)
}

// Request is one statement and the session state it runs in.
type Request struct {
	// Database is the current database for the statement.
	Database string
	// Settings are applied before the statement and reset after it, in
	// order (a later value of one name wins).
	Settings []Setting
	// SQL is the statement. Empty means: only apply Database and Settings,
	// which checks that they are valid, and reset them.
	SQL string
	// Format is the output format asked for, e.g. "Native".
	Format string
	// IfEmpty, when set, is a second output format: if the statement's
	// output in Format is empty, the engine runs it again in IfEmpty,
	// under the same lock, and returns that output instead. The server
	// uses it to learn the columns of a result without rows, which the
	// Native format does not write.
	IfEmpty string
}

// Setting is one setting for a statement: its name and its value as an
// SQL literal, as in SET name = value.
type Setting struct {
	Name  string
	Value string
}

// Output is what a statement wrote.
type Output struct {
	// Data is the output, in Format, or in IfEmpty when Fallback is set.
	Data []byte
	// Fallback is true when Data is in the Request's IfEmpty format.
	Fallback bool
}
