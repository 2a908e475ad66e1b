package models

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// inputColumns are the columns an input table of a unit test is known to
// have before the test says anything: those the model declares (for ref
// and this), or those of the seed that loads a source table.
type inputColumns struct {
	names  []string              // in table order
	types  map[string]ColumnType // by lower-cased name; absent when untyped
	origin map[string]string     // by lower-cased name: where the type comes from
	// all holds every name the input declares, by lower-cased name,
	// those without a portable type included.
	all map[string]bool
	// closed is set when the input's columns are known: a given row may
	// then name only those, or those the test declares.
	closed bool
	what   string // "marts.daily_revenue (models/marts/daily_revenue.sql)", for messages
	// declare says where the input's columns could be declared, for
	// messages: "declare them in models/x.sql (columns:)".
	declare string
}

// seedLookup finds the seed that loads a source table, once per file.
type seedLookup struct {
	p     *Project
	fsys  fs.FS
	seeds map[string]*Seed // by file; nil when absent or unreadable
}

// find returns the seed whose table is source (schema.table or table),
// or nil. An unreadable seed is nil here: loading the seeds reports it.
func (l *seedLookup) find(source string) *Seed {
	if l == nil || l.fsys == nil {
		return nil
	}
	r, err := ParseRelation(source)
	if err != nil || r.Database != "" {
		return nil
	}
	file := path.Join(l.p.SeedsDir, r.Schema, r.Name+".csv")
	if s, ok := l.seeds[file]; ok {
		return s
	}
	var s *Seed
	if checkRegular(l.fsys, file) == nil {
		if f, err := l.fsys.Open(file); err == nil {
			declared, err := seedTypes(l.fsys, strings.TrimSuffix(file, ".csv")+".yml")
			if err == nil {
				s, _ = ParseSeedTypes(file, f, declared)
			}
			f.Close()
		}
	}
	l.seeds[file] = s
	return s
}

// columnsOf returns what g's table is known to have: the columns its model
// declares, or those of the seed of its source table.
func columnsOf(g *Given, seeds *seedLookup) inputColumns {
	in := inputColumns{types: map[string]ColumnType{}, origin: map[string]string{}, all: map[string]bool{}, what: g.Name}
	if seeds != nil {
		r, _ := ParseRelation(g.Name)
		in.declare = "load it from a seed (" + path.Join(seeds.p.SeedsDir, r.Schema, r.Name+".csv") + ")"
	}
	switch {
	case g.Model != nil:
		in.what = fmt.Sprintf("%s (%s)", g.Model.Name, g.Model.Path)
		in.declare = "declare them in " + g.Model.Path + " (columns:)"
		for _, c := range g.Model.Config.Columns {
			key := strings.ToLower(c.Name)
			in.all[key] = true
			if c.Type.Portable == "" {
				continue
			}
			in.names = append(in.names, c.Name)
			in.types[key] = c.Type.Portable
			in.origin[key] = fmt.Sprintf("declared at %s:%d", g.Model.Path, c.Line)
		}
		in.closed = len(g.Model.Config.Columns) > 0
	default:
		s := seeds.find(g.Name)
		if s == nil {
			break
		}
		in.what = fmt.Sprintf("%s (%s)", g.Name, s.Path)
		for _, c := range s.Columns {
			key := strings.ToLower(c.Name)
			in.all[key] = true
			in.names = append(in.names, c.Name)
			in.types[key] = c.Type
			if c.Declared {
				in.origin[key] = "declared in " + strings.TrimSuffix(s.Path, ".csv") + ".yml"
			} else {
				in.origin[key] = "the type refill seed gives it from " + s.Path
			}
		}
		in.closed = true
	}
	return in
}

// givenInput resolves the name of a given table: this, a model, or a
// source table (schema.table). It returns nil, having recorded an error,
// for anything else.
func (p *Project) givenInput(d *yamlDoc, m *Model, k *yaml.Node) *Given {
	line, _ := d.pos(k)
	g := &Given{Name: k.Value, Line: line}
	switch {
	case k.Value == "this":
		if !m.Config.Self {
			d.errAt(k, "given this: the model does not read its own table (depends_on_past: self)")
			return nil
		}
		g.Model, g.This = m, true
	default:
		if up, err := p.Model(k.Value); err == nil {
			g.Model, g.Name = up, up.Name
		} else if _, err := ParseRelation(k.Value); err != nil || !strings.Contains(k.Value, ".") {
			d.errAt(k, "given %q is neither a model nor a source table (schema.table)%s", k.Value, suggest(k.Value, p.modelNames()))
			return nil
		}
	}
	return g
}

