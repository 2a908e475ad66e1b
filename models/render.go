package models

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Scope is what rendering needs besides the partitions: the warehouse's
// dialect, the default schema for top-level models and unqualified
// sources, and the values of var().
type Scope struct {
	Dialect Dialect
	Schema  string
	Vars    map[string]any
	// Refs optionally replaces the text ref() returns for some models, by
	// model name. Publishing several models together uses it to point a
	// model at its upstream's staged rows.
	Refs map[string]SQL
	// This optionally replaces the text of this (audits point it at the stage).
	This SQL
	// Defer replaces the text ref() returns for models read from another
	// target (--defer), by model name. Unlike Refs, which point at this
	// run's stages, it is part of a model's version: a partition built
	// from another target's tables is another version of the model.
	Defer map[string]SQL
	// Target is the name of the target rendered for, which templates read
	// as target.name; empty when no target applies.
	Target string
}

// cacheable reports whether renders under s may share cached work: scopes
// with overrides are made per stage and would only fill the caches.
func (s *Scope) cacheable() bool { return s.This == "" && s.Refs == nil && s.Defer == nil }

// Relation returns the table model m is materialized in under s.
func (s *Scope) Relation(m *Model) Relation {
	r := m.Relation
	if r.Schema == "" {
		r.Schema = s.Schema
	}
	return r
}

// refText is what ref() of up returns under s, overlays aside: its
// relation, or the other target's when it is deferred.
func (s *Scope) refText(up *Model) SQL {
	if text, ok := s.Defer[up.Name]; ok {
		return text
	}
	return SQL(s.Relation(up).Quote(s.Dialect))
}

// envKind selects the names a template may use.
type envKind int

const (
	envWhole envKind = iota // an unpartitioned model
	envTime                 // a time-partitioned model
	envList                 // a list-partitioned model
)

// prototype returns an environment with every name of kind, holding values
// of the right types, for type-checking at compile time.
func prototype(kind envKind) map[string]any {
	env := functions(nil, nil, nil)
	env["this"] = SQL("")
	env["partitions"] = []any{}
	switch kind {
	case envTime:
		env["start"], env["end"] = Time{}, Time{}
		env["partition"] = ""
	case envList:
		var v any
		env["partition"] = v
	}
	return env
}

