package server

import (
	"errors"
	"strings"
)

// token is one lexical element of a statement.
type token struct {
	kind       tokenKind
	text       string // as written, quotes included
	start, end int    // byte offsets in the statement
}

type tokenKind int

const (
	tokenWord   tokenKind = iota // unquoted identifier or keyword
	tokenQuoted                  // `identifier` or "identifier"
	tokenString                  // 'string' or $tag$heredoc$tag$
	tokenNumber
	tokenSymbol // any other single character: ( ) , ; = - ...
)

// is reports whether t is the keyword or symbol s (keywords ignore case).
func (t token) is(s string) bool {
	switch t.kind {
	case tokenWord:
		return strings.EqualFold(t.text, s)
	case tokenSymbol:
		return t.text == s
	}
	return false
}

// errUnterminated is returned for a string, quoted identifier or comment
// that does not end.
var errUnterminated = errors.New("unterminated string, identifier or comment")

// lexer splits a statement into tokens as far as the server needs them:
// it skips whitespace and comments (--, "# ", "#!", and /* */, which nest
// as in ClickHouse) and keeps strings, quoted identifiers and heredocs
// whole, so that keywords and semicolons inside them are not seen.
type lexer struct {
	s   string
	pos int
}

// next returns the next token, or ok false at the end of the statement.
func (l *lexer) next() (t token, ok bool, err error) {
	if err := l.skipSpace(); err != nil {
		return token{}, false, err
	}
	if l.pos >= len(l.s) {
		return token{}, false, nil
	}
	start := l.pos
	c := l.s[l.pos]
	kind := tokenSymbol
	switch {
	case c == '\'' || c == '`' || c == '"':
		kind = tokenString
		if c != '\'' {
			kind = tokenQuoted
		}
		if err := l.quoted(c); err != nil {
			return token{}, false, err
		}
	case c == '$' && l.heredoc():
		kind = tokenString
	case isWordStart(c):
		kind = tokenWord
		for l.pos < len(l.s) && isWordPart(l.s[l.pos]) {
			l.pos++
		}
	case c >= '0' && c <= '9':
		kind = tokenNumber
		for l.pos < len(l.s) && (isWordPart(l.s[l.pos]) || l.s[l.pos] == '.') {
			l.pos++
		}
	default:
		l.pos++
	}
	return token{kind: kind, text: l.s[start:l.pos], start: start, end: l.pos}, true, nil
}

// rest returns the text after the last token.
func (l *lexer) rest() string { return l.s[l.pos:] }

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isWordPart(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

// skipSpace skips whitespace and comments.
func (l *lexer) skipSpace() error {
	for l.pos < len(l.s) {
		rest := l.s[l.pos:]
		switch {
		case strings.ContainsRune(" \t\n\r\f\v", rune(rest[0])):
			l.pos++
		case strings.HasPrefix(rest, "--"), strings.HasPrefix(rest, "# "), strings.HasPrefix(rest, "#!"):
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				l.pos += i + 1
			} else {
				l.pos = len(l.s)
			}
		case strings.HasPrefix(rest, "/*"):
			depth := 0
			for {
				switch {
				case l.pos >= len(l.s):
					return errUnterminated
				case strings.HasPrefix(l.s[l.pos:], "/*"):
					depth++
					l.pos += 2
				case strings.HasPrefix(l.s[l.pos:], "*/"):
					depth--
					l.pos += 2
				default:
					l.pos++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// quoted consumes a string or identifier quoted with q, which may contain
// backslash escapes and doubled quotes.
func (l *lexer) quoted(q byte) error {
	for l.pos++; l.pos < len(l.s); l.pos++ {
		switch l.s[l.pos] {
		case '\\':
			l.pos++
		case q:
			if l.pos+1 < len(l.s) && l.s[l.pos+1] == q {
				l.pos++
				continue
			}
			l.pos++
			return nil
		}
	}
	return errUnterminated
}

// heredoc consumes $tag$...$tag$ (tag possibly empty) and reports whether
// there was one.
func (l *lexer) heredoc() bool {
	rest := l.s[l.pos:]
	end := strings.IndexByte(rest[1:], '$')
	if end < 0 {
		return false
	}
	tag := rest[:end+2]
	for i := 1; i < len(tag)-1; i++ {
		if !isWordPart(tag[i]) {
			return false
		}
	}
	closing := strings.Index(rest[len(tag):], tag)
	if closing < 0 {
		return false
	}
	l.pos += len(tag) + closing + len(tag)
	return true
}

// unquote returns the name a word or quoted identifier token stands for.
func unquote(t token) string {
	if t.kind != tokenQuoted {
		return t.text
	}
	q := t.text[0]
	body := t.text[1 : len(t.text)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			c = body[i]
		case c == q && i+1 < len(body) && body[i+1] == q:
			i++
		}
		b.WriteByte(c)
	}
	return b.String()
}
