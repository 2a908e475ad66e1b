package adaptertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/models"
)

// ShopDir is the example project, relative to an adapter package.
const ShopDir = "../../testdata/shop"

// ShopAdapters are the target settings of the adapters the example
// project's targets use (as cmd/refill knows them), for loading it.
var ShopAdapters = []models.AdapterKeys{
	{Name: "duckdb", TargetKeys: []string{"path"}},
	{Name: "clickhouse", TargetKeys: []string{"cluster", "layout", "sharding_key"}},
}

// RenderShop renders every model of the example project for a sample
// partition (and a batch of three for daily models that may run in
// batches: all but cumulative ones) in dialect d, as one text,
// for golden tests of each dialect's SQL.
func RenderShop(t *testing.T, d models.Dialect, schema string) string {
	t.Helper()
	p, err := models.Load(os.DirFS(ShopDir), models.LoadOptions{LookupEnv: func(k string) (string, bool) { return "x", true },
		Adapters: ShopAdapters})
	if err != nil {
		t.Fatal(err)
	}
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
// a query of one column d from table t, as a program that knows adapter
// does: the way to get a model with an adapter's block.
func LoadModel(adapter models.AdapterKeys, name, header string) *models.Model {
	fsys := fstest.MapFS{
		"refill.yml":              {Data: []byte("targets:\n  t: {adapter: " + adapter.Name + "}\n")},
		"models/" + name + ".sql": {Data: []byte("/* refill\n" + header + "*/\nSELECT d FROM t")},
	}
	p, err := models.Load(fsys, models.LoadOptions{Adapters: []models.AdapterKeys{adapter}})
	if err != nil {
		panic(err)
	}
	m, err := p.Model(name)
	if err != nil {
		panic(err)
	}
	return m
}
