package models

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Model is one .sql file of the project: a templated SELECT whose result
// refill materializes into a table, partition by partition.
type Model struct {
	// Name is the file's path under the models folder without .sql, with /
	// written as a dot: marts/daily_revenue.sql is marts.daily_revenue.
	Name string
	// Path is the file's path relative to the project folder.
	Path string
	// Relation is the table the model writes; an empty schema means the
	// target's default schema.
	Relation Relation
	Config   Config
	SQL      *Template
	// Upstream lists the models this one reads through ref(), in order of
	// first use. Set when the project loads.
	Upstream []*Model
	// Unset are the vars the model reads that have no value, each an
	// error at its position. They do not stop the project from loading,
	// so that a problem in one model blocks only what selects it (see
	// Project.Unset).
	Unset ErrorList

	upstream map[string]*Model // by the name used in ref()
	text     string
	broken   bool // the file has errors; kept so refs to it do not cascade

	funcs    sync.Map // *Scope -> template functions bound to it (see env)
	versions sync.Map // *Scope -> *Version
}

// parseModel parses one model file. name and file are as in Model; x
// holds the adapters' blocks its header may have; ps, the programs of the
// project's templates compiled so far.
func parseModel(name, file, text string, x *extensions, ps programs) (*Model, error) {
	m := &Model{Name: name, Path: file, text: text}
	var errs ErrorList
	if schema, table, ok := strings.Cut(name, "."); ok {
		m.Relation = Relation{Schema: schema, Name: table}
	} else {
		m.Relation = Relation{Name: name}
	}

	body, bodyOff := text, 0
	d := &yamlDoc{file: file, text: text, errs: &errs}
	if yamlSrc, yamlOff, end, found, err := header(text); err != nil {
		errs.add(&Error{File: file, Line: 1, Col: 1, Msg: err.Error(), Source: sourceLine(text, 1)})
	} else if found {
		d.line0, d.col0 = position(text, yamlOff)
		d.line0--
		d.col0--
		if root := d.parse(yamlSrc); root != nil {
			m.Config = decodeConfig(d, root, x)
		}
		body, bodyOff = text[end:], end
		for _, nl := range []string{"\r\n", "\n"} {
			if strings.HasPrefix(body, nl) {
				body, bodyOff = body[len(nl):], bodyOff+len(nl)
				break
			}
		}
	} else {
		m.Config = decodeConfig(d, &yaml.Node{Kind: yaml.MappingNode}, x)
	}
	if strings.TrimSpace(body) == "" {
		errs.add(&Error{File: file, Msg: "the model has no SQL: write a SELECT after the config comment"})
	}
	line, col := position(text, bodyOff)
	t, err := parseTemplateAt(file, text, body, line, col, 0)
	if err != nil {
		errs.add(err)
		m.broken = true
		return m, errs.Err()
	}
	m.SQL = t
	kind := map[Kind]envKind{WholeTable: envWhole, TimePartitioned: envTime, ListPartitioned: envList}[m.Kind()]
	errs.add(m.SQL.compile(kind, ps))
	for _, a := range m.Config.Audits {
		if a.SQL != nil {
			errs.add(a.SQL.compile(kind, ps))
		}
	}
	if m.Config.Watermark != nil {
		errs.add(m.Config.Watermark.compile(kind, ps))
	}
	if m.SQL.UsesThis && !m.Config.Self {
		errs.add(m.SQL.errorAt(m.SQL.thisAt[0], m.SQL.thisAt[1], "the model reads its own table ({{ this }}): declare depends_on_past: self, so that refill runs its partitions in order, each reading the one before it published"))
	}
	if m.Config.Batch > 0 && m.SQL.UsesPartition {
		errs.add(&Error{File: file, Msg: "batch renders several partitions as one statement, so the template cannot use partition: use start and end"})
	}
	if m.Config.Batch > 0 && m.Kind() != TimePartitioned {
		errs.add(&Error{File: file, Msg: "batch applies only to time-partitioned models"})
	}
	if err := errs.Err(); err != nil {
		m.broken = true
		return m, err
	}
	return m, nil
}

// header finds the leading /* refill ... */ comment. It returns the YAML
// inside, its offset in text, and the offset just past the comment.
func header(text string) (yamlSrc string, yamlOff, end int, found bool, err error) {
	i := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	if !strings.HasPrefix(text[i:], "/*") {
		return "", 0, 0, false, nil
	}
	closeAt := strings.Index(text[i+2:], "*/")
	inner := text[i+2:]
	if closeAt >= 0 {
		inner = inner[:closeAt]
	}
	word := strings.TrimLeft(inner, " \t")
	if !strings.HasPrefix(word, "refill") || (len(word) > 6 && !unicode.IsSpace(rune(word[6]))) {
		return "", 0, 0, false, nil // an ordinary comment
	}
	if closeAt < 0 {
		return "", 0, 0, false, fmt.Errorf("the /* refill config comment is never closed with */")
	}
	yamlOff = i + 2 + (len(inner) - len(word)) + len("refill")
	end = i + 2 + closeAt + 2
	return text[yamlOff : i+2+closeAt], yamlOff, end, true, nil
}

// position returns the 1-based line and column of byte offset off in text.
func position(text string, off int) (line, col int) {
	line, col = 1, 1
	for _, r := range text[:off] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// modelName maps a path under the models folder to a model name.
func modelName(rel string) string {
	return strings.ReplaceAll(strings.TrimSuffix(rel, path.Ext(rel)), "/", ".")
}

// Line returns the line of m's file at n, for messages.
func (m *Model) Line(n int) string { return sourceLine(m.text, n) }