// functions returns the template functions bound to a model and scope.
// With a nil scope the functions only serve type-checking.
func functions(m *Model, s *Scope, loc *time.Location) map[string]any {
	if loc == nil {
		loc = time.UTC
	}
	fns := portableFunctions(s, loc)
	maps.Copy(fns, map[string]any{
		"ref": func(name string) (SQL, error) {
			up, ok := m.upstream[name]
			if !ok {
				return "", fmt.Errorf("ref(%q): %w", name, ErrUnknownModel)
			}
			if text, ok := s.Refs[up.Name]; ok {
				return text, nil
			}
			return s.refText(up), nil
		},
		"source": func(name string) (SQL, error) {
			r, err := s.SourceRelation(name)
			if err != nil {
				return "", err
			}
			return SQL(r.Quote(s.Dialect)), nil
		},
		"var": func(name string) (any, error) {
			v, ok := s.Vars[name]
			if !ok {
				return nil, fmt.Errorf("var(%q) is not set: add it under vars: in refill.yml or pass --var %s=VALUE", name, name)
			}
			return v, nil
		},
		"raw": func(v any) SQL {
			switch v := v.(type) {
			case SQL:
				return v
			case string:
				return SQL(v)
			}
			return SQL(fmt.Sprint(v))
		},
		"ident": func(name string) SQL { return SQL(s.Dialect.QuoteIdent(name)) },
		"date_add": func(x any, n int, unit string) (any, error) {
			g, err := ParseUnit(unit)
			if err != nil {
				return nil, err
			}
			switch x := x.(type) {
			case Time:
				t := x.T.In(loc)
				if g == Hour {
					t = t.Add(time.Duration(n) * time.Hour)
				} else {
					y, mo, d := t.Date()
					h, mi, sec := t.Clock()
					switch g {
					case Day:
						t = time.Date(y, mo, d+n, h, mi, sec, t.Nanosecond(), loc)
					case Week, SundayWeek:
						t = time.Date(y, mo, d+7*n, h, mi, sec, t.Nanosecond(), loc)
					case Month:
						t = time.Date(y, mo+time.Month(n), d, h, mi, sec, t.Nanosecond(), loc)
					case Year:
						t = time.Date(y+n, mo, d, h, mi, sec, t.Nanosecond(), loc)
					}
				}
				return Time{T: t, Timestamp: x.Timestamp}, nil
			case SQL:
				return SQL(s.Dialect.DateAdd(string(x), n, g)), nil
			}
			return nil, fmt.Errorf("date_add needs a date (start, end) or SQL (raw, ident), not %T", x)
		},
		"date_trunc": func(unit string, x any) (any, error) {
			if unit == fiscalUnit {
				return m.truncateFiscal(s, loc, x)
			}
			g, err := ParseUnit(unit)
			if err != nil {
				return nil, err
			}
			switch x := x.(type) {
			case Time:
				return Time{T: g.Truncate(x.T, loc), Timestamp: x.Timestamp}, nil
			case SQL:
				return SQL(s.Dialect.DateTrunc(g, string(x))), nil
			}
			return nil, fmt.Errorf("date_trunc needs a date (start, end) or SQL (raw, ident), not %T", x)
		},
		"cast_date": func(x any) (any, error) {
			switch x := x.(type) {
			case Time:
				return Time{T: x.T.In(loc), Timestamp: false}, nil
			case SQL:
				return SQL(s.Dialect.CastDate(string(x))), nil
			}
			return nil, fmt.Errorf("cast_date needs a date (start, end) or SQL (raw, ident), not %T", x)
		},
		"cast_timestamp": func(x any) (any, error) {
			if t, ok := x.(Time); ok {
				return Time{T: t.T, Timestamp: true}, nil
			}
			return nil, fmt.Errorf("cast_timestamp needs a date (start, end), not %T", x)
		},
	})
	return fns
}

// Render renders m's statement for partitions, which must be consecutive
// partitions of m (one, unless the model runs in batches). start and end
// then span all of them.
func (m *Model) Render(s *Scope, parts ...Partition) (string, error) {
	env, err := m.env(s, parts)
	if err != nil {
		return "", err
	}
	sql, err := m.SQL.render(s.Dialect, s, env)
	return trimStatement(sql), err
}

// A WarehouseError is an error a warehouse raised running a model's
// statement, placed at the line of the model's file that rendered the
// part it points at. It is not a model Error (the project loaded; the
// warehouse refused what it rendered): it unwraps to the warehouse's.
type WarehouseError struct {
	At  Error // where, and the warehouse's message
	Err error
}

func (e *WarehouseError) Error() string { return e.At.Error() }
func (e *WarehouseError) Unwrap() error { return e.Err }

// Locate returns the error err, which the warehouse raised about byte
// offset off of the statement m.Render(s, parts...) returned, as a
// *WarehouseError at the line and column of m's file that rendered that
// byte, quoting the line. It returns err when the offset cannot be
// placed.
func (m *Model) Locate(s *Scope, parts []Partition, off int, err error) error {
	env, eerr := m.env(s, parts)
	if eerr != nil || off < 0 {
		return err
	}
	line, col, ok := m.SQL.positionOf(s.Dialect, s, env, off)
	if !ok || line < 1 {
		return err
	}
	return &WarehouseError{At: Error{File: m.SQL.file, Line: line, Col: col, Msg: warehouseMessage(err), Source: sourceLine(m.SQL.text, line)}, Err: err}
}

