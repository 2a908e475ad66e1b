package models

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// An adapter's block is refused where it is wrong, with the line: by
// models when it is not a mapping or not an adapter's at all, by the
// adapter's BlockFunc for what is inside.
func TestAdapterBlockErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header, want string
	}{
		{"unknown key", `clickhouse: {engin: "MergeTree()"}`,
			`models/m.sql:2:14: unknown key "engin" in clickhouse options (did you mean "engine"?)`},
		{"not a string", `clickhouse: {order_by: [a, b]}`, `models/m.sql:2:24: order_by must be a string`},
		{"null", "clickhouse:\n  order_by: ~", `models/m.sql:3:13: order_by must be a string`},
		{"duplicate key", `clickhouse: {engine: a, engine: b}`, `models/m.sql:2:25: duplicate key "engine" in clickhouse options`},
		{"not a mapping", `snowflake: [cluster_by]`, `models/m.sql:2:12: snowflake options must be a mapping of keys to values`},
		{"misspelt block", `clickhuose: {engine: x}`, `models/m.sql:2:1: unknown key "clickhuose" in model config (did you mean "clickhouse"?)`},
		{"an adapter with no block", `duckdb: {x: y}`, `models/m.sql:2:1: unknown key "duckdb" in model config`},
		{"an unknown native type", "columns: {t: {clikhouse: String}}", `models/m.sql:2:15: unknown key "clikhouse" in columns.t (did you mean "clickhouse"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"models/m.sql": "/* refill\n" + tc.header + "\n*/\nSELECT 1 AS t"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Errorf("error is a %T, not an ErrorList", err)
			}
		})
	}
}

// A program that names no adapter refuses their blocks and settings:
// models knows none of its own.
func TestNoAdapters(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml":   {Data: []byte("targets:\n  dev: {adapter: duckdb, path: w.duckdb}\n")},
		"models/m.sql": {Data: []byte("/* refill\nclickhouse: {engine: x}\n*/\nSELECT 1")},
	}
	_, err := Load(fsys, LoadOptions{})
	for _, want := range []string{`models/m.sql:2:1: unknown key "clickhouse" in model config`, `refill.yml:2:26: unknown key "path" in target dev`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, want)
		}
	}
}

// An error a BlockFunc returns without a position is placed at the block.
func TestBlockErrorPosition(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml":   {Data: []byte("targets:\n  dev: {adapter: x}\n")},
		"models/m.sql": {Data: []byte("/* refill\ngrain: day\nx:\n  a: b\n*/\nSELECT 1")},
	}
	block := func(o *Options) (string, error) {
		if _, err := o.Strings("a"); err != nil {
			return "", err
		}
		return "", errors.New("a is not b")
	}
	_, err := Load(fsys, LoadOptions{Adapters: []AdapterKeys{{Name: "x", Block: block}}})
	if err == nil || !strings.Contains(err.Error(), "models/m.sql:3:1: x options: a is not b") {
		t.Errorf("error:\n%v", err)
	}
}

// The blocks' lines of a model's version are what their adapters say
// shapes the table: a setting that says where a model runs leaves the
// fingerprint alone.
func TestAdapterBlockVersion(t *testing.T) {
	t.Parallel()
	version := func(header string) *Version {
		t.Helper()
		p := mustLoad(t, map[string]string{"models/d.sql": "/* refill\n" + header + "\n*/\nSELECT 1 AS d"})
		return mustModel(t, p, "d").Version(&Scope{Dialect: ansi{}, Schema: "main"})
	}
	base := version("snowflake: {cluster_by: d, warehouse: BIG}\nclickhouse: {engine: MergeTree(), order_by: d}")
	want := "clickhouse.engine: MergeTree()\nclickhouse.order_by: d\nsnowflake.cluster_by: d\n"
	if !strings.Contains(base.Text, want) {
		t.Errorf("version text:\n%s\nwant it to contain:\n%s", base.Text, want)
	}
	if v := version("clickhouse: {order_by: d, engine: MergeTree()}\nsnowflake: {warehouse: SMALL, cluster_by: d}"); v.Fingerprint != base.Fingerprint {
		t.Errorf("reordering the blocks or changing the warehouse changed the version:\n%s", v.Text)
	}
	if v := version("clickhouse: {engine: MergeTree(), order_by: d}\nsnowflake: {cluster_by: \"(d)\"}"); v.Fingerprint == base.Fingerprint {
		t.Error("changing cluster_by keeps the version")
	}
	none := version("")
	if v := version("clickhouse:\nsnowflake: {}"); v.Fingerprint != none.Fingerprint {
		t.Errorf("empty blocks changed the version:\n%s", v.Text)
	}
}

// The blocks reach the adapters as written, with their positions.
func TestOptions(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/d.sql": "/* refill\nclickhouse:\n  engine: MergeTree()\n  order_by: 8192\n*/\nSELECT 1 AS d"})
	o := mustModel(t, p, "d").Config.Adapter["clickhouse"]
	got, err := o.Strings("engine", "order_by", "settings")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"engine": "MergeTree()", "order_by": "8192"}, got); diff != "" {
		t.Errorf("Strings (-want +got):\n%s", diff)
	}
	if o.Name() != "clickhouse" {
		t.Errorf("Name = %q", o.Name())
	}
	for key, want := range map[string]string{
		"order_by": "models/d.sql:4:13: no\n     4 |   order_by: 8192\n       |             ^",
		"":         "models/d.sql:2:1: no\n     2 | clickhouse:\n       | ^",
		"settings": "models/d.sql:2:1: no",
	} {
		if err := o.Errorf(key, "no"); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Errorf(%q):\n%v\nwant:\n%s", key, err, want)
		}
	}
	var none *Options
	if got, err := none.Strings("engine"); len(got) != 0 || err != nil {
		t.Errorf("a missing block: %v, %v", got, err)
	}
}

// A column's native types keep the program's order of its adapters,
// whatever the file's, in messages and in the version.
func TestNativeTypes(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/d.sql": "/* refill\ncolumns:\n  t: {snowflake: ARRAY, portable: varchar, duckdb: \"VARCHAR[]\"}\n*/\nSELECT 1 AS t"})
	typ := mustModel(t, p, "d").Config.Columns[0].Type
	if got, want := typ.String(), "{portable: varchar, duckdb: VARCHAR[], snowflake: ARRAY}"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, err := typ.In(ansi{}); got != "VARCHAR" || err != nil {
		t.Errorf("In(ansi) = %q, %v", got, err)
	}
	if got, err := typ.In(named{name: "snowflake"}); got != "ARRAY" || err != nil {
		t.Errorf("In(snowflake) = %q, %v", got, err)
	}
}

// named is the ANSI dialect under another name.
type named struct {
	ansi
	name string
}

func (d named) Name() string { return d.name }
