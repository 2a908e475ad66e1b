package snowflake_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

// loadModel loads a project of one model, name, with the YAML header and
// a query of one column d, as a program with the Snowflake adapter does.
func loadModel(name, header string) *models.Model {
	return adaptertest.LoadModel(snowflake.Engine(), name, header)
}

// A model's snowflake: block names its warehouse and its table's
// clustering; only the clustering shapes the table, so only it is part
// of the model's version.
func TestBlock(t *testing.T) {
	t.Parallel()
	m := loadModel("m", "snowflake:\n  warehouse: BIG_WH\n  cluster_by: (d)\n")
	got, err := snowflake.ParseBlock(m.Config.Adapter[snowflake.BlockName])
	if want := (snowflake.ModelOptions{Warehouse: "BIG_WH", ClusterBy: "(d)"}); got != want || err != nil {
		t.Errorf("ParseBlock = %+v, %v; want %+v", got, err, want)
	}
	s := &models.Scope{Dialect: snowflake.Dialect{}, Schema: "S"}
	if v := m.Version(s).Text; !strings.Contains(v, "\nsnowflake.cluster_by: (d)\n") || strings.Contains(v, "BIG_WH") {
		t.Errorf("version:\n%s", v)
	}
	if a, b := m.Version(s), loadModel("m", "snowflake: {cluster_by: (d), warehouse: SMALL_WH}\n").Version(s); a.Fingerprint != b.Fingerprint {
		t.Errorf("another warehouse changed the version:\n%s\n%s", a.Text, b.Text)
	}
}

// The block is checked as the project loads, each error at its line.
func TestBlockErrors(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml":   {Data: []byte("targets:\n  sf: {adapter: snowflake}\n")},
		"models/m.sql": {Data: []byte("/* refill\nsnowflake: {cluster_by: x, warehous: y}\n*/\nSELECT 1")},
		"models/n.sql": {Data: []byte("/* refill\nsnowflake: [warehouse]\n*/\nSELECT 1")},
	}
	_, err := models.Load(fsys, models.LoadOptions{Adapters: []models.AdapterKeys{snowflake.Engine().Keys()}})
	for _, want := range []string{
		`models/m.sql:2:28: unknown key "warehous" in snowflake options (did you mean "warehouse"?)`,
		`models/n.sql:2:12: snowflake options must be a mapping of keys to values`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %s", err, want)
		}
	}
}
