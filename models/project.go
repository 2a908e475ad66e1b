package models

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ProjectFile is the name of the file that marks a project's folder.
const ProjectFile = "refill.yml"

// Project is a loaded refill project: its configuration and its models.
type Project struct {
	ModelsDir     string // relative to the project folder
	SeedsDir      string
	DefaultTarget string
	Targets       map[string]*Target
	Vars          map[string]any
	// OnSchemaChange is the project's default schema change policy; a
	// model's on_schema_change overrides it.
	OnSchemaChange SchemaPolicy
	// Sources are the tables models read through source() that refill.yml
	// declares, by the name source() gives them.
	Sources map[string]*Source
	// ContentHash is the models' default content_hash: (see
	// Config.ContentHash).
	ContentHash bool
	Models      []*Model // sorted by name
	Graph       *Graph
	// Broken are the models left out because their files have errors, or
	// they read such a model (see Load), sorted by name.
	Broken []*BrokenModel

	byName  map[string]*Model
	byTable map[string][]*Model // by table name, for short ref() names
	text    string
	// seedFiles are the tables refill seed loads, by relation, with their
	// files; see CheckNames.
	seedFiles map[Relation]string
}

// The schemas a target's ledger and staging tables live in unless it says
// otherwise (ledger_schema, stage_schema).
const (
	DefaultLedgerSchema = "refill"
	DefaultStageSchema  = "refill_stage"
)

// Target is one warehouse a project can run against, from refill.yml.
type Target struct {
	Name    string
	Adapter string // the adapter's name (see AdapterKeys)
	// DSN is the connection string. It may hold credentials: never print it.
	DSN          string
	Schema       string // default schema for top-level models
	LedgerSchema string // where the ledger lives (default DefaultLedgerSchema)
	StageSchema  string // where staging tables live (default DefaultStageSchema)
	// Concurrency caps --concurrency for this target; 0 means no cap.
	Concurrency int
	// Settings are the target's settings for its adapter (the keys of
	// AdapterKeys.TargetKeys), by key, with ${VAR}s expanded. Errorf
	// positions an error at one.
	Settings map[string]string

	file string
	pos  map[string][2]int // key -> line, col in refill.yml
	text string
	// deferred holds errors (unset environment variables) that matter only
	// when this target is used; unset names those variables.
	deferred ErrorList
	unset    []string
}

// targetKeys are refill's own keys of a target; decodeTarget adds the
// adapters'.
var targetKeys = []string{"adapter", "dsn", "schema", "ledger_schema", "stage_schema", "concurrency"}

// Has reports whether refill.yml sets key for the target (even to an
// environment variable that is not set).
func (t *Target) Has(key string) bool {
	_, ok := t.pos[key]
	return ok
}

// Err reports problems that only matter once the target is used, such as
// an environment variable its settings need that is not set.
func (t *Target) Err() error { return t.deferred.Err() }

// Unset returns the environment variables the target's settings read that
// are not set, in the order refill.yml names them: a target with any is not
// configured in this environment.
func (t *Target) Unset() []string { return t.unset }

// Errorf returns an error positioned at key's value in refill.yml (or at
// the target itself when key is "" or absent).
func (t *Target) Errorf(key, format string, args ...any) error {
	p, ok := t.pos[key]
	if !ok {
		p = t.pos[""]
	}
	return &Error{File: t.file, Line: p[0], Col: p[1], Msg: fmt.Sprintf(format, args...), Source: sourceLine(t.text, p[0])}
}

// String describes the target without its DSN.
func (t *Target) String() string {
	return fmt.Sprintf("%s (%s)", t.Name, t.Adapter)
}

// LoadOptions adjust how a project loads.
type LoadOptions struct {
	// LookupEnv resolves ${VAR} in refill.yml; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// Vars override and extend the vars of refill.yml (from --var).
	Vars map[string]any
	// Adapters are the adapters the program runs on, in the order it
	// lists them. A project's files may use the keys they add to refill's
	// own (target settings, model blocks, native column types), and no
	// other: a misspelt key is refused with its file:line. The order is
	// that of a declared column's native types in a model's version, so
	// changing it changes fingerprints.
	Adapters []AdapterKeys
}