// warehouseMessage is err's message without the lines a warehouse adds
// to point into its statement (DuckDB's "LINE 4: ..." and its caret),
// which Locate replaces with the model file's line.
func warehouseMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\nLINE "); i >= 0 {
		rest := msg[i+1:]
		// The quoted line and the caret under it.
		for k := 0; k < 2; k++ {
			j := strings.IndexByte(rest, '\n')
			if j < 0 {
				rest = ""
				break
			}
			rest = rest[j+1:]
		}
		msg = strings.TrimRight(msg[:i], "\n") + strings.TrimRight("\n"+rest, "\n")
	}
	// ClickHouse's "(line 10, col 1)" counts in the statement too.
	msg = statementLineRE.ReplaceAllString(msg, "")
	return strings.TrimSpace(msg)
}

var statementLineRE = regexp.MustCompile(` \(line \d+, col \d+\)`)

// trimStatement drops trailing blanks and semicolons, so adapters can wrap
// the statement in their own.
func trimStatement(sql string) string {
	return strings.TrimRightFunc(sql, func(r rune) bool { return r == ';' || unicode.IsSpace(r) })
}

// RenderTemplate renders another template of m (an audit, a watermark
// query) with the same names as m's statement.
func (m *Model) RenderTemplate(t *Template, s *Scope, parts ...Partition) (string, error) {
	env, err := m.env(s, parts)
	if err != nil {
		return "", err
	}
	sql, err := t.render(s.Dialect, s, env)
	return trimStatement(sql), err
}

// renderEnv is what one render's expressions see. The names that change
// per partition are fields; the full expr environment, with the template
// functions, is built only when an expression needs the VM.
type renderEnv struct {
	m          *Model
	s          *Scope
	start, end Time
	partition  any
	partitions []any
	this       SQL
	kind       Kind
	full       map[string]any
}

// get returns a partition-dependent name's value.
func (e *renderEnv) get(name string) any {
	switch name {
	case "start":
		return e.start
	case "end":
		return e.end
	case "partition":
		return e.partition
	case "partitions":
		return e.partitions
	}
	return nil
}

// all returns the full environment for the expression VM.
func (e *renderEnv) all() map[string]any {
	if e.full != nil {
		return e.full
	}
	// The functions bound to m and s are made once per cacheable scope.
	var fns map[string]any
	if e.s.cacheable() {
		base, ok := e.m.funcs.Load(e.s)
		if !ok {
			base, _ = e.m.funcs.LoadOrStore(e.s, functions(e.m, e.s, e.m.Config.Location))
		}
		fns = base.(map[string]any)
	} else {
		fns = functions(e.m, e.s, e.m.Config.Location)
	}
	env := make(map[string]any, len(fns)+5)
	for k, v := range fns {
		env[k] = v
	}
	env["this"] = e.this
	env["partitions"] = e.partitions
	switch e.kind {
	case TimePartitioned:
		env["start"], env["end"], env["partition"] = e.start, e.end, e.partition
	case ListPartitioned:
		env["partition"] = e.partition
	}
	e.full = env
	return env
}

func (m *Model) env(s *Scope, parts []Partition) (*renderEnv, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: render needs a partition", m.Name)
	}
	e := &renderEnv{m: m, s: s, kind: m.Kind(), this: s.This}
	if e.this == "" {
		e.this = SQL(s.Relation(m).Quote(s.Dialect))
	}
	e.partitions = make([]any, len(parts))
	for i, p := range parts {
		e.partitions[i] = p.Key
		if e.kind == ListPartitioned {
			e.partitions[i] = p.Value
		}
	}
	switch e.kind {
	case TimePartitioned:
		first, last := parts[0], parts[len(parts)-1]
		loc := m.Config.Location
		e.start = Time{T: first.Start.In(loc), Timestamp: m.Config.TimestampWindow}
		e.end = Time{T: last.End.In(loc), Timestamp: m.Config.TimestampWindow}
		e.partition = first.Key
	case ListPartitioned:
		e.partition = parts[0].Value
	}
	return e, nil
}
