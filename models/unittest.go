package models

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// UnitTest is one case of a model's unit-test file (models/x.test.yml next
// to models/x.sql): for a partition, given rows for the tables the model
// reads, the model must return the expected rows.
type UnitTest struct {
	Name      string
	Model     *Model
	File      string // the .test.yml file, relative to the project
	Line      int    // where the case starts
	Partition string // a partition key; empty for whole-table models
	Vars      map[string]any
	Given     []Given
	// Expect holds the expected rows, column -> value as written; the
	// comparison ignores row order and columns not listed.
	Expect []map[string]any
	// Columns lists Expect's columns in order of first appearance.
	Columns []string
}

// Given is the content a unit test gives one input table.
type Given struct {
	Name  string // a model name (for ref), a source table (schema.table), or this
	Model *Model // set when Name is a model, or this (the tested model)
	// This is set for the tested model's own table, which a model that
	// reads its own past reads.
	This bool
	// Seed holds the rows, typed by the columns the model declares, the
	// types the test declares, or else inferred as for seeds.
	Seed *Seed
	Line int
}

var unitTestKeys = []string{"name", "partition", "vars", "given", "expect"}

// LoadUnitTests reads the .test.yml files beside the project's models.
func (p *Project) LoadUnitTests(fsys fs.FS) ([]*UnitTest, error) {
	var tests []*UnitTest
	var errs ErrorList
	err := fs.WalkDir(fsys, p.ModelsDir, func(file string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(file, ".test.yml") && !strings.HasSuffix(file, ".test.yaml") {
			return err
		}
		raw, err := readFile(fsys, file)
		if err != nil {
			errs.add(err)
			return nil
		}
		rel := strings.TrimPrefix(file, p.ModelsDir+"/")
		rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".yml"), ".yaml")
		name := modelName(strings.TrimSuffix(rel, ".test") + ".sql")
		m, ok := p.byName[name]
		if !ok {
			errs.add(&Error{File: file, Msg: fmt.Sprintf("unit tests for %s, but there is no model %s.sql beside them", name, strings.TrimSuffix(path.Base(rel), ".test"))})
			return nil
		}
		ts, err := p.parseUnitTests(file, string(raw), m)
		errs.add(err)
		tests = append(tests, ts...)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs.add(&Error{File: p.ModelsDir, Msg: err.Error(), Err: err})
	}
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].File < tests[j].File })
	return tests, errs.Err()
}

func (p *Project) parseUnitTests(file, text string, m *Model) ([]*UnitTest, error) {
	var errs ErrorList
	d := &yamlDoc{file: file, text: text, errs: &errs}
	root := d.parse(text)
	if root == nil {
		return nil, errs.Err()
	}
	if root.Kind == yaml.MappingNode {
		var list *yaml.Node
		d.fields(root, file, []string{"tests"}, func(_ string, v *yaml.Node) { list = v })
		if list == nil {
			return nil, errs.Err()
		}
		root = list
	}
	if root.Kind != yaml.SequenceNode {
		d.errAt(root, "a unit-test file is a list of tests, each with name, partition, given and expect")
		return nil, errs.Err()
	}
	var out []*UnitTest
	for i, item := range root.Content {
		item = resolve(item)
		line, _ := d.pos(item)
		ut := &UnitTest{Model: m, File: file, Line: line, Name: fmt.Sprintf("test %d", i+1)}
		d.fields(item, "unit test", unitTestKeys, func(key string, v *yaml.Node) {
			switch key {
			case "name":
				ut.Name, _ = d.str(v, key)
			case "partition":
				ut.Partition, _ = d.str(v, key)
				if _, err := m.Partition(ut.Partition); err != nil {
					d.errAt(v, "partition: %v", err)
				}
			case "vars":
				ut.Vars = map[string]any{}
				d.entries(v, "vars", func(k, val *yaml.Node) { ut.Vars[k.Value] = d.value(val) })
			case "given":
				d.entries(v, "given", func(k, val *yaml.Node) {
					g := p.decodeGiven(d, m, k, val)
					if g != nil {
						ut.Given = append(ut.Given, *g)
					}
				})
			case "expect":
				if v.Kind != yaml.SequenceNode {
					d.errAt(v, "expect must be a list of rows, e.g. - {order_date: 2024-01-02, revenue: 10}")
					return
				}
				ut.Expect = []map[string]any{}
				for _, r := range v.Content {
					row, ok := d.value(r).(map[string]any)
					if !ok {
						d.errAt(r, "each expected row is a mapping of column to value")
						continue
					}
					ut.Expect = append(ut.Expect, row)
					for _, c := range keysInOrder(resolve(r)) {
						if !slices.Contains(ut.Columns, c) {
							ut.Columns = append(ut.Columns, c)
						}
					}
				}
			}
		})
		if ut.Partition == "" && m.Kind() != WholeTable {
			d.errAt(item, "unit test %q needs partition: (the model is partitioned)", ut.Name)
		}
		if ut.Partition == "" {
			ut.Partition = WholeTableKey
		}
		if ut.Expect == nil {
			d.errAt(item, "unit test %q needs expect: (use expect: [] for no rows)", ut.Name)
		}
		out = append(out, ut)
	}
	return out, errs.Err()
}

