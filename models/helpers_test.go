package models

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// ansi is a plain ANSI SQL dialect for tests of rendering logic. The real
// dialects live in the adapters and have golden tests there.
type ansi struct{}

func (ansi) Name() string                { return "ansi" }
func (ansi) QuoteIdent(s string) string  { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func (ansi) QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func (ansi) Date(t time.Time) string     { return "DATE '" + t.Format("2006-01-02") + "'" }
func (ansi) Timestamp(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05") + "'"
}
func (ansi) Bool(b bool) string { return fmt.Sprint(b) }
func (ansi) DateTrunc(g Grain, e string) string {
	return fmt.Sprintf("date_trunc('%s', %s)", g, e)
}
func (ansi) DateAdd(e string, n int, g Grain) string {
	return fmt.Sprintf("(%s + INTERVAL '%d %s')", e, n, g)
}
func (ansi) CastDate(e string) string       { return "CAST(" + e + " AS DATE)" }
func (ansi) CastString(e string) string     { return "CAST(" + e + " AS VARCHAR)" }
func (ansi) ColumnType(t ColumnType) string { return strings.ToUpper(string(t)) }

const testProjectYML = `
target: dev
targets:
  dev: {adapter: duckdb, path: warehouse.duckdb}
vars: {min_amount: 10, region: eu}
`

// testAdapters stand for a program's adapters: one whose targets have a
// path, one with a block of table settings, one with a target setting and
// a block of which one setting shapes the table.
var testAdapters = []AdapterKeys{
	{Name: "duckdb", TargetKeys: []string{"path"}},
	{Name: "clickhouse", TargetKeys: []string{"cluster", "layout", "sharding_key"}, Block: stringBlock([]string{"engine", "order_by"})},
	{Name: "snowflake", TargetKeys: []string{"warehouse"}, Block: stringBlock([]string{"cluster_by"}, "warehouse")},
}

// stringBlock returns a BlockFunc for a block of string settings: those
// of shaping are part of the model's version (as name.key: value), the
// others are not.
func stringBlock(shaping []string, others ...string) BlockFunc {
	return func(o *Options) (string, error) {
		set, err := o.Strings(append(slices.Clip(shaping), others...)...)
		var version strings.Builder
		for _, k := range shaping {
			if v := set[k]; v != "" {
				fmt.Fprintf(&version, "%s.%s: %s\n", o.Name(), k, v)
			}
		}
		return version.String(), err
	}
}

// load loads an in-memory project of the given files plus refill.yml.
func load(t testing.TB, files map[string]string) (*Project, error) {
	t.Helper()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte(testProjectYML)}}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return Load(fsys, LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Adapters: testAdapters})
}

func mustLoad(t testing.TB, files map[string]string) *Project {
	t.Helper()
	p, err := load(t, files)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

func mustModel(t testing.TB, p *Project, name string) *Model {
	t.Helper()
	m, err := p.Model(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func date(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func keys(parts []Partition) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Key
	}
	return out
}