// decodeGiven reads the rows given for one input table of m: a list of
// rows, or a mapping of columns (name: type) and rows. A column's type is
// the one the test declares, else the one its input declares (the model's
// columns:, or the seed of a source table), else inferred from the values
// as for seeds; a quoted number or boolean is a string. With declared
// columns a table may be given no rows.
func (p *Project) decodeGiven(d *yamlDoc, m *Model, k, v *yaml.Node, seeds *seedLookup) *Given {
	g := p.givenInput(d, m, k)
	if g == nil {
		return nil
	}
	in := columnsOf(g, seeds)
	test := map[string]ColumnType{}
	var testOrder []string
	rowsNode := v
	if v.Kind == yaml.MappingNode {
		rowsNode = nil
		known := []string{"columns", "rows"}
		if len(v.Content) > 0 && !slices.Contains(known, v.Content[0].Value) {
			d.errAt(v, "given %s is a list of rows (- {column: value, ...}), or a mapping of columns: {name: type} and rows: [...]", k.Value)
			return nil
		}
		broken := false
		d.fields(v, "given "+k.Value, known, func(key string, val *yaml.Node) {
			if key == "rows" {
				rowsNode = val
				return
			}
			split := false // a flow mapping's comma split the last type
			d.entries(val, "columns", func(ck, cv *yaml.Node) {
				if split && strings.HasSuffix(ck.Value, ")") {
					split = false
					return
				}
				if !identRE.MatchString(ck.Value) {
					d.errAt(ck, "%q is not a column name", ck.Value)
					broken = true
					return
				}
				t, err := ParseColumnType(cv.Value)
				switch {
				case cv.Kind == yaml.ScalarNode && strings.Contains(cv.Value, "(") && !strings.Contains(cv.Value, ")"):
					d.errAt(cv, "columns.%s: the comma of %s, ...) ends the value inside { }: quote the type (%s: \"decimal(18,2)\") or write the columns one per line", ck.Value, cv.Value, ck.Value)
					split, broken = true, true
					return
				case err != nil || cv.Kind != yaml.ScalarNode:
					d.errAt(cv, "columns.%s: %v", ck.Value, err)
					broken = true
					return
				}
				test[strings.ToLower(ck.Value)] = t
				testOrder = append(testOrder, ck.Value)
			})
		})
		if broken {
			return nil
		}
		if rowsNode == nil {
			rowsNode = &yaml.Node{Kind: yaml.SequenceNode, Line: v.Line, Column: v.Column}
		}
	}
	if rowsNode.Kind != yaml.SequenceNode {
		d.errAt(rowsNode, "given %s must be a list of rows (use [] for an empty table), or a mapping of columns and rows", k.Value)
		return nil
	}
	ok := true
	var rows []*yaml.Node
	for _, r := range rowsNode.Content {
		r = resolve(r)
		if r.Kind != yaml.MappingNode {
			d.errAt(r, "each given row is a mapping of column to value")
			ok = false
			continue
		}
		rows = append(rows, r)
	}
	if !ok {
		return nil
	}
	if !fillGiven(d, g, in, test, testOrder, rows, rowsNode) {
		return nil
	}
	return g
}

// emptyInputs returns an empty table for every table m reads (given: []),
// recording an error at n for each whose columns nothing declares.
func (p *Project) emptyInputs(d *yamlDoc, m *Model, n *yaml.Node, seeds *seedLookup) []Given {
	line, _ := d.pos(n)
	var out []Given
	var inputs []*Given
	for _, up := range m.Upstream {
		inputs = append(inputs, &Given{Name: up.Name, Model: up, Line: line})
	}
	for _, src := range m.SQL.Source {
		inputs = append(inputs, &Given{Name: src, Line: line})
	}
	for _, g := range inputs {
		in := columnsOf(g, seeds)
		if len(in.names) == 0 {
			d.errAt(n, "given: [] leaves %s empty, but nothing types its columns: %s, or give it here with its types: given: {%s: {columns: {name: type, ...}, rows: []}}", g.Name, in.declare, g.Name)
			continue
		}
		if fillGiven(d, g, in, nil, nil, nil, n) {
			out = append(out, *g)
		}
	}
	return out
}

