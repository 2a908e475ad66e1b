package models

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestSources reads refill.yml's sources: and which of them each model
// tracks: time-partitioned models reading a declared source with a
// time_column.
func TestSources(t *testing.T) {
	t.Parallel()
	yml := `targets:
  dev: {adapter: duckdb}
sources:
  raw.trips: {time_column: started_at, loaded_at: _loaded, track: 400d}
  raw.drivers: {description: "a dimension, not by time"}
  events: {time_column: ts}
`
	day := "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n"
	fsys := fstest.MapFS{"refill.yml": {Data: []byte(yml)},
		"models/daily.sql":  {Data: []byte(day + `SELECT * FROM {{ source("raw.trips") }} JOIN {{ source("raw.drivers") }} USING (driver) JOIN {{ source("events") }} USING (x)`)},
		"models/whole.sql":  {Data: []byte(`SELECT * FROM {{ source("raw.trips") }}`)},
		"models/nodecl.sql": {Data: []byte(day + `SELECT * FROM {{ source("raw.other") }}`)},
	}
	p, err := Load(fsys, LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Adapters: testAdapters})
	if err != nil {
		t.Fatal(err)
	}
	trips := p.Sources["raw.trips"]
	if trips == nil || trips.TimeColumn != "started_at" || trips.LoadedAt != "_loaded" || trips.Track != 400*24*time.Hour || trips.Line != 4 {
		t.Errorf("raw.trips = %+v", trips)
	}
	if p.Sources["raw.drivers"].Tracks() {
		t.Errorf("a source without time_column is tracked")
	}
	var names []string
	for _, s := range p.TrackedSources(p.ModelByName("daily")) {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "events raw.trips" {
		t.Errorf("daily tracks %v, want events and raw.trips", names)
	}
	if len(p.TrackedSources(p.ModelByName("whole"))) != 0 || len(p.TrackedSources(p.ModelByName("nodecl"))) != 0 {
		t.Errorf("a whole-table model, or an undeclared source, is tracked")
	}
}

func TestSourcesErrors(t *testing.T) {
	t.Parallel()
	for yml, want := range map[string]string{
		"sources:\n  raw.t: {time_colum: ts}\n":             `refill.yml:4:11: unknown key "time_colum" in source raw.t (did you mean "time_column"?)`,
		"sources:\n  raw.t: {time_column: 'a b'}\n":         `refill.yml:4:24: time_column must be a column name, not "a b"`,
		"sources:\n  raw.t: {time_column: ts, track: 5x}\n": `refill.yml:4:35: track must be all or a duration such as 400d, not "5x"`,
		"sources:\n  raw.t: {loaded_at: l}\n":               `refill.yml:4:3: source raw.t: loaded_at and track need time_column`,
		"sources:\n  a.b.c.d: {time_column: ts}\n":          `refill.yml:4:3: source "a.b.c.d"`,
		"sources: [raw.t]\n":                                `refill.yml:3:10: sources must be a mapping`,
	} {
		fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n" + yml)}, "models/a.sql": {Data: []byte("SELECT 1")}}
		_, err := Load(fsys, LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Adapters: testAdapters})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", yml, err, want)
		}
	}
}
