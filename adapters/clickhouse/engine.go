package clickhouse

import (
	"fmt"
	"strings"
)

// Engine clauses, as SHOW CREATE TABLE prints them: ENGINE = Name(args)
// PARTITION BY ... ORDER BY ... SETTINGS .... A cluster's tables are
// Replicated*MergeTree, whose first two arguments are a ZooKeeper path and
// a replica name; the stages and swap tables beside them are the same
// engine without replication, since a table created AS a replicated one
// would claim its ZooKeeper path.

// engineParts splits an engine clause into the engine's name, its
// arguments (nil when it has no parentheses) and the rest of the clause.
func engineParts(clause string) (name string, args []string, rest string, ok bool) {
	s, found := strings.CutPrefix(strings.TrimSpace(clause), "ENGINE = ")
	if !found {
		return "", nil, "", false
	}
	i := strings.IndexAny(s, "( ")
	if i < 0 {
		return s, nil, "", true
	}
	name, s = s[:i], s[i:]
	if s[0] == '(' {
		end := closing(s)
		if end < 0 {
			return "", nil, "", false
		}
		args = splitArgs(s[1:end])
		if args == nil {
			args = []string{}
		}
		s = s[end+1:]
	}
	return name, args, strings.TrimSpace(s), true
}

// closing returns the index of the parenthesis closing s[0], skipping
// quoted text, or -1.
func closing(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '`', '"':
			i = quoteEnd(s, i)
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// quoteEnd returns the index of the quote closing the one at s[i] (with
// backslash escapes), or len(s).
func quoteEnd(s string, i int) int {
	q := s[i]
	for i++; i < len(s) && s[i] != q; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return i
}

// splitArgs splits a list of arguments at its top-level commas.
func splitArgs(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '`', '"':
			i = quoteEnd(s, i)
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func joinEngine(name string, args []string, rest string) string {
	s := "ENGINE = " + name + "(" + strings.Join(args, ", ") + ")"
	if rest != "" {
		s += " " + rest
	}
	return s
}

// unreplicated returns an engine clause without replication: a
// Replicated*MergeTree(path, replica, args...) becomes *MergeTree(args...);
// other engines are returned as they are.
func unreplicated(clause string) string {
	name, args, rest, ok := engineParts(clause)
	if !ok || !strings.HasPrefix(name, "Replicated") {
		return clause
	}
	if len(args) >= 2 {
		args = args[2:]
	}
	return joinEngine(strings.TrimPrefix(name, "Replicated"), args, rest)
}

// replicated returns a MergeTree family engine clause as its replicated
// twin with ZooKeeper path path and replica name '{replica}' (a macro every
// node of a cluster defines).
func replicated(d Dialect, clause, path string) (string, error) {
	name, args, rest, ok := engineParts(clause)
	if !ok || !strings.HasSuffix(name, "MergeTree") {
		return "", fmt.Errorf("cannot replicate a table whose engine is %q: refill replicates MergeTree engines", clause)
	}
	if strings.HasPrefix(name, "Replicated") {
		return clause, nil
	}
	return joinEngine("Replicated"+name, append([]string{d.QuoteString(path), "'{replica}'"}, args...), rest), nil
}

// distributed is what a Distributed table's engine clause says.
type distributed struct {
	cluster, database, table string
	key                      string // the sharding key, "" if none
}

// distributedOf reads the engine clause of a Distributed table.
func distributedOf(clause string) (distributed, bool) {
	name, args, _, ok := engineParts(clause)
	if !ok || name != "Distributed" || len(args) < 3 {
		return distributed{}, false
	}
	d := distributed{cluster: unquote(args[0]), database: unquote(args[1]), table: unquote(args[2])}
	if len(args) > 3 {
		d.key = args[3]
	}
	return d, true
}

// unquote strips one level of quotes or backquotes from an identifier or
// string argument.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '`' || s[0] == '"') && s[len(s)-1] == s[0] {
		r := strings.NewReplacer(`\\`, `\`, `\'`, `'`, "\\`", "`", `\"`, `"`)
		return r.Replace(s[1 : len(s)-1])
	}
	return s
}
