package snowflake

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters"
)

// The statements that frame a transaction. Snowflake recommends BEGIN
// TRANSACTION over its synonyms.
const (
	BeginSQL    = "BEGIN TRANSACTION"
	CommitSQL   = "COMMIT"
	RollbackSQL = "ROLLBACK"
)

// maxQueryTag is Snowflake's limit on QUERY_TAG, in characters.
const maxQueryTag = 2000

// queryTag renders the QUERY_TAG of statements doing t's work (see
// adapters.Tag.JSON), so that QUERY_HISTORY can attribute warehouse cost to
// a backfill: SELECT PARSE_JSON(query_tag):run_id, SUM(total_elapsed_time)
// ... GROUP BY 1. It is at most 2,000 characters, Snowflake's limit.
func queryTag(t adapters.Tag) string { return t.JSON(maxQueryTag) }

// useWarehouseSQL renders USE WAREHOUSE for a warehouse's stored name.
func useWarehouseSQL(d Dialect, stored string) string { return "USE WAREHOUSE " + d.QuoteExact(stored) }

// session is one pooled connection running one unit of work: every
// statement carries the unit's query tag and runs on the unit's warehouse.
type session struct {
	a    *Adapter
	conn *sql.Conn
	ctx  context.Context
	step string // the step of the work (adapters.Tag), which its errors name
	dead bool   // the session failed for good: discard the connection
}

// session takes a connection for work tagged t on warehouse (a name as the
// user wrote it; empty for the target's default).
func (a *Adapter) session(ctx context.Context, t adapters.Tag, warehouse string) (*session, error) {
	ctx = gosnowflake.WithQueryTag(ctx, queryTag(t))
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	s := &session{a: a, conn: conn, ctx: ctx, step: t.Step}
	want := a.d.Fold(warehouse)
	if want == "" {
		want = a.defaultWarehouse
	}
	// The flag is read after taking the connection: a connection another
	// unit switched was returned to the pool after that unit set the flag.
	if want != "" && (want != a.defaultWarehouse || a.switched.Load()) {
		if want != a.defaultWarehouse {
			a.switched.Store(true)
		}
		if err := s.exec(useWarehouseSQL(a.d, want)); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// exec runs one statement.
func (s *session) exec(query string) error {
	s.a.log(query)
	_, err := s.conn.ExecContext(s.ctx, query)
	if err != nil && deadSession(err) {
		s.dead = true
	}
	return adapters.ExecFailed(s.step, query, located(query, err))
}

// query runs one statement and reads its rows.
func (s *session) query(query string) (*adapters.Result, error) {
	s.a.log(query)
	rows, err := s.conn.QueryContext(s.ctx, query)
	if err != nil {
		if deadSession(err) {
			s.dead = true
		}
		return nil, adapters.ExecFailed(s.step, query, located(query, err))
	}
	res, err := scanRows(rows)
	return res, adapters.ExecFailed(s.step, query, err)
}

// count runs a query returning one number.
func (s *session) count(query string) (int64, error) {
	res, err := s.query(query)
	if err != nil {
		return 0, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return 0, fmt.Errorf("%s: want one value, got %d rows", query, len(res.Rows))
	}
	return adapters.Int(res.Rows[0][0]), nil
}

// transaction runs stmts, which start with BEGIN TRANSACTION and end with
// COMMIT. Snowflake keeps a transaction open after a failed statement, so
// on the first error it rolls back and returns that error.
func (s *session) transaction(stmts []string) error {
	if len(stmts) < 2 || stmts[0] != BeginSQL || stmts[len(stmts)-1] != CommitSQL {
		return fmt.Errorf("snowflake: internal error: a transaction must run from %s to %s", BeginSQL, CommitSQL)
	}
	for i, q := range stmts {
		if err := s.exec(q); err != nil {
			if i > 0 {
				s.rollback()
			}
			return err
		}
	}
	return nil
}

// rollback ends the open transaction, even when the unit's context was
// canceled. If it fails, the connection is discarded: closing the session
// rolls the transaction back on the server.
func (s *session) rollback() {
	ctx := s.ctx
	s.ctx = context.WithoutCancel(ctx)
	if err := s.exec(RollbackSQL); err != nil {
		s.dead = true
	}
	s.ctx = ctx
}

// close returns the connection to the pool, or discards it when its
// session is dead or left inside a transaction.
func (s *session) close() {
	if s.dead {
		s.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	s.conn.Close()
}
