package main

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/refill/refill/models"
)

// fingerprintProject has models with every adapter's block and native
// column types, as users wrote them before the adapters decoded their own
// blocks.
var fingerprintProject = map[string]string{
	"refill.yml": "target: dev\ntargets:\n  dev: {adapter: duckdb, path: w.duckdb}\n" +
		"  ch: {adapter: clickhouse, dsn: \"clickhouse://127.0.0.1:9000/default\"}\n" +
		"  sf: {adapter: snowflake, dsn: \"u:p@acct/DB/SCH\", warehouse: WH}\n",
	"models/marts/daily.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
columns:
  d: date
  n: bigint
  tags: {duckdb: "VARCHAR[]", clickhouse: "Array(String)", snowflake: ARRAY}
  name: {portable: varchar, clickhouse: "LowCardinality(String)"}
clickhouse: {engine: "ReplacingMergeTree()", order_by: "(d, n)", partition_by: "toYYYYMM(d)", settings: "index_granularity = 8192"}
snowflake: {warehouse: BIG_WH, cluster_by: "(d)"}
*/
SELECT d, count(*) AS n, [] AS tags, 'x' AS name FROM {{ ref("events") }} WHERE d >= {{ start }} AND d < {{ end }} GROUP BY d
`,
	"models/events.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
clickhouse:
  partition_by: d
snowflake:
  warehouse: SMALL_WH
*/
SELECT d FROM raw.events WHERE d >= {{ start }} AND d < {{ end }}
`,
	"models/regions.sql": `/* refill
partition_by: region
values: [eu, us]
clickhouse: {order_by: region}
snowflake: {cluster_by: region}
*/
SELECT {{ partition }} AS region
`,
	"models/plain.sql": `/* refill
clickhouse:
snowflake: {}
*/
SELECT 1 AS x
`,
}

// TestFingerprintsKept pins the versions of models with the adapters'
// blocks to what refill computed when models decoded them itself: a
// fingerprint that changes makes every such model look edited, and a
// scheduled run rebuild all of it.
func TestFingerprintsKept(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{}
	for name, text := range fingerprintProject {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	p, err := models.Load(fsys, withAdapters(models.LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{"dev", "ch", "sf"} {
		d, schema, err := dialectFor(p.Targets[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Models {
			got = append(got, fmt.Sprintf("%s %s %s", d.Name(), m.Name, m.Version(&models.Scope{Dialect: d, Schema: schema}).Fingerprint))
		}
	}
	want := []string{
		"duckdb events 1d76aaadb7358215",
		"duckdb marts.daily 8d4770a32ea83101",
		"duckdb plain d078c590bdbeaec6",
		"duckdb regions cdaaa33b7ec44f6d",
		"clickhouse events 17237c35a979df29",
		"clickhouse marts.daily 0e7deffe4c030ce8",
		"clickhouse plain cf5caa2233fcdcfe",
		"clickhouse regions 1ee6bffb4e245fed",
		"snowflake events 3d17183963f827a4",
		"snowflake marts.daily 728ccbbd675a6279",
		"snowflake plain 59427f3bce61e076",
		"snowflake regions 7f9640224da6efd5",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fingerprints (-want +got):\n%s", diff)
	}
	m, err := p.Model("marts.daily")
	if err != nil {
		t.Fatal(err)
	}
	d, schema, _ := dialectFor(p.Targets["ch"])
	wantText := "model: marts.daily\ntable: `marts`.`daily`\ndialect: clickhouse\npartition_by: d\ngrain: day\npartition_type: date\n" +
		"column d: date\ncolumn n: bigint\ncolumn tags: {duckdb: VARCHAR[], clickhouse: Array(String), snowflake: ARRAY}\n" +
		"column name: {portable: varchar, clickhouse: LowCardinality(String)}\n" +
		"clickhouse: {Engine:ReplacingMergeTree() OrderBy:(d, n) PartitionBy:toYYYYMM(d) Settings:index_granularity = 8192}\n" +
		"snowflake.cluster_by: (d)\nref: events -> `default`.`events`\n\n" +
		"SELECT d, count(*) AS n, [] AS tags, 'x' AS name FROM {{ ref(\"events\") }} WHERE d >= {{ start }} AND d < {{ end }} GROUP BY d\n"
	if diff := cmp.Diff(wantText, m.Version(&models.Scope{Dialect: d, Schema: schema}).Text); diff != "" {
		t.Errorf("version text (-want +got):\n%s", diff)
	}
}

// TestAdapterSettingsErrors: the adapters check their blocks and settings
// as the project loads, and validate reports each problem at its line.
func TestAdapterSettingsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "refill.yml", "target: dev\ntargets:\n  dev: {adapter: duckdb, path: w.duckdb}\n"+
		"  sf: {adapter: snowflake, dsn: \"u:p@acct/DB/SCH\", warehouse: WH, pth: q}\n")
	write(t, dir, "models/bad.sql", "/* refill\ncolumns:\n  t: {clikhouse: String}\n"+
		"clickhouse: {engin: \"MergeTree()\", order_by: [a, b]}\nsnowflake: [warehouse]\nclickhuose: {engine: x}\n*/\nSELECT 'x' AS t\n")
	r := refill(t, dir, "validate")
	if r.code != exitUsage {
		t.Errorf("exit %d, want %d", r.code, exitUsage)
	}
	for _, want := range []string{
		`models/bad.sql:3:7: unknown key "clikhouse" in columns.t (did you mean "clickhouse"?)`,
		`models/bad.sql:4:14: unknown key "engin" in clickhouse options (did you mean "engine"?)`,
		`models/bad.sql:4:46: order_by must be a string`,
		`models/bad.sql:5:12: snowflake options must be a mapping of keys to values`,
		`models/bad.sql:6:1: unknown key "clickhuose" in model config (did you mean "clickhouse"?)`,
		`refill.yml:4:67: unknown key "pth" in target sf (did you mean "path"?)`,
		"6 problem(s) found.",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate lacks %s:\n%s", want, r.stderr)
		}
	}

	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: w.duckdb, warehouse: W}\n")
	write(t, dir, "models/bad.sql", "SELECT 1 AS x\n")
	r = refill(t, dir, "plan", "--offline")
	if want := "refill.yml:2:53: warehouse does not apply to duckdb targets"; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want %d and %s:\n%s", r.code, exitUsage, want, r.stderr)
	}
}