var projectKeys = []string{"name", "models", "seeds", "target", "targets", "vars", "on_schema_change", "sources", "content_hash"}

// Load reads the project in fsys, whose root is the project folder. It
// returns every problem it finds, as an ErrorList, rather than the first.
func Load(fsys fs.FS, opts LoadOptions) (*Project, error) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	raw, err := readFile(fsys, ProjectFile)
	if err != nil {
		var me *Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, &Error{File: ProjectFile, Msg: fmt.Sprintf("cannot read the project file: %v", err), Err: err}
	}
	var errs ErrorList
	x := newExtensions(opts.Adapters)
	p := &Project{ModelsDir: "models", SeedsDir: "seeds", Targets: map[string]*Target{}, Vars: map[string]any{}, text: string(raw)}
	d := &yamlDoc{file: ProjectFile, text: p.text, errs: &errs}
	root := d.parse(p.text)
	if root == nil {
		return nil, errs.Err()
	}
	var targetNode *yaml.Node
	d.fields(root, ProjectFile, projectKeys, func(key string, v *yaml.Node) {
		switch key {
		case "name":
		case "models":
			p.ModelsDir, _ = d.str(v, key)
		case "seeds":
			p.SeedsDir, _ = d.str(v, key)
		case "target":
			targetNode = v
			p.DefaultTarget, _ = d.str(v, key)
		case "targets":
			d.entries(v, "targets", func(k, v *yaml.Node) {
				p.Targets[k.Value] = decodeTarget(d, k, v, x, opts.LookupEnv)
			})
		case "vars":
			d.entries(v, "vars", func(k, v *yaml.Node) {
				p.Vars[k.Value] = expandValue(d, v, d.value(v), opts.LookupEnv)
			})
		case "sources":
			p.Sources = decodeSources(d, v)
		case "content_hash":
			p.ContentHash, _ = d.bool(v, key)
		case "on_schema_change":
			if s, ok := d.str(v, key); ok {
				policy, err := ParseSchemaPolicy(s)
				if err != nil {
					d.errAt(v, "%v", err)
				}
				p.OnSchemaChange = policy
			}
		}
	})
	for k, v := range opts.Vars {
		p.Vars[k] = v
	}
	switch {
	case len(p.Targets) == 0:
		example := "NAME"
		if len(x.names) > 0 {
			example = x.names[0]
		}
		d.errAt(root, "refill.yml needs at least one target under targets:, e.g. dev: {adapter: %s}", example)
	case p.DefaultTarget == "" && len(p.Targets) == 1:
		for name := range p.Targets {
			p.DefaultTarget = name
		}
	case p.DefaultTarget == "":
		d.errAt(root, "refill.yml has several targets: name the default with target:")
	case p.Targets[p.DefaultTarget] == nil:
		d.errAt(targetNode, "target %q is not defined under targets:%s", p.DefaultTarget, suggest(p.DefaultTarget, p.TargetNames()))
	}
	p.ModelsDir = path.Clean(p.ModelsDir)
	p.SeedsDir = path.Clean(p.SeedsDir)
	if p.OnSchemaChange == "" {
		p.OnSchemaChange = SchemaFail
	}
	projectErrs := len(errs)
	err = p.loadModels(fsys, x)
	errs.add(err)
	var list ErrorList
	if projectErrs == 0 && p.Graph != nil && errors.As(err, &list) && len(p.Broken) > 0 {
		// Only models are broken: the project loads without them, and
		// the error lists theirs.
		return p, errs.Err()
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func decodeTarget(d *yamlDoc, k, v *yaml.Node, x *extensions, lookup func(string) (string, bool)) *Target {
	line, col := d.pos(k)
	t := &Target{Name: k.Value, LedgerSchema: DefaultLedgerSchema, StageSchema: DefaultStageSchema, file: d.file, text: d.text,
		pos: map[string][2]int{"": {line, col}}}
	sub := &yamlDoc{file: d.file, text: d.text, errs: &t.deferred}
	// The adapters' keys come right after adapter, for suggestions.
	known := slices.Concat(targetKeys[:1], x.targetKeys, targetKeys[1:])
	d.fields(v, "target "+k.Value, known, func(key string, v *yaml.Node) {
		line, col := d.pos(v)
		t.pos[key] = [2]int{line, col}
		if key == "concurrency" {
			t.Concurrency, _ = d.int(v, key, 1)
			return
		}
		s, ok := d.str(v, key)
		if !ok {
			return
		}
		for _, name := range unsetVars(s, lookup) {
			if !slices.Contains(t.unset, name) {
				t.unset = append(t.unset, name)
			}
		}
		s = expand(sub, v, s, lookup)
		switch key {
		case "adapter":
			t.Adapter = s
		case "dsn":
			t.DSN = s
		case "schema":
			t.Schema = s
		case "ledger_schema":
			t.LedgerSchema = s
		case "stage_schema":
			t.StageSchema = s
		default: // an adapter's setting
			if t.Settings == nil {
				t.Settings = map[string]string{}
			}
			t.Settings[key] = s
		}
	})
	if t.Adapter == "" {
		if len(x.names) > 0 {
			d.errAt(k, "target %s needs adapter: (%s)", k.Value, orList(x.names))
		} else {
			d.errAt(k, "target %s needs adapter:", k.Value)
		}
	}
	return t
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

var envRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} in s, recording an error in d
// for each variable that is unset and has no default.
func expand(d *yamlDoc, n *yaml.Node, s string, lookup func(string) (string, bool)) string {
	return envRE.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRE.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok && v != "" {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		d.errAt(n, "environment variable %s is not set (refill.yml reads it as ${%s})", m[1], m[1])
		return ""
	})
}

