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
	// Seed holds the rows, typed by the types the test declares, else
	// those of the input (the model's columns:, or the seed that loads a
	// source table), else inferred from the values as for seeds.
	Seed *Seed
	// Untyped lists the columns that nothing typed: no declaration and
	// no value but NULL. They are varchar, which a model that sums them
	// cannot use.
	Untyped []string
	Line    int
}

var unitTestKeys = []string{"name", "partition", "vars", "given", "expect"}

// LoadUnitTests reads the .test.yml files beside the project's models.
func (p *Project) LoadUnitTests(fsys fs.FS) ([]*UnitTest, error) {
	var tests []*UnitTest
	var errs ErrorList
	seeds := &seedLookup{p: p, fsys: fsys, seeds: map[string]*Seed{}}
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
		ts, err := p.parseUnitTests(file, string(raw), m, seeds)
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

func (p *Project) parseUnitTests(file, text string, m *Model, seeds *seedLookup) ([]*UnitTest, error) {
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
		before := len(errs)
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
				if v.Kind == yaml.SequenceNode && len(v.Content) == 0 || v.Kind == yaml.MappingNode && len(v.Content) == 0 {
					// given: [] leaves every table the model reads empty.
					ut.Given = p.emptyInputs(d, m, v, seeds)
					return
				}
				if v.Kind == yaml.SequenceNode {
					d.errAt(v, "given is a mapping of each table the model reads to its rows (given: {staging.orders: [{order_id: 1}]}), or [] to leave them all empty")
					return
				}
				d.entries(v, "given", func(k, val *yaml.Node) {
					g := p.decodeGiven(d, m, k, val, seeds)
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
		if len(errs) > before {
			continue // reported; running it would only add a misleading failure
		}
		out = append(out, ut)
	}
	return out, errs.Err()
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