// fillGiven builds g's table from its input's columns, the types the test
// declares and the given rows, recording errors (at the values, or at at).
func fillGiven(d *yamlDoc, g *Given, in inputColumns, test map[string]ColumnType, testOrder []string, rows []*yaml.Node, at *yaml.Node) bool {
	ok := true
	cols := slices.Clone(in.names)
	has := func(c string) bool {
		return slices.ContainsFunc(cols, func(x string) bool { return strings.EqualFold(x, c) })
	}
	for _, c := range testOrder {
		if !has(c) {
			cols = append(cols, c)
		}
	}
	cells := make([]map[string]*yaml.Node, len(rows))
	for i, r := range rows {
		cells[i] = map[string]*yaml.Node{}
		for j := 0; j+1 < len(r.Content); j += 2 {
			kn, c := r.Content[j], r.Content[j].Value
			key := strings.ToLower(c)
			switch {
			case !identRE.MatchString(c):
				d.errAt(kn, "%q is not a column name", c)
				ok = false
				continue
			case cells[i][key] != nil:
				d.errAt(kn, "column %s is given twice in this row", c)
				ok = false
				continue
			case !has(c) && in.closed && !in.all[key]:
				d.errAt(kn, "%s has no column %s%s (declare it for the test with columns: {%s: <type>})", in.what, c, suggest(c, in.names), c)
				ok = false
			case !has(c):
				cols = append(cols, c)
			}
			val := resolve(r.Content[j+1])
			if val.Kind != yaml.ScalarNode {
				d.errAt(val, "%s: a given value is a single value (a number, a string, a date, true, false or null)", c)
				ok = false
				continue
			}
			cells[i][key] = val
		}
	}
	if len(cols) == 0 {
		d.errAt(at, "given %s has no columns: give it a row, declare its columns here (%s: {columns: {name: type, ...}, rows: []}), or %s", g.Name, g.Name, in.declare)
		return false
	}
	types := map[string]ColumnType{}
	origin := map[string]string{}
	for _, c := range cols {
		key := strings.ToLower(c)
		switch t, byTest := test[key]; {
		case byTest:
			types[key], origin[key] = t, "declared by the test"
		case in.types[key] != "":
			types[key], origin[key] = in.types[key], in.origin[key]
		default:
			// Inferred from the values, as for seeds, except that a quoted
			// number or boolean is a string.
			for _, row := range cells {
				if n := row[key]; n != nil && quotedNonString(n) {
					types[key], origin[key] = TypeString, "a quoted value is a string"
					break
				}
			}
		}
	}
	records := make([][]string, len(rows))
	type cell struct {
		row, col int
		node     *yaml.Node
	}
	var empties []cell // values given as "", which a seed reads as NULL
	for i, row := range cells {
		rec := make([]string, len(cols))
		for j, c := range cols {
			n := row[strings.ToLower(c)]
			if n == nil || n.Tag == "!!null" {
				continue
			}
			if n.Value == "" {
				empties = append(empties, cell{i, j, n})
				continue
			}
			rec[j] = n.Value
			if t, typed := types[strings.ToLower(c)]; typed && !fits(n.Value, t) {
				d.errAt(n, "%s: %q is not a %s (%s)", c, n.Value, t, origin[strings.ToLower(c)])
				ok = false
			}
		}
		records[i] = rec
	}
	if !ok {
		return false
	}
	g.Seed = NewSeedTypes(cols, records, types)
	for _, e := range empties {
		col := g.Seed.Columns[e.col]
		if col.Type != TypeString {
			why := "inferred from the other values"
			if o, typed := origin[strings.ToLower(col.Name)]; typed {
				why = o
			}
			d.errAt(e.node, "%s: \"\" is not a %s (%s); write null for NULL", col.Name, col.Type, why)
			ok = false
			continue
		}
		g.Seed.Rows[e.row][e.col] = ""
	}
	if !ok {
		return false
	}
	for j, c := range cols {
		if _, typed := types[strings.ToLower(c)]; typed {
			continue
		}
		valued := slices.ContainsFunc(empties, func(e cell) bool { return e.col == j })
		for _, rec := range records {
			valued = valued || rec[j] != ""
		}
		if !valued {
			g.Untyped = append(g.Untyped, c)
		}
	}
	return true
}

// quotedNonString reports whether n is a quoted scalar that, unquoted,
// would be a number or a boolean: "10" is the string 10.
func quotedNonString(n *yaml.Node) bool {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return false
	}
	return fits(n.Value, TypeBool) || fits(n.Value, TypeFloat)
}