// unsetVars returns the variables s reads as ${VAR} that are unset and
// have no default.
func unsetVars(s string, lookup func(string) (string, bool)) []string {
	var out []string
	for _, m := range envRE.FindAllStringSubmatch(s, -1) {
		if v, ok := lookup(m[1]); (!ok || v == "") && m[2] == "" {
			out = append(out, m[1])
		}
	}
	return out
}

func expandValue(d *yamlDoc, n *yaml.Node, v any, lookup func(string) (string, bool)) any {
	if s, ok := v.(string); ok && strings.Contains(s, "${") {
		return expand(d, n, s, lookup)
	}
	return v
}

// TargetNames returns the names of the project's targets, sorted.
func (p *Project) TargetNames() []string {
	names := make([]string, 0, len(p.Targets))
	for n := range p.Targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Target returns the named target, or the default one for "". Its Err is
// included, so a target that needs an unset environment variable fails here.
func (p *Project) Target(name string) (*Target, error) {
	t, err := p.LookupTarget(name)
	if err != nil {
		return nil, err
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

// LookupTarget returns the named target, or the default one for "",
// without checking its environment variables: for work that needs no
// connection, such as rendering SQL.
func (p *Project) LookupTarget(name string) (*Target, error) {
	if name == "" {
		name = p.DefaultTarget
	}
	t, ok := p.Targets[name]
	if !ok {
		return nil, fmt.Errorf("unknown target %q: refill.yml defines %s%s", name, strings.Join(p.TargetNames(), ", "), suggest(name, p.TargetNames()))
	}
	return t, nil
}

// ModelByName returns the model whose full name is name, or nil.
func (p *Project) ModelByName(name string) *Model { return p.byName[name] }

// Model returns the model named name: a full name (marts.daily_revenue) or
// a table name that only one model has (daily_revenue).
func (p *Project) Model(name string) (*Model, error) {
	if m, ok := p.byName[name]; ok {
		return m, nil
	}
	if ms := p.byTable[name]; len(ms) == 1 {
		return ms[0], nil
	} else if len(ms) > 1 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = m.Name
		}
		return nil, fmt.Errorf("model name %q is ambiguous: it could be %s: %w", name, strings.Join(names, " or "), ErrUnknownModel)
	}
	known := make([]string, 0, 2*len(p.Models))
	for _, m := range p.Models {
		known = append(known, m.Name)
		if len(p.byTable[m.Relation.Name]) == 1 && m.Name != m.Relation.Name {
			known = append(known, m.Relation.Name)
		}
	}
	return nil, fmt.Errorf("%w %q%s", ErrUnknownModel, name, suggest(name, known))
}

// loadModels parses every .sql file under the models folder and links refs.
func (p *Project) loadModels(fsys fs.FS, x *extensions) error {
	var errs ErrorList
	p.byName, p.byTable = map[string]*Model{}, map[string][]*Model{}
	if _, err := fs.Stat(fsys, p.ModelsDir); err != nil {
		errs.add(&Error{File: ProjectFile, Msg: fmt.Sprintf("models folder %q not found", p.ModelsDir)})
		return errs.Err()
	}
	// A model file's own errors break that model only (Project.Broken);
	// errors of the project's (refill.yml, duplicate names, seeds, the
	// graph) fail the load.
	var modelErrs ErrorList
	breakModel := func(name, file string, err error) {
		var list ErrorList
		list.add(err)
		modelErrs = append(modelErrs, list...)
		p.Broken = append(p.Broken, &BrokenModel{Name: name, Path: file, Errs: list})
	}
	type modelFile struct {
		name, file, text string
		m                *Model
		err              error
	}
	var files []*modelFile
	err := fs.WalkDir(fsys, p.ModelsDir, func(file string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || path.Ext(file) != ".sql" {
			return nil
		}
		raw, err := readFile(fsys, file)
		if err != nil {
			errs.add(err)
			return nil
		}
		rel := strings.TrimPrefix(file, p.ModelsDir+"/")
		if err := checkModelPath(file, rel); err != nil {
			errs.add(err)
			return nil
		}
		files = append(files, &modelFile{name: modelName(rel), file: file, text: string(raw)})
		return nil
	})
	if err != nil {
		errs.add(&Error{File: p.ModelsDir, Msg: err.Error(), Err: err})
	}
	// Parsed on every core (each with its own programs), and taken in
	// the order of the walk.
	next := make(chan *modelFile, len(files))
	for _, f := range files {
		next <- f
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			ps := programs{}
			for f := range next {
				f.m, f.err = parseModel(f.name, f.file, f.text, x, ps)
			}
		})
	}
	wg.Wait()
	for _, f := range files {
		m := f.m
		if f.err != nil {
			breakModel(f.name, f.file, f.err)
			if m != nil { // keep its name, so refs to it do not fail too
				p.byName[m.Name] = m
				p.byTable[m.Relation.Name] = append(p.byTable[m.Relation.Name], m)
			}
			continue
		}
		p.Models = append(p.Models, m)
		p.byName[m.Name] = m
		p.byTable[m.Relation.Name] = append(p.byTable[m.Relation.Name], m)
	}
	sort.Slice(p.Models, func(i, j int) bool { return p.Models[i].Name < p.Models[j].Name })
	errs.add(duplicateNames(p.Models))
	errs.add(p.listSeeds(fsys))
	for _, m := range p.Models {
		if err := p.link(m); err != nil {
			m.broken = true
			breakModel(m.Name, m.Path, err)
		}
		if m.Config.OnSchemaChange == "" {
			m.Config.OnSchemaChange = p.OnSchemaChange
		}
	}
	p.breakReaders()
	if len(errs) == 0 {
		g, err := newGraph(p.Models)
		errs.add(err)
		p.Graph = g
	}
	if len(errs) > 0 {
		return append(errs, modelErrs...).Err()
	}
	sort.Slice(p.Broken, func(i, j int) bool { return p.Broken[i].Name < p.Broken[j].Name })
	return modelErrs.Err()
}

