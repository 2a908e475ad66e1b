package models

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// Names that collide with what refill or the project owns are
// refused, naming the file.
func TestNameCollisions(t *testing.T) {
	t.Parallel()
	schemas := TargetSchemas{Default: "main", Ledger: "refill", Stage: "refill_stage"}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // in the error; "" for none
	}{
		{"a model over a source it shares a table with",
			map[string]string{"models/raw/orders.sql": `SELECT * FROM {{ source("raw.orders") }}`},
			`models/raw/orders.sql: model raw.orders would overwrite table raw.orders, which is read as source("raw.orders") in models/raw/orders.sql`},
		{"a model over another model's source, in the default schema",
			map[string]string{"models/a.sql": `SELECT * FROM {{ source("events") }}`, "models/events.sql": "SELECT 1 AS x"},
			"models/events.sql: model events would overwrite table main.events"},
		{"a model over a seed",
			map[string]string{"models/raw/customers.sql": "SELECT 1 AS x", "seeds/raw/customers.csv": "id\n1\n"},
			"read as the seed seeds/raw/customers.csv"},
		{"a model in the ledger schema",
			map[string]string{"models/refill/partitions.sql": "SELECT 1 AS x"},
			"where refill keeps its ledger"},
		{"a model in the stage schema, in another case",
			map[string]string{"models/REFILL_STAGE/t.sql": "SELECT 1 AS x"},
			"where refill keeps its staging tables"},
		{"a source in another case",
			map[string]string{"models/raw/Orders.sql": "SELECT 1 AS x", "models/b.sql": `SELECT * FROM {{ source("RAW.orders") }}`},
			"would overwrite table raw.Orders"},
		{"nothing in common", map[string]string{"models/a.sql": `SELECT * FROM {{ source("raw.a") }}`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.files)
			err := p.CheckNames(schemas)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckNames: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckNames = %v; want %q", err, tc.want)
			}
		})
	}
}

func TestModelFileNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"models/staging/orders.sql": "SELECT 1 AS x", "models/staging.orders.sql": "SELECT 1 AS x"},
			`models/staging.orders.sql: model file and folder names must be SQL identifiers (letters, digits, _): "staging.orders" is not; write models/staging/orders.sql`},
		{map[string]string{"models/Orders.sql": "SELECT 1 AS x", "models/orders.sql": "SELECT 1 AS x"},
			"models/orders.sql: models/orders.sql and models/Orders.sql name the same table"},
		{map[string]string{"models/a/b/c.sql": "SELECT 1 AS x"}, "at most one folder deep"},
	} {
		_, err := load(t, tc.files)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.files, err, tc.want)
		}
	}
}

// A model path that is not a regular file (a named pipe would
// block every command) is refused.
func TestNonRegularFiles(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml":      {Data: []byte(testProjectYML)},
		"models/pipe.sql": {Mode: fs.ModeNamedPipe},
		"models/ok.sql":   {Data: []byte("SELECT 1 AS x")},
	}
	_, err := Load(fsys, LoadOptions{Adapters: testAdapters})
	if err == nil || !strings.Contains(err.Error(), "models/pipe.sql: not a regular file (a named pipe)") {
		t.Errorf("Load = %v", err)
	}
	fsys["refill.yml"] = &fstest.MapFile{Mode: fs.ModeNamedPipe}
	if _, err := Load(fsys, LoadOptions{Adapters: testAdapters}); err == nil || !strings.Contains(err.Error(), "refill.yml: not a regular file") {
		t.Errorf("Load with a piped refill.yml = %v", err)
	}
}
