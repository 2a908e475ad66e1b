package adaptertest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// shopDir is the example project's folder, found from this file's, so
// that a test of any package reaches it.
var shopDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "shop")
}()

// Shop returns the example project as an in-memory tree that tests may
// change, as a program that runs on engines sees it: with only the targets
// of those engines (the first of them the default), and options to load it
// with. A test of one engine loads the shop without knowing the others.
func Shop(t testing.TB, engines ...adapters.Engine) (fstest.MapFS, models.LoadOptions) {
	t.Helper()
	fsys := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(shopDir), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(shopDir, path))
		fsys[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := models.LoadOptions{}
	var names []string
	for _, e := range engines {
		opts.Adapters = append(opts.Adapters, e.Keys())
		names = append(names, e.Info.Name)
	}
	yml, err := keepTargets(fsys[models.ProjectFile].Data, names)
	if err != nil {
		t.Fatal(err)
	}
	fsys[models.ProjectFile] = &fstest.MapFile{Data: yml}
	return fsys, opts
}

// keepTargets returns the refill.yml src with only the targets whose
// adapter is one of names, the first of them the default target.
func keepTargets(src []byte, names []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	value := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	targets := value(root, "targets")
	var kept []*yaml.Node
	for i := 0; i+1 < len(targets.Content); i += 2 {
		if adapter := value(targets.Content[i+1], "adapter"); adapter != nil && slices.Contains(names, adapter.Value) {
			kept = append(kept, targets.Content[i:i+2]...)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("the example project has no target of %s", strings.Join(names, ", "))
	}
	targets.Content = kept
	value(root, "target").Value = kept[0].Value
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// RenderShop renders every model of the example project for a sample
// partition (and a batch of three for daily models that may run in
// batches: all but cumulative ones) in the dialect of its target of
// engine e, as one text, for golden tests of each dialect's SQL.
func RenderShop(t *testing.T, e adapters.Engine) string {
	t.Helper()
	fsys, opts := Shop(t, e)
	opts.LookupEnv = func(k string) (string, bool) { return "x", true }
	p, err := models.Load(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	target, err := p.LookupTarget("")
	if err != nil {
		t.Fatal(err)
	}
	d, schema := e.Dialect(target)
	scope := &models.Scope{Dialect: d, Schema: schema, Vars: p.Vars}
	var b strings.Builder
	for _, m := range p.Models {
		var samples [][]models.Partition
		switch m.Kind() {
		case models.TimePartitioned:
			first, _ := m.Partition(m.Config.Grain.Key(m.Config.Start))
			second := m.Next(first, 1)
			samples = append(samples, []models.Partition{second})
			if m.Config.Grain == models.Day && !m.Config.Self {
				samples = append(samples, []models.Partition{first, second, m.Next(second, 1)})
			}
		default:
			samples = append(samples, m.Partitions(time.Time{}, time.Time{})[:1])
		}
		for _, parts := range samples {
			sql, err := m.Render(scope, parts...)
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			fmt.Fprintf(&b, "-- %s (%s) partitions %s..%s\n%s;\n\n", m.Name, filepath.Base(m.Path), parts[0].Key, parts[len(parts)-1].Key, sql)
		}
	}
	return b.String()
}

// LoadModel loads a project of one model, name, with the YAML header and
// a query of one column d from table t, as a program that runs on engine
// e does: the way to get a model with an engine's block.
func LoadModel(e adapters.Engine, name, header string) *models.Model {
	fsys := fstest.MapFS{
		"refill.yml":              {Data: []byte("targets:\n  t: {adapter: " + e.Info.Name + "}\n")},
		"models/" + name + ".sql": {Data: []byte("/* refill\n" + header + "*/\nSELECT d FROM t")},
	}
	p, err := models.Load(fsys, models.LoadOptions{Adapters: []models.AdapterKeys{e.Keys()}})
	if err != nil {
		panic(err)
	}
	m, err := p.Model(name)
	if err != nil {
		panic(err)
	}
	return m
}
