package snowflake_test

import (
	"database/sql/driver"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/adapters/snowflake"
)

// openFake opens the adapter on a fake account whose statements f answers,
// recorded by rec.
func openFake(t *testing.T, s adaptertest.Schemas, rec *recorder.Recorder, f *fakeSnowflake) *snowflake.Adapter {
	t.Helper()
	env := map[string]string{snowflake.EnvPassword: "not-a-real-password"}
	a, err := snowflake.Open(t.Context(), snowflake.Config{DSN: "refill@example-account/ANALYTICS/PUBLIC?warehouse=WH",
		Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Connector: func(driver.Connector) driver.Connector { return rec.Fake(f.answer) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// fakeSnowflake answers the adapter's statements as an account would,
// from its catalog: the schemas, tables and views earlier statements
// created, and their columns. It keeps no rows: every query of data
// returns none, but for those extra answers. fail, when set, may fail any
// statement instead.
type fakeSnowflake struct {
	mu      sync.Mutex
	schemas map[string]bool     // SCHEMA
	tables  map[string][]column // SCHEMA.TABLE -> columns
	fail    func(query string) error
	// extra, when set, answers the queries of data it knows (ok true).
	extra func(query string) (rows *recorder.Rows, ok bool)
	// warehouse is what CURRENT_WAREHOUSE() returns.
	warehouse string
}

// column is a column as gosnowflake describes it: its name and kind
// (FIXED, REAL, TEXT, DATE, TIMESTAMP_NTZ, BOOLEAN).
type column struct{ name, kind string }

func newFakeSnowflake() *fakeSnowflake {
	return &fakeSnowflake{schemas: map[string]bool{"PUBLIC": true}, tables: map[string][]column{}, warehouse: "WH"}
}

const relation = `(?:"[^"]*"\.)?"([^"]+)"\."([^"]+)"`

var (
	createSchemaRE = regexp.MustCompile(`^CREATE SCHEMA IF NOT EXISTS (?:"[^"]*"\.)?"([^"]+)"`)
	createTableRE  = regexp.MustCompile(`(?s)^CREATE (?:OR REPLACE )?(?:TRANSIENT )?TABLE (?:IF NOT EXISTS )?` + relation + `\s*(?:\((.*?)\)(?: CLUSTER BY .*)?|AS (.*))$`)
	createViewRE   = regexp.MustCompile(`(?s)^CREATE (?:OR REPLACE )?VIEW ` + relation + ` AS\s+SELECT .*? FROM ` + relation)
	dropRE         = regexp.MustCompile(`^DROP (?:TABLE|VIEW) IF EXISTS ` + relation)
	alterAddRE     = regexp.MustCompile(`^ALTER TABLE ` + relation + ` ADD COLUMN (?:IF NOT EXISTS )?"([^"]+)" (\S+)`)
	renameRE       = regexp.MustCompile(`^ALTER TABLE ` + relation + ` RENAME TO ` + relation)
	swapRE         = regexp.MustCompile(`^ALTER TABLE ` + relation + ` SWAP WITH ` + relation)
	limitZeroRE    = regexp.MustCompile(`(?s)^SELECT \* FROM ` + relation + ` LIMIT 0$`)
	describeRE     = regexp.MustCompile(`(?s)^SELECT \* FROM \(\n(.*)\n\) LIMIT 0$`)
	schemaNameRE   = regexp.MustCompile(`SCHEMA_NAME = '([^']*)'`)
	tableSchemaRE  = regexp.MustCompile(`TABLE_SCHEMA = '([^']*)'`)
	tableNameRE    = regexp.MustCompile(`TABLE_NAME = '([^']*)'`)
	tableNamesRE   = regexp.MustCompile(`TABLE_NAME IN \(([^)]*)\)`)
	selectListRE   = regexp.MustCompile(`(?s)SELECT (.*?) FROM `)
)

// answer plays Snowflake for one statement.
func (f *fakeSnowflake) answer(query string, _ []any) (*recorder.Rows, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(query); err != nil {
			return nil, err
		}
	}
	if f.extra != nil {
		if r, ok := f.extra(query); ok {
			return r, nil
		}
	}
	key := func(schema, table string) string { return schema + "." + table }
	switch m := match(query); {
	case query == snowflake.CurrentWarehouseSQL:
		return rows([]column{{"CURRENT_WAREHOUSE()", "TEXT"}}, []driver.Value{f.warehouse}), nil
	case m(createSchemaRE) != nil:
		f.schemas[m(createSchemaRE)[1]] = true
	case m(createTableRE) != nil:
		g := m(createTableRE)
		if g[3] != "" {
			f.tables[key(g[1], g[2])] = definedColumns(g[3])
		} else {
			f.tables[key(g[1], g[2])] = f.selected(g[4])
		}
	case m(createViewRE) != nil:
		g := m(createViewRE)
		f.tables[key(g[1], g[2])] = f.tables[key(g[3], g[4])]
	case m(dropRE) != nil:
		delete(f.tables, key(m(dropRE)[1], m(dropRE)[2]))
	case m(alterAddRE) != nil:
		g := m(alterAddRE)
		f.tables[key(g[1], g[2])] = append(f.tables[key(g[1], g[2])], column{g[3], kindOf(g[4])})
	case m(renameRE) != nil:
		g := m(renameRE)
		f.tables[key(g[3], g[4])] = f.tables[key(g[1], g[2])]
		delete(f.tables, key(g[1], g[2]))
	case m(swapRE) != nil:
		g := m(swapRE)
		a, b := key(g[1], g[2]), key(g[3], g[4])
		f.tables[a], f.tables[b] = f.tables[b], f.tables[a]
	case m(limitZeroRE) != nil:
		cols, ok := f.tables[key(m(limitZeroRE)[1], m(limitZeroRE)[2])]
		if !ok {
			return nil, &fakeError{"002003 (42S02): SQL compilation error: Object does not exist or not authorized."}
		}
		return rows(cols), nil
	case strings.HasPrefix(query, "WITH refill_old AS ("):
		// A diff (sqlkit.DiffSQL): nothing differs, and no examples.
		cols := []column{{"ONLY_OLD", "FIXED"}, {"ONLY_NEW", "FIXED"}, {"CHANGED", "FIXED"}, {"SAME", "FIXED"}}
		vals := []driver.Value{"0", "0", "0", "1"}
		for range strings.Count(query, "CAST(sum(") {
			cols, vals = append(cols, column{"SUM", "REAL"}), append(vals, "1")
		}
		for range strings.Count(query, "min_by(") {
			cols, vals = append(cols, column{"EXAMPLES", "ARRAY"}), append(vals, "[]")
		}
		if strings.HasSuffix(query, "NULL\nFROM refill_pairs") {
			cols, vals = append(cols, column{"EXAMPLES", "ARRAY"}), append(vals, nil)
		}
		return rows(cols, vals), nil
	case m(describeRE) != nil:
		return rows(f.selected(m(describeRE)[1])), nil
	case strings.Contains(query, ".SCHEMATA") || strings.Contains(query, "INFORMATION_SCHEMA.SCHEMATA"):
		return count(f.schemas[m(schemaNameRE)[1]]), nil
	case strings.Contains(query, "INFORMATION_SCHEMA.TABLES") && m(tableNameRE) != nil:
		_, ok := f.tables[key(m(tableSchemaRE)[1], m(tableNameRE)[1])]
		return count(ok), nil
	case strings.Contains(query, "INFORMATION_SCHEMA.TABLES") && m(tableNamesRE) != nil:
		n := 0
		for _, name := range strings.Split(m(tableNamesRE)[1], ", ") {
			if _, ok := f.tables[key(m(tableSchemaRE)[1], strings.Trim(name, "'"))]; ok {
				n++
			}
		}
		return rows([]column{{"COUNT(*)", "FIXED"}}, []driver.Value{strconv.Itoa(n)}), nil
	case strings.HasPrefix(query, "SELECT TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.TABLES"):
		var vals [][]driver.Value
		for _, k := range slices.Sorted(maps.Keys(f.tables)) { // as ORDER BY TABLE_NAME
			if schema, name, _ := strings.Cut(k, "."); schema == m(tableSchemaRE)[1] {
				vals = append(vals, []driver.Value{name, "BASE TABLE"})
			}
		}
		return rows([]column{{"TABLE_NAME", "TEXT"}, {"TABLE_TYPE", "TEXT"}}, vals...), nil
	}
	return nil, nil
}

// match returns a function matching query against a regular expression.
func match(query string) func(*regexp.Regexp) []string {
	return func(re *regexp.Regexp) []string { return re.FindStringSubmatch(query) }
}

// selected returns the columns of a query: the select list of its first
// SELECT, or the table it reads with SELECT *.
func (f *fakeSnowflake) selected(query string) []column {
	if g := regexp.MustCompile(`(?s)^SELECT \* FROM \(\n(.*)\n\)$`).FindStringSubmatch(query); g != nil {
		query = g[1]
	}
	if g := regexp.MustCompile(`^SELECT \* FROM ` + relation).FindStringSubmatch(query); g != nil {
		return f.tables[g[1]+"."+g[2]]
	}
	g := selectListRE.FindStringSubmatch(query)
	if g == nil {
		return nil
	}
	var cols []column
	for _, item := range strings.Split(g[1], ", ") {
		name := item
		if i := strings.LastIndex(item, " AS "); i >= 0 {
			name = item[i+4:]
		}
		name = strings.ToUpper(strings.Trim(name, `"`))
		kind := "FIXED"
		switch name {
		case "D":
			kind = "DATE"
		case "TS":
			kind = "TIMESTAMP_NTZ"
		case "REGION":
			kind = "TEXT"
		}
		cols = append(cols, column{name, kind})
	}
	return cols
}

// definedColumns reads the columns of a CREATE TABLE's definitions.
func definedColumns(defs string) []column {
	var cols []column
	for _, def := range strings.Split(defs, ",\n") {
		name, typ, _ := strings.Cut(strings.TrimSpace(def), " ")
		cols = append(cols, column{strings.Trim(name, `"`), kindOf(typ)})
	}
	return cols
}

// kindOf maps a type as a table declares it to the kind gosnowflake
// reports.
func kindOf(typ string) string {
	base, _, _ := strings.Cut(strings.ToUpper(typ), "(")
	switch base {
	case "NUMBER", "DECIMAL", "INT", "INTEGER", "BIGINT":
		return "FIXED"
	case "FLOAT", "DOUBLE", "REAL":
		return "REAL"
	case "VARCHAR", "STRING", "TEXT":
		return "TEXT"
	}
	return base
}

func rows(cols []column, values ...[]driver.Value) *recorder.Rows {
	r := &recorder.Rows{Values: values}
	for _, c := range cols {
		r.Columns = append(r.Columns, recorder.Column{Name: c.name, Type: c.kind, Scaled: c.kind == "FIXED"})
	}
	return r
}

// count is the one-number answer of a COUNT(*) of catalog rows.
func count(exists bool) *recorder.Rows {
	n := "0"
	if exists {
		n = "1"
	}
	return rows([]column{{"COUNT(*)", "FIXED"}}, []driver.Value{n})
}

// fakeError is an error as Snowflake would raise it.
type fakeError struct{ msg string }

func (e *fakeError) Error() string { return e.msg }
