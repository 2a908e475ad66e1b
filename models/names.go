package models

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// checkModelPath checks that a model file's path under the models folder
// (rel) names a table: at most one folder deep, every part an identifier.
// A dot in a file name would make a second name for another file's model
// (staging.orders.sql beside staging/orders.sql), so it is refused.
func checkModelPath(file, rel string) error {
	parts := strings.Split(strings.TrimSuffix(rel, path.Ext(rel)), "/")
	if len(parts) > 2 {
		return &Error{File: file, Msg: "models may be at most one folder deep: models/<schema>/<table>.sql"}
	}
	for _, part := range parts {
		if !identRE.MatchString(part) {
			msg := fmt.Sprintf("model file and folder names must be SQL identifiers (letters, digits, _): %q is not", part)
			if strings.Contains(part, ".") {
				msg += fmt.Sprintf("; write models/%s.sql for the model %s", strings.ReplaceAll(part, ".", "/"), part)
			}
			return &Error{File: file, Msg: msg}
		}
	}
	return nil
}

// duplicateNames reports models whose names differ only in case: they
// would write one table on warehouses that fold names to one case, the
// second overwriting the first's partitions.
func duplicateNames(ms []*Model) error {
	var errs ErrorList
	first := map[string]*Model{}
	for _, m := range ms {
		k := strings.ToLower(m.Name)
		if f, ok := first[k]; ok {
			errs.add(&Error{File: m.Path, Msg: fmt.Sprintf("%s and %s name the same table (names are compared without case); rename one", m.Path, f.Path)})
			continue
		}
		first[k] = m
	}
	return errs.Err()
}

// listSeeds records the tables the seeds folder loads (without reading the
// files), for CheckNames.
func (p *Project) listSeeds(fsys fs.FS) error {
	p.seedFiles = map[Relation]string{}
	return fs.WalkDir(fsys, p.SeedsDir, func(file string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || path.Ext(file) != ".csv" {
			return nil
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(file, p.SeedsDir+"/"), ".csv")
		if r, err := ParseRelation(strings.ReplaceAll(rel, "/", ".")); err == nil {
			p.seedFiles[r] = file
		}
		return nil
	})
}

// TargetSchemas are the schemas a target gives meaning to: the default schema
// of top-level models and unqualified sources, and the schemas refill keeps
// for itself.
type TargetSchemas struct {
	Default, Ledger, Stage string
}

// CheckNames reports models whose tables collide, on a target with schemas
// s, with what refill or the project already owns there: a table a model
// reads with source() (or a seed loads), and the ledger and staging
// schemas. Writing such a model would overwrite its own input, another
// model's source, or refill's records. Names compare without case.
func (p *Project) CheckNames(s TargetSchemas) error {
	var errs ErrorList
	key := func(r Relation) string {
		if r.Schema == "" {
			r.Schema = s.Default
		}
		return strings.ToLower(r.Database + "." + r.Schema + "." + r.Name)
	}
	owned := map[string]string{} // table -> who reads it
	for r, file := range p.seedFiles {
		owned[key(r)] = "the seed " + file
	}
	for _, m := range p.Models {
		for _, t := range m.templates() {
			for _, name := range t.Source {
				if r, err := ParseRelation(name); err == nil {
					if _, ok := owned[key(r)]; !ok {
						owned[key(r)] = fmt.Sprintf("source(%q) in %s", name, m.Path)
					}
				}
			}
		}
	}
	for _, m := range p.Models {
		schema := m.Relation.Schema
		if schema == "" {
			schema = s.Default
		}
		switch {
		case strings.EqualFold(schema, s.Ledger):
			errs.add(&Error{File: m.Path, Msg: fmt.Sprintf("model %s would be written to schema %s, where refill keeps its ledger; move the model to another folder (or set ledger_schema)", m.Name, schema)})
		case strings.EqualFold(schema, s.Stage):
			errs.add(&Error{File: m.Path, Msg: fmt.Sprintf("model %s would be written to schema %s, where refill keeps its staging tables; move the model to another folder (or set stage_schema)", m.Name, schema)})
		default:
			if who, ok := owned[key(m.Relation)]; ok {
				errs.add(&Error{File: m.Path, Msg: fmt.Sprintf("model %s would overwrite table %s.%s, which is read as %s; rename the model (a model reads its own table with this)", m.Name, schema, m.Relation.Name, who)})
			}
		}
	}
	return errs.Err()
}

// templates returns every template of m: its statement, SQL audits and
// watermark query.
func (m *Model) templates() []*Template {
	ts := []*Template{}
	if m.SQL != nil {
		ts = append(ts, m.SQL)
	}
	for _, a := range m.Config.Audits {
		if a.SQL != nil {
			ts = append(ts, a.SQL)
		}
	}
	if m.Config.Watermark != nil {
		ts = append(ts, m.Config.Watermark)
	}
	return ts
}

// Schemas returns the schemas the project's models are written to and its
// sources are read from, as written (empty for the target's default).
func (p *Project) Schemas() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, m := range p.Models {
		add(m.Relation.Schema)
		for _, t := range m.templates() {
			for _, name := range t.Source {
				if r, err := ParseRelation(name); err == nil {
					add(r.Schema)
				}
			}
		}
	}
	for r := range p.seedFiles {
		add(r.Schema)
	}
	return out
}
