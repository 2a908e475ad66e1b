package models

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"
)

// Template is SQL text with {{ expression }} placeholders. Each expression
// is an expr-lang expression (https://expr-lang.org), compiled once when the
// project loads and evaluated for every partition.
type Template struct {
	file   string
	text   string // the whole file, for quoting offending lines
	src    string // the template's own text, as written
	parts  []part
	Refs   []string // names passed to ref(), in order of first use
	Source []string // names passed to source()
	Vars   []string // names passed to var()
	// UsesPartition reports whether an expression reads partition, which is
	// ambiguous when several partitions render as one batch.
	UsesPartition bool
	// UsesThis reports whether an expression reads this.
	UsesThis bool
	// UsesTarget reports whether an expression reads target, whose name
	// then belongs to the model's version (see Model.Version).
	UsesTarget bool
	thisAt     [2]int // line, col of the first expression that reads this

	calls map[string][2]int // "ref\x00name" -> line, col of its first use

	// static caches, per *Scope, the rendered text of the expressions that
	// do not depend on the partition (ref, source, var, this, literals).
	static sync.Map
}

type part struct {
	text string // literal SQL, when prog is nil
	expr string
	prog *vm.Program
	// position of the text's or the expression's first character in the
	// file; block is set when the template came from a YAML block scalar,
	// whose columns are not tracked.
	line, col int
	block     bool
	// varies is set when the expression reads a partition-dependent name;
	// ident holds the name when the expression is just that name.
	varies bool
	ident  string
}

// partitionNames are the template names whose value changes per partition.
var partitionNames = map[string]bool{"start": true, "end": true, "partition": true, "partitions": true}

// parseTemplateAt splits src into literal text and expressions. src starts
// at line:col of file, whose whole text is fileText.
func parseTemplateAt(fileName, fileText, src string, line, col int, style yaml.Style) (*Template, error) {
	t := &Template{file: fileName, text: fileText, src: src}
	block := style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	if block {
		line, col = line+1, 0
	}
	posAt := func(off int) (int, int) {
		l, c := line, col
		for _, r := range src[:off] {
			if r == '\n' {
				l, c = l+1, 1
			} else {
				c++
			}
		}
		if block {
			c = 0
		}
		return l, c
	}
	rest, off := src, 0
	for {
		i := strings.Index(rest, "{{")
		tl, tc := posAt(off)
		if i < 0 {
			t.parts = append(t.parts, part{text: rest, line: tl, col: tc, block: block})
			return t, nil
		}
		t.parts = append(t.parts, part{text: rest[:i], line: tl, col: tc, block: block})
		j := closing(rest[i+2:])
		l, c := posAt(off + i)
		if j < 0 {
			return nil, t.errorAt(l, c, "unclosed {{: every {{ needs a matching }}")
		}
		inner := rest[i+2 : i+2+j]
		lead := len(inner) - len(strings.TrimLeft(inner, " \t\r\n"))
		el, ec := posAt(off + i + 2 + lead)
		if strings.TrimSpace(inner) == "" {
			return nil, t.errorAt(l, c, "empty {{ }}")
		}
		t.parts = append(t.parts, part{expr: strings.TrimSpace(inner), line: el, col: ec, block: block})
		off += i + 2 + j + 2
		rest = rest[i+2+j+2:]
	}
}