// A BrokenModel is a model whose file has errors, or that reads one: the
// project loads without it (Load), and commands that select neither it
// nor what reads it go on.
type BrokenModel struct {
	Name string
	Path string
	// Errs are the file's errors; for a model broken only because it
	// reads a broken one, Reads names that one and Errs is empty.
	Errs  ErrorList
	Reads string
}

// Why says in one line why b is broken.
func (b *BrokenModel) Why() string {
	if len(b.Errs) == 0 {
		return fmt.Sprintf("reads %s, which is broken", b.Reads)
	}
	first := strings.SplitN(b.Errs[0].Error(), "\n", 2)[0]
	if n := len(b.Errs); n > 1 {
		first += fmt.Sprintf(" (and %d more)", n-1)
	}
	return first
}

// BrokenModel returns the broken model named name, or nil.
func (p *Project) BrokenModel(name string) *BrokenModel {
	for _, b := range p.Broken {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// breakReaders moves the broken models out of p.Models, with every model
// that reads one, however indirectly: each is a BrokenModel naming what
// it reads.
func (p *Project) breakReaders() {
	for changed := true; changed; {
		changed = false
		for _, m := range p.Models {
			if m.broken {
				continue
			}
			for _, t := range m.templates() {
				for _, name := range t.Refs {
					if up, err := p.Model(name); err == nil && up.broken && !m.broken {
						m.broken, changed = true, true
						p.Broken = append(p.Broken, &BrokenModel{Name: m.Name, Path: m.Path, Reads: up.Name})
					}
				}
			}
		}
	}
	healthy := p.Models[:0]
	for _, m := range p.Models {
		if !m.broken {
			healthy = append(healthy, m)
		}
	}
	p.Models = healthy
	for name, m := range p.byName {
		if m.broken {
			delete(p.byName, name)
		}
	}
	for table, ms := range p.byTable {
		p.byTable[table] = slices.DeleteFunc(ms, func(m *Model) bool { return m.broken })
	}
}

// Unset returns the errors of the vars that models read and that have no
// value (Model.Unset), of every model when ms is empty: commands refuse a
// selection with any, and validate reports them all.
func (p *Project) Unset(ms ...*Model) error {
	if len(ms) == 0 {
		ms = p.Models
	}
	var errs ErrorList
	for _, m := range ms {
		errs = append(errs, m.Unset...)
	}
	return errs.Err()
}

// link resolves m's ref() names and checks its var() names.
func (p *Project) link(m *Model) error {
	var errs ErrorList
	m.upstream = map[string]*Model{}
	for _, t := range m.templates() {
		for _, name := range t.Refs {
			up, err := p.Model(name)
			if err != nil {
				line, col := t.position("ref", name)
				errs.add(t.errorAt(line, col, "ref(%q): %v", name, err))
				continue
			}
			if up.broken {
				continue // its own errors are reported
			}
			if up == m {
				line, col := t.position("ref", name)
				errs.add(t.errorAt(line, col, "ref(%q): a model cannot read its own table through ref; use this", name))
				continue
			}
			if _, dup := m.upstream[name]; !dup {
				m.upstream[name] = up
				if !slices.Contains(m.Upstream, up) {
					m.Upstream = append(m.Upstream, up)
				}
			}
		}
		for _, name := range t.Vars {
			if _, ok := p.Vars[name]; !ok {
				line, col := t.position("var", name)
				m.Unset.add(t.errorAt(line, col, "var(%q) is not set: add it under vars: in refill.yml or pass --var %s=VALUE", name, name))
			}
		}
	}
	for name := range m.Config.DependsOnPast {
		if name == "*" {
			continue
		}
		if up, err := p.Model(name); err != nil || !slices.Contains(m.Upstream, up) {
			errs.add(&Error{File: m.Path, Msg: fmt.Sprintf("depends_on_past names %q, which the model does not ref()", name)})
		}
	}
	return errs.Err()
}

// DependsOnPast returns how many extra partitions of look-back m's partitions
// need from upstream model up.
func (m *Model) DependsOnPast(up *Model) int {
	if n, ok := m.Config.DependsOnPast[up.Name]; ok {
		return n
	}
	for name, u := range m.upstream {
		if u == up {
			if n, ok := m.Config.DependsOnPast[name]; ok {
				return n
			}
		}
	}
	return m.Config.DependsOnPast["*"]
}
