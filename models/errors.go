package models

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnknownModel is returned (wrapped) when a name does not match any model
// of the project.
var ErrUnknownModel = errors.New("unknown model")

// Error is a problem in one of the project's files, located by file, line
// and column. Line and Col are 1-based; either is 0 when unknown.
type Error struct {
	File string // slash-separated path relative to the project folder
	Line int
	Col  int
	Msg  string
	// Source is the text of the offending line, when known; Error prints it
	// under the message with a caret at Col.
	Source string
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Source != "" && e.Line > 0 {
		src := strings.ReplaceAll(e.Source, "\t", " ")
		fmt.Fprintf(&b, "\n  %4d | %s", e.Line, src)
		if e.Col > 0 {
			fmt.Fprintf(&b, "\n       | %s^", strings.Repeat(" ", e.Col-1))
		}
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorList is every problem found in a project, sorted by file and position.
// Validation collects all of them rather than stopping at the first.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap lets errors.Is and errors.As see every error in the list.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Err returns the list as an error, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.sort()
	return l
}

func (l *ErrorList) add(err error) {
	if err == nil {
		return
	}
	var list ErrorList
	if errors.As(err, &list) {
		*l = append(*l, list...)
		return
	}
	var e *Error
	if errors.As(err, &e) {
		*l = append(*l, e)
		return
	}
	*l = append(*l, &Error{Msg: err.Error(), Err: err})
}

func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// sourceLine returns line n (1-based) of text, or "".
func sourceLine(text string, n int) string {
	if n < 1 {
		return ""
	}
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimRight(text, "\r")
}

// suggest returns ` (did you mean "x"?)` when one of known is close to s.
func suggest(s string, known []string) string {
	best := Closest(s, known)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Closest returns the one of known nearest to s by edit distance, if it
// is near enough to be what s meant (fewer edits than half its length,
// plus two), else "".
func Closest(s string, known []string) string {
	best, bestDist := "", len(s)/2+2
	for _, k := range known {
		if d := editDistance(s, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