// closing returns the index of the "}}" that ends an expression, skipping
// string literals, or -1.
func closing(s string) int {
	var quote rune
	escaped := false
	for i, r := range s {
		switch {
		case quote != 0:
			if escaped {
				escaped = false
			} else if r == '\\' {
				escaped = true
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '}' && strings.HasPrefix(s[i:], "}}"):
			return i
		}
	}
	return -1
}

func (t *Template) errorAt(line, col int, format string, args ...any) *Error {
	return &Error{File: t.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Source: sourceLine(t.text, line)}
}

// exprError positions an expr-lang error inside the file.
func (t *Template) exprError(p *part, err error) *Error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return t.errorAt(p.line, p.col, "%v", err)
	}
	line, col := p.line, p.col
	if fe.Line > 1 {
		line += fe.Line - 1
		col = fe.Column + 1
	} else if col > 0 {
		col += fe.Column
	}
	if p.block {
		col = 0
	}
	msg := fe.Message
	if field, ok := strings.CutPrefix(msg, "type models.TargetInfo has no field "); ok {
		msg = fmt.Sprintf("target has no field %s (it has name and adapter)%s", field, suggest(field, []string{"name", "adapter"}))
	}
	var unknown string
	if _, err := fmt.Sscanf(msg, "unknown name %s", &unknown); err == nil {
		switch unknown {
		case "start", "end":
			msg += " (start and end exist only in time-partitioned models: set partition_by, grain and start)"
		case "partition":
			msg += " (partition exists only in partitioned models: set partition_by)"
		default:
			msg += suggest(unknown, templateNames)
		}
	}
	return &Error{File: t.file, Line: line, Col: col, Msg: "template: " + msg, Source: sourceLine(t.text, line), Err: err}
}

// templateNames lists every name an expression may use, for suggestions.
var templateNames = []string{
	"start", "end", "partition", "partitions", "this", "ref", "source", "var", "raw", "ident",
	"date_add", "date_trunc", "cast_date", "cast_timestamp", "date_diff", "try_cast", "string_agg", "target",
}

// programs memoizes the programs of one project's templates by the kind
// of model and the expression's text, which are all a program depends on:
// models repeat their expressions ({{ start }}, {{ ref("orders") }}), and
// compiling one costs more than parsing the model around it.
type programs map[programKey]*vm.Program

type programKey struct {
	kind envKind
	expr string
}

// compile compiles expression src for a template of a model of kind,
// type-checked against the names available to it (prototype).
func (ps programs) compile(kind envKind, src string) (*vm.Program, error) {
	key := programKey{kind, src}
	if prog, ok := ps[key]; ok {
		return prog, nil
	}
	prog, err := expr.Compile(src, expr.Env(prototype(kind)), expr.DisableBuiltin("now"), expr.DisableBuiltin("date"))
	if err == nil {
		ps[key] = prog
	}
	return prog, err
}

// compile type-checks every expression against the names available to a
// template of a model of kind, and records static references.
func (t *Template) compile(kind envKind, ps programs) error {
	var errs ErrorList
	seen := map[string]bool{}
	t.calls = map[string][2]int{}
	var cur *part
	record := func(list *[]string, kind, name string, loc file.Location) {
		if !seen[kind+name] {
			seen[kind+name] = true
			*list = append(*list, name)
			line, col := cur.line, cur.col
			if !cur.block && !strings.Contains(cur.expr[:min(loc.From, len(cur.expr))], "\n") {
				col += loc.From
			}
			t.calls[kind+"\x00"+name] = [2]int{line, col}
		}
	}
	for i := range t.parts {
		p := &t.parts[i]
		if p.expr == "" {
			continue
		}
		prog, err := ps.compile(kind, p.expr)
		if err != nil {
			errs.add(t.exprError(p, err))
			continue
		}
		p.prog = prog
		cur = p
		node := prog.Node()
		if id, ok := node.(*ast.IdentifierNode); ok && partitionNames[id.Value] {
			p.ident = id.Value
		}
		ast.Walk(&node, visitFunc(func(n ast.Node) {
			if id, ok := n.(*ast.IdentifierNode); ok {
				if id.Value == "partition" {
					t.UsesPartition = true
				}
				if id.Value == "target" {
					t.UsesTarget = true
				}
				if id.Value == "this" && !t.UsesThis {
					t.UsesThis = true
					t.thisAt = [2]int{p.line, p.col}
				}
				if partitionNames[id.Value] {
					p.varies = true
				}
			}
			call, ok := n.(*ast.CallNode)
			if !ok {
				return
			}
			if arg, err := checkHelperArgs(call); err != nil {
				loc := arg.Location()
				errs.add(t.exprError(p, &file.Error{Location: loc, Line: 1, Column: loc.From, Message: err.Error()}))
				return
			}
			id, ok := call.Callee.(*ast.IdentifierNode)
			if !ok || (id.Value != "ref" && id.Value != "source" && id.Value != "var") {
				return
			}
			arg, ok := call.Arguments[0].(*ast.StringNode)
			if !ok {
				loc := call.Location()
				errs.add(t.exprError(p, &file.Error{Location: loc, Line: 1, Column: loc.From,
					Message: fmt.Sprintf("%s() needs a name in quotes, e.g. %s(%q), so refill can check it before running", id.Value, id.Value, "name")}))
				return
			}
			switch id.Value {
			case "ref":
				record(&t.Refs, "ref", arg.Value, call.Location())
			case "source":
				record(&t.Source, "source", arg.Value, call.Location())
			case "var":
				record(&t.Vars, "var", arg.Value, call.Location())
			}
		}))
	}
	return errs.Err()
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n *ast.Node) { f(*n) }

