package recorder

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
)

// Answer is how a fake warehouse answers one statement: the rows of a
// query (nil for none), or an error as the warehouse would raise it.
type Answer func(query string, args []any) (*Rows, error)

// Rows is a fake result: columns, with the types the warehouse's driver
// reports, and values as the driver would hand them to database/sql.
type Rows struct {
	Columns []Column
	Values  [][]driver.Value
}

// Column is a column of a fake result.
type Column struct {
	Name string
	Type string // as sql.ColumnType.DatabaseTypeName reports it
	// Scale is the column's decimal scale, when it has one.
	Scale  int64
	Scaled bool
}

// Fake returns a connector to a warehouse that answer plays, recorded like
// a wrapped one. Transactions are only logged: the fake keeps no data.
func (r *Recorder) Fake(answer Answer) driver.Connector {
	return r.Wrap(fakeConnector{answer})
}

type fakeConnector struct{ answer Answer }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn(c), nil }
func (c fakeConnector) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("recorder: a fake warehouse opens through its connector only")
}

type fakeConn struct{ answer Answer }

func (c fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("recorder: a fake warehouse does not prepare statements")
}
func (c fakeConn) Close() error                                                 { return nil }
func (c fakeConn) Begin() (driver.Tx, error)                                    { return fakeTx{}, nil }
func (c fakeConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) { return fakeTx{}, nil }

func (c fakeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := c.answer(query, values(args)); err != nil {
		return nil, err
	}
	return driver.RowsAffected(0), nil
}

func (c fakeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := c.answer(query, values(args))
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = &Rows{}
	}
	return &fakeRows{Rows: rows}, nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }

type fakeRows struct {
	*Rows
	next int
}

func (r *fakeRows) Columns() []string {
	names := make([]string, len(r.Rows.Columns))
	for i, c := range r.Rows.Columns {
		names[i] = c.Name
	}
	return names
}

func (r *fakeRows) Close() error { return nil }

func (r *fakeRows) Next(dest []driver.Value) error {
	if r.next >= len(r.Values) {
		return io.EOF
	}
	copy(dest, r.Values[r.next])
	r.next++
	return nil
}

func (r *fakeRows) ColumnTypeDatabaseTypeName(i int) string { return r.Rows.Columns[i].Type }

func (r *fakeRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	c := r.Rows.Columns[i]
	return 38, c.Scale, c.Scaled
}
