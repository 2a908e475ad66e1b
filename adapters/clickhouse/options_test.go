package clickhouse_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// loadModel loads a project of one model, name, with the YAML header and
// a query of one column d, as a program with the ClickHouse adapter does.
func loadModel(name, header string) *models.Model {
	return adaptertest.LoadModel(clickhouse.Engine(), name, header)
}

// A model's clickhouse: block sets the table's clauses; what it leaves
// out is defaulted from the model.
func TestModelTableOptions(t *testing.T) {
	for header, want := range map[string]string{
		"partition_by: d\ngrain: day\nstart: 2024-01-01\n": "ENGINE = MergeTree() PARTITION BY toYYYYMM(`d`) ORDER BY `d`",
		"partition_by: d\ngrain: day\nstart: 2024-01-01\nclickhouse: {engine: ReplacingMergeTree(), partition_by: d, settings: index_granularity = 1024}\n": "ENGINE = ReplacingMergeTree() PARTITION BY d ORDER BY `d` SETTINGS index_granularity = 1024",
		"clickhouse:\n  order_by: (a, b)\n": "ENGINE = MergeTree() ORDER BY (a, b)",
	} {
		o, err := clickhouse.ModelTableOptions(clickhouse.Dialect{}, loadModel("m", header))
		if err != nil || o.Clauses() != want {
			t.Errorf("%s: %s, %v\nwant %s", header, o.Clauses(), err, want)
		}
	}
}

// The block is checked as the project loads, each error at its line.
func TestBlockErrors(t *testing.T) {
	fsys := fstest.MapFS{
		"refill.yml":   {Data: []byte("targets:\n  ch: {adapter: clickhouse}\n")},
		"models/m.sql": {Data: []byte("/* refill\nclickhouse:\n  engin: MergeTree()\n  order_by: [a]\n*/\nSELECT 1")},
	}
	_, err := models.Load(fsys, models.LoadOptions{Adapters: []models.AdapterKeys{clickhouse.Engine().Keys()}})
	for _, want := range []string{
		`models/m.sql:3:3: unknown key "engin" in clickhouse options (did you mean "engine"?)`,
		`models/m.sql:4:13: order_by must be a string`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %s", err, want)
		}
	}
}
