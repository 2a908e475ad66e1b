// Package recorder is the seam under every adapter's connection: a
// database/sql/driver.Connector that logs each operation an adapter
// performs (exec, query, begin, commit, rollback) with its transaction
// boundaries, and can fail any one of them with a chosen error.
//
// Wrap puts a recorder in front of a real driver: the log is then what the
// warehouse really ran, in order, and every statement in it succeeded
// there. Fake answers the statements itself, for warehouses no test can
// reach (Snowflake without an account). Adapters accept a recorder through
// their Config's Connector field; tests use the log as a golden file and
// the failures as fault injection.
package recorder

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Op is one kind of operation on a connection.
type Op string

// The operations a recorder logs.
const (
	Exec     Op = "exec"
	Query    Op = "query"
	Begin    Op = "begin"
	Commit   Op = "commit"
	Rollback Op = "rollback"
)

// Entry is one logged operation.
type Entry struct {
	N    int    // its number, from 1, counted since the recorder was made or Reset
	Op   Op     // what it was
	SQL  string // the statement, for Exec and Query
	Args []any  // the statement's bound arguments
	Conn int    // the connection it ran on, numbered from 1 as they were opened
	Err  error  // what it returned (an injected failure, or the warehouse's error)
	// Note is a heading a test wrote with Note, for an entry of no Op.
	Note string
}

// Recorder logs the operations of the connections it makes. Its methods
// are safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	entries []Entry
	n       int // operations counted for FailAt
	conns   int
	fail    func(Entry) error
}

// New returns an empty recorder.
func New() *Recorder { return &Recorder{} }

// Wrap returns a connector whose connections are c's, recorded.
func (r *Recorder) Wrap(c driver.Connector) driver.Connector {
	return &connector{r: r, inner: c}
}

// FailAt makes the k-th operation (1-based, counted as Entry.N) fail with
// err instead of reaching the warehouse. It replaces any earlier failure.
func (r *Recorder) FailAt(k int, err error) {
	r.FailWhen(func(e Entry) error {
		if e.N == k {
			return err
		}
		return nil
	})
}

// FailWhen makes every operation for which fail returns an error fail with
// it instead of reaching the warehouse; nil removes the hook.
func (r *Recorder) FailWhen(fail func(Entry) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = fail
}

// Reset forgets the log, restarts the count of operations and removes any
// failure.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries, r.n, r.fail = nil, 0, nil
}

// Note adds a heading to the log, written as an SQL comment by Write.
func (r *Recorder) Note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, Entry{Note: fmt.Sprintf(format, args...)})
}

// Entries returns the operations logged so far (headings left out).
func (r *Recorder) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Entry
	for _, e := range r.entries {
		if e.Note == "" {
			out = append(out, e)
		}
	}
	return out
}

// Statements returns the SQL of the logged Exec and Query operations.
func (r *Recorder) Statements() []string {
	var out []string
	for _, e := range r.Entries() {
		if e.Op == Exec || e.Op == Query {
			out = append(out, e.SQL)
		}
	}
	return out
}

// Write renders the log as an SQL script: headings as comments, each
// statement followed by a semicolon (its arguments in a comment), and the
// driver's transaction boundaries as comments (-- begin, -- commit,
// -- rollback). Operations that failed are marked. clean, when not nil,
// rewrites each line (to mask names and times that change between runs).
func (r *Recorder) Write(w io.Writer, clean func(string) string) error {
	r.mu.Lock()
	entries := append([]Entry(nil), r.entries...)
	r.mu.Unlock()
	if clean == nil {
		clean = func(s string) string { return s }
	}
	var b strings.Builder
	for i, e := range entries {
		switch {
		case e.Note != "":
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("-- " + e.Note + "\n")
			continue
		case e.Op == Exec || e.Op == Query:
			b.WriteString(strings.TrimRight(e.SQL, "; \n") + ";")
			if len(e.Args) > 0 {
				args := make([]string, len(e.Args))
				for j, a := range e.Args {
					args[j] = fmt.Sprintf("%#v", a)
				}
				b.WriteString(" -- args: " + strings.Join(args, ", "))
			}
		default:
			b.WriteString("-- " + string(e.Op))
		}
		if e.Err != nil {
			b.WriteString(" -- failed: " + firstLine(e.Err.Error()))
		}
		b.WriteString("\n")
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// String renders the log as Write does, unmasked.
func (r *Recorder) String() string {
	var b strings.Builder
	r.Write(&b, nil)
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// start logs an operation about to run and returns its index in the log
// and the failure to inject, if any.
func (r *Recorder) start(conn int, op Op, query string, args []driver.NamedValue) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	e := Entry{N: r.n, Op: op, SQL: query, Conn: conn}
	for _, a := range args {
		e.Args = append(e.Args, a.Value)
	}
	if r.fail != nil {
		e.Err = r.fail(e)
	}
	r.entries = append(r.entries, e)
	if e.Err != nil {
		return len(r.entries) - 1, injected{e.Err}
	}
	return len(r.entries) - 1, nil
}

// finish records what operation i returned. An operation the driver
// skipped (driver.ErrSkip: database/sql retries it another way, which is
// logged in turn) is removed from the log.
func (r *Recorder) finish(i int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, driver.ErrSkip) {
		r.entries = append(r.entries[:i], r.entries[i+1:]...)
		r.n--
		return
	}
	if r.entries[i].Err == nil {
		r.entries[i].Err = err
	}
}

func (r *Recorder) newConn() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns++
	return r.conns
}