// decodeGiven reads the rows given for one input table of m: a list of
// rows, or a mapping of columns (name: type) and rows. The rows are typed
// by the declared columns of the given model (or of m, for this), else by
// the types the test declares, else inferred from the values; with
// declared columns, a table may be given empty.
func (p *Project) decodeGiven(d *yamlDoc, m *Model, k, v *yaml.Node) *Given {
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
	declared := map[string]ColumnType{}
	var cols []string
	if g.Model != nil {
		for _, c := range g.Model.Config.Columns {
			if c.Type.Portable != "" {
				declared[strings.ToLower(c.Name)] = c.Type.Portable
				cols = append(cols, c.Name)
			}
		}
	}
	rowsNode := v
	if v.Kind == yaml.MappingNode {
		rowsNode = nil
		d.fields(v, "given "+k.Value, []string{"columns", "rows"}, func(key string, val *yaml.Node) {
			if key == "rows" {
				rowsNode = val
				return
			}
			d.entries(val, "columns", func(ck, cv *yaml.Node) {
				t, err := ParseColumnType(cv.Value)
				if err != nil {
					d.errAt(cv, "columns.%s: %v", ck.Value, err)
					return
				}
				if _, ok := declared[strings.ToLower(ck.Value)]; !ok {
					cols = append(cols, ck.Value)
				}
				declared[strings.ToLower(ck.Value)] = t
			})
		})
		if rowsNode == nil {
			rowsNode = &yaml.Node{Kind: yaml.SequenceNode}
		}
	}
	if rowsNode.Kind != yaml.SequenceNode {
		d.errAt(rowsNode, "given %s must be a list of rows (use [] for an empty table), or a mapping of columns and rows", k.Value)
		return nil
	}
	var rows []map[string]*yaml.Node
	for _, r := range rowsNode.Content {
		r = resolve(r)
		if r.Kind != yaml.MappingNode {
			d.errAt(r, "each given row is a mapping of column to value")
			return nil
		}
		row := map[string]*yaml.Node{}
		for i := 0; i+1 < len(r.Content); i += 2 {
			c := r.Content[i].Value
			if !identRE.MatchString(c) {
				d.errAt(r.Content[i], "%q is not a column name", c)
			}
			if !slices.ContainsFunc(cols, func(x string) bool { return strings.EqualFold(x, c) }) {
				if g.Model != nil && len(g.Model.Config.Columns) > 0 {
					d.errAt(r.Content[i], "%s declares no column %s", g.Model.Name, c)
				}
				cols = append(cols, c)
			}
			row[strings.ToLower(c)] = resolve(r.Content[i+1])
		}
		rows = append(rows, row)
	}
	if len(cols) == 0 {
		d.errAt(rowsNode, "given %s has no columns: give a row, declare its columns (columns: {name: type}), or declare the model's columns", k.Value)
		return nil
	}
	records := make([][]string, len(rows))
	for i, row := range rows {
		rec := make([]string, len(cols))
		for j, c := range cols {
			n, ok := row[strings.ToLower(c)]
			if !ok || n.Tag == "!!null" {
				continue
			}
			rec[j] = n.Value
			if t, typed := declared[strings.ToLower(c)]; typed && !fits(n.Value, t) {
				d.errAt(n, "%s: %q is not a %s", c, n.Value, t)
			}
		}
		records[i] = rec
	}
	g.Seed = NewSeedTypes(cols, records, declared)
	return g
}

func keysInOrder(n *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

func (p *Project) modelNames() []string {
	out := make([]string, len(p.Models))
	for i, m := range p.Models {
		out[i] = m.Name
	}
	return out
}