// TestClusterSettingsErrors: a ClickHouse target's cluster settings are
// checked before anything connects, each error at its line.
func TestClusterSettingsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target string
		models       map[string]string
		want         string
	}{
		{"layout without a cluster", `{adapter: clickhouse, dsn: "clickhouse://h:9000/d", layout: sharded}`, nil,
			"refill.yml:2:67: layout applies to a cluster: set cluster: (a cluster of the servers' remote_servers)"},
		{"sharding key without a cluster", `{adapter: clickhouse, dsn: "clickhouse://h:9000/d", sharding_key: "rand()"}`, nil,
			"refill.yml:2:73: sharding_key applies to a cluster"},
		{"unknown layout", `{adapter: clickhouse, dsn: "clickhouse://h:9000/d", cluster: c, layout: shardd}`, nil,
			`refill.yml:2:79: unknown layout "shardd": want replicated (every node holds every row) or sharded`},
		{"a model on another's local table", `{adapter: clickhouse, dsn: "clickhouse://h:9000/d", cluster: c, layout: sharded}`,
			map[string]string{"models/m.sql": "SELECT 1 AS x\n", "models/m_local.sql": "SELECT 2 AS x\n"},
			"models/m_local.sql: model m_local would be written to d.m_local, which the sharded layout uses for the shards of m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "refill.yml", "targets:\n  ch: "+tc.target+"\n")
			write(t, dir, "models/x.sql", "SELECT 1 AS x\n")
			for k, v := range tc.models {
				write(t, dir, k, v)
			}
			r := refill(t, dir, "plan", "--offline")
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d and %s:\n%s", r.code, exitUsage, tc.want, r.stderr)
			}
		})
	}
	// A model's sharding key is its own business, not its version's.
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  ch: {adapter: clickhouse, dsn: \"clickhouse://h:9000/d\", cluster: c, layout: sharded, sharding_key: \"rand()\"}\n")
	write(t, dir, "models/m.sql", "/* refill\nclickhouse: {sharding_key: \"cityHash64(x)\"}\n*/\nSELECT 1 AS x\n")
	if r := refill(t, dir, "validate"); r.code != 0 {
		t.Errorf("validate: exit %d\n%s", r.code, r.stderr)
	}
}