// errInjected marks the failures a recorder injects (see injected).
var errInjected = errors.New("recorder: injected failure")

// injected is a failure a recorder injected: it reads and unwraps as the
// error the test chose.
type injected struct{ err error }

func (e injected) Error() string        { return e.err.Error() }
func (e injected) Unwrap() error        { return e.err }
func (e injected) Is(target error) bool { return target == errInjected }

// do runs one operation through the recorder: logged, maybe failed
// instead, its result recorded.
func do[T any](r *Recorder, conn int, op Op, query string, args []driver.NamedValue, run func() (T, error)) (T, error) {
	i, err := r.start(conn, op, query, args)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := run()
	r.finish(i, err)
	return v, err
}

type connector struct {
	r     *Recorder
	inner driver.Connector
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	inner, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: inner, r: c.r, id: c.r.newConn()}, nil
}

func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

// Close closes the wrapped connector, as sql.DB.Close closes a connector
// that has a Close method (DuckDB's closes its database).
func (c *connector) Close() error {
	if cl, ok := c.inner.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// conn records a driver connection's operations and forwards them.
type conn struct {
	driver.Conn
	r  *Recorder
	id int
}

var (
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ex, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return do(c.r, c.id, Exec, query, args, func() (driver.Result, error) { return ex.ExecContext(ctx, query, args) })
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return do(c.r, c.id, Query, query, args, func() (driver.Rows, error) { return q.QueryContext(ctx, query, args) })
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var (
		s   driver.Stmt
		err error
	)
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, query)
	} else {
		s, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: s, c: c, query: query}, nil
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return do(c.r, c.id, Begin, "", nil, func() (driver.Tx, error) {
		var (
			t   driver.Tx
			err error
		)
		if b, ok := c.Conn.(driver.ConnBeginTx); ok {
			t, err = b.BeginTx(ctx, opts)
		} else {
			t, err = c.Conn.Begin() //nolint:staticcheck // the driver offers nothing else
		}
		if err != nil {
			return nil, err
		}
		return &tx{Tx: t, c: c}, nil
	})
}

func (c *conn) Begin() (driver.Tx, error) { return c.BeginTx(context.Background(), driver.TxOptions{}) }

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if s, ok := c.Conn.(driver.SessionResetter); ok {
		return s.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type tx struct {
	driver.Tx
	c *conn
}

// Commit commits. A failure injected into it rolls the transaction back
// first, as a warehouse whose commit fails aborts the transaction.
func (t *tx) Commit() error {
	_, err := do(t.c.r, t.c.id, Commit, "", nil, func() (struct{}, error) { return struct{}{}, t.Tx.Commit() })
	if errors.Is(err, errInjected) {
		t.Tx.Rollback()
	}
	return err
}

func (t *tx) Rollback() error {
	_, err := do(t.c.r, t.c.id, Rollback, "", nil, func() (struct{}, error) { return struct{}{}, t.Tx.Rollback() })
	return err
}

type stmt struct {
	driver.Stmt
	c     *conn
	query string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return do(s.c.r, s.c.id, Exec, s.query, args, func() (driver.Result, error) {
		if e, ok := s.Stmt.(driver.StmtExecContext); ok {
			return e.ExecContext(ctx, args)
		}
		return nil, errors.New("recorder: the driver's statement cannot execute with a context")
	})
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return do(s.c.r, s.c.id, Query, s.query, args, func() (driver.Rows, error) {
		if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
			return q.QueryContext(ctx, args)
		}
		return nil, errors.New("recorder: the driver's statement cannot query with a context")
	})
}

func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.c.CheckNamedValue(nv)
}
