package server

import (
	"strings"

	"github.com/ClickHouse/ch-go/proto"
)

// statementKind says how the server handles a statement.
type statementKind int

const (
	// statementOther runs in the engine and is answered with whatever it
	// outputs (nothing for DDL, ALTER and INSERT ... SELECT).
	statementOther statementKind = iota
	// statementRows returns a result (SELECT, WITH, SHOW, EXISTS,
	// DESCRIBE, EXPLAIN, CHECK, FROM ... SELECT): its columns are sent
	// even when it has no rows.
	statementRows
	// statementInsertData is an INSERT whose rows the client would send
	// in Data packets (INSERT ... VALUES or FORMAT with no data after
	// it); the front end does not take client data.
	statementInsertData
	// statementSet is SET name = value, ...: settings of the connection.
	statementSet
	// statementUse is USE database: the connection's current database.
	statementUse
)

// statement is a client's statement as the server sees it.
type statement struct {
	kind statementKind
	// sql is the text for the engine: the statement less a FORMAT clause,
	// since over the native protocol the result is always Native blocks.
	sql      string
	settings []Setting // of a SET
	database string    // of a USE
}

// rowKeywords start statements that return a result.
var rowKeywords = []string{"SELECT", "WITH", "SHOW", "EXISTS", "DESCRIBE", "DESC", "EXPLAIN", "CHECK", "FROM"}

// parseStatement classifies sql. It returns a SYNTAX_ERROR exception for
// several statements separated by semicolons, which servers refuse and
// chDB would run. Text it cannot lex is left for the engine to report.
func parseStatement(sql string) (statement, error) {
	st := statement{kind: statementOther, sql: sql}
	l := &lexer{s: sql}
	var toks []token
	for {
		t, ok, err := l.next()
		if err != nil {
			return st, nil
		}
		if !ok {
			break
		}
		toks = append(toks, t)
		if formatData(toks) {
			// INSERT ... FORMAT name: the rest is rows, not SQL.
			st.kind = statementOther
			if strings.Trim(l.rest(), " \t\r\n;") == "" {
				st.kind = statementInsertData
			}
			return st, nil
		}
	}
	for i, t := range toks {
		if t.is(";") && i+1 < len(toks) {
			return st, newException(proto.ErrSyntaxError, "Syntax error (Multi-statements are not allowed): failed at position %d (%s): %s",
				t.start+1, toks[i+1].text, excerpt(sql[t.start:]))
		}
	}
	if len(toks) > 0 && toks[len(toks)-1].is(";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return st, nil
	}
	first := toks[0]
	for _, t := range toks {
		if !t.is("(") {
			first = t
			break
		}
	}
	if (first.is("DROP") || first.is("DETACH")) && waitsForDrop(toks) {
		// Measured: chDB never returns from it, and the one session that
		// serves every connection then answers nothing more.
		return st, newException(proto.ErrNotImplemented, "The chDB front end does not run %s ... SYNC or NO DELAY: chDB waits for its own session forever; leave the clause out", strings.ToUpper(first.text))
	}
	switch {
	case first.is("INSERT"):
		st.kind = insertKind(toks)
	case first.is("SET"):
		if settings, ok := parseSet(sql, toks[1:]); ok {
			st.kind, st.settings = statementSet, settings
		}
	case first.is("USE") && len(toks) == 2 && (toks[1].kind == tokenWord || toks[1].kind == tokenQuoted):
		st.kind, st.database = statementUse, unquote(toks[1])
	default:
		for _, k := range rowKeywords {
			if first.is(k) {
				st.kind = statementRows
				st.sql = withoutFormat(sql, toks)
			}
		}
	}
	return st, nil
}

// waitsForDrop reports whether a DROP or DETACH ends with SYNC or NO
// DELAY, which wait until the table's data is gone.
func waitsForDrop(toks []token) bool {
	n := len(toks)
	return n >= 2 && toks[n-1].is("SYNC") || n >= 3 && toks[n-2].is("NO") && toks[n-1].is("DELAY")
}

// formatData reports whether toks, the tokens read so far, are an INSERT
// (with no SELECT) that has just named its FORMAT: what follows is data.
func formatData(toks []token) bool {
	n := len(toks)
	if n < 3 || !toks[0].is("INSERT") || !toks[n-2].is("FORMAT") || toks[n-1].kind != tokenWord {
		return false
	}
	for _, t := range toks {
		if t.is("SELECT") || t.is("WITH") {
			return false
		}
	}
	return true
}

// insertKind classifies an INSERT without FORMAT: with a SELECT or WITH
// it is INSERT ... SELECT; with rows after VALUES the engine reads them
// from the text; otherwise the client would send the rows.
func insertKind(toks []token) statementKind {
	depth := 0
	for i, t := range toks {
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		case depth > 0:
		case t.is("SELECT"), t.is("WITH"):
			return statementOther
		case t.is("VALUES"):
			if i+1 < len(toks) {
				return statementOther
			}
			return statementInsertData
		}
	}
	return statementInsertData
}

// parseSet reads the assignments of SET name = value, name = value.
// It reports false for other SET statements (SET ROLE, ...).
func parseSet(sql string, toks []token) ([]Setting, bool) {
	var out []Setting
	for len(toks) > 0 {
		if len(toks) < 3 || (toks[0].kind != tokenWord && toks[0].kind != tokenQuoted) || !toks[1].is("=") {
			return nil, false
		}
		name, rest := unquote(toks[0]), toks[2:]
		depth, n := 0, 0
		for n < len(rest) {
			t := rest[n]
			if depth == 0 && t.is(",") {
				break
			}
			if t.is("(") || t.is("[") {
				depth++
			} else if t.is(")") || t.is("]") {
				depth--
			}
			n++
		}
		if n == 0 {
			return nil, false
		}
		out = append(out, Setting{Name: name, Value: sql[rest[0].start:rest[n-1].end]})
		toks = rest[n:]
		if len(toks) > 0 {
			toks = toks[1:] // the comma
			if len(toks) == 0 {
				return nil, false
			}
		}
	}
	return out, len(out) > 0
}

// withoutFormat removes a top-level FORMAT name clause from a query.
func withoutFormat(sql string, toks []token) string {
	depth := 0
	for i, t := range toks {
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		case depth == 0 && t.is("FORMAT") && i+1 < len(toks) && toks[i+1].kind == tokenWord &&
			(i+2 == len(toks) || !toks[i+2].is("(")):
			return sql[:t.start] + sql[toks[i+1].end:]
		}
	}
	return sql
}

// excerpt returns the start of s, for messages.
func excerpt(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