// render evaluates every expression with env and splices the results.
// Expressions that do not depend on the partition are evaluated once per
// scope (the key of the cache); a bare start, end or partition skips the
// expression VM.
func (t *Template) render(d Dialect, key *Scope, env *renderEnv) (string, error) {
	var static []string
	if cached, ok := t.static.Load(key); ok {
		static = cached.([]string)
	} else {
		static = make([]string, len(t.parts))
		for i := range t.parts {
			p := &t.parts[i]
			if p.prog == nil || p.varies {
				continue
			}
			s, err := t.eval(d, p, env)
			if err != nil {
				return "", err
			}
			static[i] = s
		}
		if key.cacheable() {
			t.static.Store(key, static)
		}
	}
	var b strings.Builder
	for i := range t.parts {
		p := &t.parts[i]
		switch {
		case p.prog == nil:
			b.WriteString(p.text)
		case !p.varies:
			b.WriteString(static[i])
		default:
			s, err := t.eval(d, p, env)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
	}
	return b.String(), nil
}

// position returns the file's line and column of byte offset off of
// the text t renders for env: in a literal, the character itself; in
// what an expression rendered, the expression. It renders again, so that
// render itself keeps no map.
func (t *Template) positionOf(d Dialect, key *Scope, env *renderEnv, off int) (line, col int, ok bool) {
	out := 0
	for i := range t.parts {
		p := &t.parts[i]
		text := p.text
		if p.prog != nil {
			s, err := t.eval(d, p, env)
			if err != nil {
				return 0, 0, false
			}
			text = s
		}
		if off >= out+len(text) && i < len(t.parts)-1 {
			out += len(text)
			continue
		}
		if p.prog != nil {
			return p.line, p.col, true
		}
		line, col = p.line, p.col
		for _, r := range text[:min(off-out, len(text))] {
			if r == '\n' {
				line, col = line+1, 1
			} else if col > 0 {
				col++
			}
		}
		if p.block {
			col = 0
		}
		return line, col, true
	}
	return 0, 0, false
}

func (t *Template) eval(d Dialect, p *part, env *renderEnv) (string, error) {
	var v any
	if p.ident != "" {
		v = env.get(p.ident)
	} else {
		var err error
		if v, err = expr.Run(p.prog, env.all()); err != nil {
			return "", t.exprError(p, err)
		}
	}
	s, err := Literal(d, v)
	if err != nil {
		return "", t.errorAt(p.line, p.col, "template: {{ %s }}: %v", p.expr, err)
	}
	return s, nil
}

// Text returns the template's text as written.
func (t *Template) Text() string { return t.src }

// String returns the template's source text, with its expressions
// re-spaced.
func (t *Template) String() string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.expr != "" {
			b.WriteString("{{ " + p.expr + " }}")
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// position returns where the template first calls kind(name).
func (t *Template) position(kind, name string) (line, col int) {
	p := t.calls[kind+"\x00"+name]
	return p[0], p[1]
}
