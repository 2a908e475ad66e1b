package models

import (
	"strings"
	"unicode"
)

// normalizeSQL returns src with its formatting removed, so that
// reformatting a model does not change its fingerprint: comments (-- and
// /* */) are dropped, every run of white space becomes one space, and the
// space next to punctuation and operators and at either end goes. String literals ('...',
// $$...$$), quoted identifiers ("...", `...`) and the quoted parts of
// template expressions are kept exactly, so changing a literal does
// change the fingerprint.
func normalizeSQL(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	space := false // white space (or a comment) seen since the last token
	emit := func(s string) {
		if space && b.Len() > 0 {
			last := lastByte(&b)
			joined := string([]byte{last, s[0]})
			if !tight(last) && !tight(s[0]) || joined == "--" || joined == "/*" || joined == "*/" {
				b.WriteByte(' ')
			}
		}
		space = false
		b.WriteString(s)
	}
	inExpr := false // inside {{ }}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case !inExpr && strings.HasPrefix(src[i:], "{{"):
			emit("{{")
			inExpr = true
			i += 2
		case inExpr && strings.HasPrefix(src[i:], "}}"):
			emit("}}")
			inExpr = false
			i += 2
		case !inExpr && strings.HasPrefix(src[i:], "--"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			i += j
			space = true
		case !inExpr && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
			} else {
				i += j + 4
			}
			space = true
		case !inExpr && strings.HasPrefix(src[i:], "$$"):
			j := strings.Index(src[i+2:], "$$")
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			emit(src[i:end])
			i = end
		case c == '\'' || c == '"' || c == '`':
			end := quoted(src, i, inExpr)
			emit(src[i:end])
			i = end
		case unicode.IsSpace(rune(c)):
			space = true
			i++
		case tight(c):
			emit(src[i : i+1])
			i++
		default:
			j := i + 1
			for j < len(src) && !unicode.IsSpace(rune(src[j])) && !tight(src[j]) && !strings.ContainsRune("'\"`$", rune(src[j])) {
				j++
			}
			emit(src[i:j])
			i = j
		}
	}
	return strings.TrimRight(b.String(), ";")
}

// quoted returns the index just past the quoted text starting at i. SQL
// doubles a quote to escape it; template expressions use backslashes.
func quoted(src string, i int, backslash bool) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch {
		case backslash && src[j] == '\\':
			j++
		case src[j] == q && !backslash && j+1 < len(src) && src[j+1] == q:
			j++
		case src[j] == q:
			return j + 1
		}
	}
	return len(src)
}

// tight reports whether c needs no space around it: punctuation and
// operators.
func tight(c byte) bool { return strings.IndexByte("(),;+-*/=<>!%|&^~:.[]{}", c) >= 0 }

func lastByte(b *strings.Builder) byte {
	s := b.String()
	return s[len(s)-1]
}
