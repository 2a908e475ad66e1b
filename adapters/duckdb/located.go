package duckdb

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
)

// lineRE finds the line DuckDB quotes in a parser or binder error, with
// the caret under it:
//
//	LINE 4:   CAST(sum(trips AS BIGINT) AS n
//	                         ^
var lineRE = regexp.MustCompile(`(?m)^(LINE (\d+): )(.*)\n( *)\^`)

// located returns err as an adapters.StatementError when DuckDB's message
// says where in stmt it is, else err.
func located(stmt string, err error) error {
	if err == nil {
		return nil
	}
	m := lineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	line, _ := strconv.Atoi(m[2])
	col := len(m[4]) - len(m[1]) // 0-based, in the quoted text
	shown := m[3]
	// A long line is quoted in part, between ellipses.
	if s, ok := strings.CutPrefix(shown, "..."); ok {
		shown, col = s, col-3
	}
	shown = strings.TrimSuffix(shown, "...")
	start := adapters.OffsetOf(stmt, line, 1)
	if start < 0 || col < 0 {
		return err
	}
	text := stmt[start:]
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	base := strings.Index(text, shown)
	if base < 0 {
		return err
	}
	return &adapters.StatementError{Statement: stmt, Offset: start + base + col, Err: err}
}
