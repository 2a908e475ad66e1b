package server

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseStatement(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		kind string
		// detail is the settings of a SET, the database of a USE, and
		// otherwise the SQL for the engine where it differs.
		detail string
	}{
		{"SELECT 1", "rows", ""},
		{"  -- a comment\n/* and /* a nested */ one */ (SELECT 1) UNION ALL (SELECT 2)", "rows", ""},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "rows", ""},
		{"select 1;", "rows", ""},
		{"SHOW CREATE TABLE t", "rows", ""},
		{"EXISTS TABLE `a`.`b`", "rows", ""},
		{"DESCRIBE TABLE (SELECT 1)", "rows", ""},
		{"EXPLAIN ESTIMATE SELECT * FROM t", "rows", ""},
		{"SELECT 1 AS x FORMAT JSONEachRow", "rows", "SELECT 1 AS x "},
		{"SELECT format('{}', 'x') AS format", "rows", ""},
		{"SELECT 'FORMAT JSON; SELECT 2'", "rows", ""},
		{"CREATE TABLE t (d Date) ENGINE = MergeTree ORDER BY d", "other", ""},
		{"ALTER TABLE t REPLACE PARTITION ID '202401' FROM s, DROP PARTITION ID '202402'", "other", ""},
		{"INSERT INTO t (a, b) SELECT 1, 2 UNION ALL SELECT 3, 4", "other", ""},
		{"INSERT INTO t WITH 1 AS x SELECT x", "other", ""},
		{"INSERT INTO t VALUES (1, 'a;b')", "other", ""},
		{"INSERT INTO t FORMAT CSV\n1,\"a\n", "other", ""},
		{"INSERT INTO t VALUES", "insert-data", ""},
		{"INSERT INTO t (a) VALUES ;", "insert-data", ""},
		{"INSERT INTO t FORMAT Native", "insert-data", ""},
		{"INSERT INTO t", "insert-data", ""},
		{"SET log_comment = 'a, b', max_threads = 3", "set", "[{log_comment 'a, b'} {max_threads 3}]"},
		{"SET `max_threads` = -1", "set", "[{max_threads -1}]"},
		{"SET ROLE admin", "other", ""},
		{"USE `my db`", "use", "my db"},
		{"USE db;", "use", "db"},
		{"", "other", ""},
		{"SELECT 'unterminated", "other", ""},
	} {
		st, err := parseStatement(tc.sql)
		if err != nil {
			t.Errorf("%q: %v", tc.sql, err)
			continue
		}
		kind := []string{"other", "rows", "insert-data", "set", "use"}[st.kind]
		var detail string
		switch {
		case st.kind == statementSet:
			detail = fmt.Sprint(st.settings)
		case st.kind == statementUse:
			detail = st.database
		case st.sql != tc.sql:
			detail = st.sql
		}
		if kind != tc.kind || detail != tc.detail {
			t.Errorf("%q: %s %q, want %s %q", tc.sql, kind, detail, tc.kind, tc.detail)
		}
	}
}

func TestMultiStatementsAreRefused(t *testing.T) {
	for _, sql := range []string{"SELECT 1; SELECT 2", "CREATE TABLE t (a UInt8) ENGINE = Log; DROP TABLE t", "INSERT INTO t SELECT 1; SELECT 2"} {
		_, err := parseStatement(sql)
		var ex *Exception
		if !errors.As(err, &ex) || ex.Code != 62 {
			t.Errorf("%q: %v, want a SYNTAX_ERROR", sql, err)
		}
	}
}

// TestDropSyncIsRefused: chDB hangs on a DROP that waits for the data to
// go (measured on 26.5: the statement never returns and the server then
// answers nothing), so the front end refuses it; the same words elsewhere
// still run.
func TestDropSyncIsRefused(t *testing.T) {
	for _, sql := range []string{"DROP TABLE t SYNC", "drop table `db`.`t` sync;", "DROP DATABASE d NO DELAY", "DETACH TABLE t SYNC"} {
		_, err := parseStatement(sql)
		var ex *Exception
		if !errors.As(err, &ex) || ex.Code != 48 {
			t.Errorf("%q: %v, want NOT_IMPLEMENTED", sql, err)
		}
	}
	for _, sql := range []string{"DROP TABLE t", "DROP TABLE `sync`.t", "DROP TABLE db.`sync`", "SYSTEM SYNC REPLICA t", "SELECT 1 AS sync", "DROP TABLE t_sync"} {
		if _, err := parseStatement(sql); err != nil {
			t.Errorf("%q: %v", sql, err)
		}
	}
}

func TestExceptionFrom(t *testing.T) {
	for in, want := range map[string]string{
		"Code: 60. DB::Exception: Table default.x does not exist. (UNKNOWN_TABLE)":       "60 DB::Exception DB::Exception: Table default.x does not exist. (UNKNOWN_TABLE)",
		"Code: 62. DB::Exception: Syntax error:\nfailed at position 1. (SYNTAX_ERROR)\n": "62 DB::Exception DB::Exception: Syntax error:\nfailed at position 1. (SYNTAX_ERROR)",
		"invalid connection": "1001 std::exception std::exception: invalid connection",
	} {
		ex := ExceptionFrom(errors.New(in))
		if got := fmt.Sprint(ex.Code, " ", ex.Name, " ", ex.Message); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestIsLiteral(t *testing.T) {
	for v, want := range map[string]bool{
		`'it\'s'`: true, "42": true, "-1.5": true, " 'a' ": true,
		"'a'; DROP TABLE t": false, "'a', 'b'": false, "now()": false, "": false, "'open": false,
	} {
		if got := isLiteral(v); got != want {
			t.Errorf("isLiteral(%q) = %v", v, got)
		}
	}
}
