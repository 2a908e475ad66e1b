package enginetest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// engine is a real warehouse that a portability test runs on.
type engine struct {
	name string
	// open returns an adapter and its default schema, fresh for t.
	open func(t *testing.T) (adapters.Adapter, string)
}

// engines returns DuckDB and ClickHouse; a test skips ClickHouse unless
// CLICKHOUSE_DSN names a server.
func engines() []engine {
	return []engine{
		{name: "duckdb", open: func(t *testing.T) (adapters.Adapter, string) {
			a, err := duckdb.Open(t.Context(), duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			return a, "main"
		}},
		{name: "clickhouse", open: func(t *testing.T) (adapters.Adapter, string) {
			s := schemas(t)
			return openClickHouse(t, s, nil), s.Default
		}},
	}
}

// helperCase is one template helper applied to literals, or to a row of
// the table of texts, with the value every engine must return.
type helperCase struct {
	name string
	sql  func(d models.Dialect, texts models.Relation, id int) string // the query
	text any                                                          // the case's text (a string or nil), when it reads the table of texts
	want any                                                          // nil, int64, float64, string, or time.Time
}

// tryCast casts the text s (nil for NULL), a row of a table's varchar
// column, to typ.
func tryCast(s any, typ string, want any) helperCase {
	t, err := models.ParseColumnType(typ)
	if err != nil {
		panic(err)
	}
	return helperCase{name: fmt.Sprintf("try_cast(%q, %s)", s, typ), text: s, want: want,
		sql: func(d models.Dialect, texts models.Relation, id int) string {
			return fmt.Sprintf("SELECT %s FROM %s WHERE %s = %d", d.TryCast(d.QuoteIdent("s"), t), texts.Quote(d), d.QuoteIdent("id"), id)
		}}
}

// dateDiff counts unit boundaries from a to b, dates or timestamps
// written "2006-01-02" or "2006-01-02 15:04".
func dateDiff(unit string, a, b string, want int64) helperCase {
	g, err := models.ParseUnit(unit)
	if err != nil {
		panic(err)
	}
	return helperCase{name: fmt.Sprintf("date_diff(%s, %s, %s)", unit, a, b), want: want, sql: func(d models.Dialect, _ models.Relation, _ int) string {
		return "SELECT " + d.DateDiff(g, literal(d, a), literal(d, b))
	}}
}

// dateTrunc truncates a date or timestamp (written as dateDiff's are) to
// the start of its period of unit.
func dateTrunc(unit, a, want string) helperCase {
	g, err := models.ParseUnit(unit)
	if err != nil {
		panic(err)
	}
	w, err := time.Parse("2006-01-02", want)
	if err != nil {
		panic(err)
	}
	return helperCase{name: fmt.Sprintf("date_trunc(%s, %s)", unit, a), want: w, sql: func(d models.Dialect, _ models.Relation, _ int) string {
		return "SELECT " + d.DateTrunc(g, literal(d, a))
	}}
}

// literal renders "2006-01-02" as a date and "2006-01-02 15:04" as a
// timestamp.
func literal(d models.Dialect, s string) string {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return d.Date(t)
	}
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return d.Timestamp(t)
}

// stringAgg aggregates rows of (v, o): v text or NULL, o an integer.
func stringAgg(ordered bool, want string, rows ...[2]any) helperCase {
	return helperCase{name: fmt.Sprintf("string_agg(%v, ordered %v)", rows, ordered), want: want, sql: func(d models.Dialect, _ models.Relation, _ int) string {
		from := ""
		for i, r := range rows {
			v := "NULL"
			if r[0] != nil {
				v = d.QuoteString(r[0].(string))
			}
			if d.Name() == "clickhouse" {
				v = "CAST(" + v + " AS Nullable(String))"
			} else {
				v = "CAST(" + v + " AS VARCHAR)"
			}
			if i > 0 {
				from += " UNION ALL "
			}
			from += fmt.Sprintf("SELECT %s AS v, %d AS o", v, r[1])
		}
		order := ""
		if ordered {
			order = "o"
		}
		return fmt.Sprintf("SELECT %s FROM (%s) AS t", d.StringAgg("v", d.QuoteString(", "), order), from)
	}}
}

// helperCases are the portable helpers' contract: the same value on every
// engine, for clean and for dirty input.
var helperCases = []helperCase{
	dateDiff("day", "2024-01-01", "2024-03-01", 60),
	dateDiff("day", "2024-03-01", "2024-01-01", -60),
	dateDiff("day", "2024-01-01 23:00", "2024-01-02 01:00", 1),
	dateDiff("day", "2024-01-01", "2024-01-03 05:00", 2),
	dateDiff("week", "2024-01-07", "2024-01-08", 1), // Sunday to Monday crosses a week
	dateDiff("week", "2024-01-01", "2024-01-07", 0),
	dateDiff("week", "2024-01-08", "2024-01-01", -1),
	dateDiff("sunday_week", "2024-01-06", "2024-01-07", 1), // Saturday to Sunday crosses a week from Sunday
	dateDiff("sunday_week", "2024-01-07", "2024-01-13", 0),
	dateDiff("sunday_week", "2024-01-14", "2024-01-07", -1),
	dateDiff("sunday_week", "2024-12-28", "2025-01-04 12:00", 1), // across the year's end
	dateDiff("sunday_week", "2023-12-30", "2023-12-31", 1),
	dateTrunc("week", "2024-12-31", "2024-12-30"),
	dateTrunc("week", "2021-01-03", "2020-12-28"),
	dateTrunc("sunday_week", "2024-12-31", "2024-12-29"),
	dateTrunc("sunday_week", "2023-12-31", "2023-12-31"), // a Sunday starts its own week
	dateTrunc("sunday_week", "2024-01-06 13:00", "2023-12-31"),
	dateTrunc("sunday_week", "2025-01-04", "2024-12-29"),
	dateTrunc("month", "2024-02-29 23:00", "2024-02-01"),
	dateDiff("month", "2024-01-31", "2024-02-01", 1),
	dateDiff("year", "2023-12-31", "2024-01-01", 1),
	dateDiff("hour", "2024-01-01 23:59", "2024-01-02 00:01", 1),
	dateDiff("hour", "2024-01-01", "2024-01-02", 24),

	tryCast("12", "bigint", int64(12)),
	tryCast(" 12 ", "bigint", int64(12)),
	tryCast("+3", "bigint", int64(3)),
	tryCast("-3", "bigint", int64(-3)),
	tryCast("1.5", "bigint", int64(2)),
	tryCast("-2.5", "bigint", int64(-3)),
	tryCast(".5", "bigint", int64(1)),
	tryCast("12.", "bigint", int64(12)),
	tryCast("1234567890123456789", "bigint", int64(1234567890123456789)),
	tryCast("9223372036854775807", "bigint", int64(math.MaxInt64)),
	tryCast("-9223372036854775808", "bigint", int64(math.MinInt64)),
	tryCast("9223372036854775808", "bigint", nil), // 18.16's toInt64OrNull wraps this
	tryCast("99999999999999999999", "bigint", nil),
	tryCast("abc", "bigint", nil),
	tryCast("12abc", "bigint", nil),
	tryCast("", "bigint", nil),
	tryCast(nil, "bigint", nil),
	tryCast("1700000000", "integer", int64(1700000000)),
	tryCast("2147483647", "integer", int64(math.MaxInt32)),
	tryCast("2147483648", "integer", nil),
	tryCast("-2147483649", "integer", nil),

	tryCast("1.5", "double", 1.5),
	tryCast(" -0.25 ", "double", -0.25),
	tryCast("1e3", "double", 1000.0),
	tryCast("1,5", "double", nil),
	tryCast("n/a", "double", nil),

	tryCast("12.50", "decimal(18,2)", 12.5),
	tryCast(" 7.5 ", "decimal(18,2)", 7.5),
	tryCast("1.255", "decimal(18,2)", 1.26), // rounded half away from zero
	tryCast("-1.245", "decimal(18,2)", -1.25),
	tryCast("-.5", "decimal(18,2)", -0.5),
	tryCast("99.99", "decimal(4,2)", 99.99),
	tryCast("99.995", "decimal(4,2)", nil), // rounds to 100.00, which does not fit
	tryCast("123.4", "decimal(4,2)", nil),
	tryCast("n/a", "decimal(18,2)", nil),
	tryCast("", "decimal(18,2)", nil),

	tryCast("2024-01-02", "date", adaptertest.Day("2024-01-02")),
	tryCast(" 2024-01-02 ", "date", adaptertest.Day("2024-01-02")),
	tryCast("2024-01-02 10:00:00", "date", adaptertest.Day("2024-01-02")),
	tryCast("2024-02-30", "date", nil), // 18.16's toDateOrNull reads 2024-03-01
	tryCast("unknown", "date", nil),
	tryCast("", "date", nil),

	tryCast("2024-01-02 03:04:05", "timestamp", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)),
	tryCast("2024-01-02T03:04:05", "timestamp", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)),
	tryCast("2024-01-02", "timestamp", adaptertest.Day("2024-01-02")),
	tryCast("2024-01-02 03:04", "timestamp", time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC)),
	tryCast("2024-01-02 25:00:00", "timestamp", nil),
	tryCast("2024-02-30 00:00:00", "timestamp", nil),
	tryCast("soon", "timestamp", nil),

	tryCast("true", "boolean", int64(1)),
	tryCast("F", "boolean", int64(0)),
	tryCast("yes", "boolean", int64(1)),
	tryCast("n", "boolean", int64(0)),
	tryCast("1", "boolean", int64(1)),
	tryCast("maybe", "boolean", nil),

	tryCast("12", "varchar", "12"),

	stringAgg(true, "a, b, c", [2]any{"b", 2}, [2]any{nil, 0}, [2]any{"c", 3}, [2]any{"a", 1}),
	stringAgg(false, "x", [2]any{"x", 1}, [2]any{nil, 2}),
	stringAgg(false, "", [2]any{nil, 1}),
	stringAgg(true, "", [2]any{nil, 1}),
}

// TestPortableHelpers runs every helper case on every engine. The casts
// read a table's column, as models do, rather than constants, which
// ClickHouse folds differently.
func TestPortableHelpers(t *testing.T) {
	texts := &models.Seed{Columns: []models.Column{{Name: "id", Type: models.TypeInt}, {Name: "s", Type: models.TypeString, Nullable: true}}}
	for i, c := range helperCases {
		if c.text != nil || strings.HasPrefix(c.name, "try_cast") {
			texts.Rows = append(texts.Rows, []any{int64(i), c.text})
		}
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			if e.name == "clickhouse" {
				clickhouseDSN(t)
			}
			a, schema := e.open(t)
			d := a.Dialect()
			rel := models.Relation{Schema: schema, Name: "texts"}
			if err := adapters.LoadSeed(t.Context(), a, texts, rel); err != nil {
				t.Fatal(err)
			}
			for i, c := range helperCases {
				q := c.sql(d, rel, i)
				res, err := a.Query(t.Context(), q, adapters.Tag{})
				if err != nil {
					t.Errorf("%s: %v\n%s", c.name, err, q)
					continue
				}
				if got := comparable(res.Rows[0][0]); got != comparable(c.want) {
					t.Errorf("%s = %v (%T), want %v\n%s", c.name, got, got, c.want, q)
				}
			}
		})
	}
}

// comparable maps a result value to what the helpers' contract compares:
// booleans as 0 and 1 (ClickHouse stores them as UInt8), floats rounded
// to 9 decimals (decimals arrive as floats).
func comparable(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	case float64:
		return math.Round(v*1e9) / 1e9
	case time.Time:
		return v.UTC().Format(time.DateTime)
	}
	return v
}

// portableDir is the README cookbook's portable project.
const portableDir = "../../testdata/portable"

// loadPortable loads the portable project.
func loadPortable(t *testing.T) *models.Project {
	t.Helper()
	p, err := models.Load(os.DirFS(portableDir), models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false },
		Adapters: []models.AdapterKeys{{Name: "duckdb", TargetKeys: []string{"path"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPortableModel runs the README's portable model, unchanged, on every
// engine, and compares what each one published.
func TestPortableModel(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(portableDir, "models/daily_visits.sql"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```sql\n"+string(text)+"```\n") {
		t.Errorf("README.md does not show testdata/portable/models/daily_visits.sql as it is, in a sql block")
	}
	// DuckDB is the reference; the values are the helpers' contract.
	want := [][]any{
		{"2024-01-01", int64(1), int64(3), "2024-01-01 09:00:00", "home > docs > pricing", int64(7), 12.5, int64(2)},
		{"2024-01-01", int64(2), int64(1), "2024-01-01 23:00:00", "blog", nil, 7.5, int64(0)},                    // the signup date is "unknown"
		{"2024-01-02", int64(2), int64(1), "2024-01-02 00:00:00", "docs", int64(1), 1.26, int64(0)},              // "1.255", rounded
		{"2024-01-02", int64(3), int64(2), "2024-01-02 12:00:00", "pricing > signup", nil, int64(100), int64(1)}, // signed up on 2024-02-30; 100.00 reads as 100
		{"2024-01-03", int64(1), int64(1), "2024-01-03 08:00:00", "docs", int64(9), -3.1, int64(0)},
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			if e.name == "clickhouse" {
				clickhouseDSN(t)
			}
			a, schema := e.open(t)
			got := runPortable(t, a, schema, e.name)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("daily_visits on %s (-want +got):\n%s", e.name, diff)
			}
		})
	}
}

// runPortable seeds the portable project into schema, backfills it with
// the runner and returns the model's rows, normalized and sorted.
func runPortable(t *testing.T, a adapters.Adapter, schema, target string) [][]any {
	t.Helper()
	ctx := t.Context()
	p := loadPortable(t)
	seeds, err := p.LoadSeeds(os.DirFS(portableDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		if err := adapters.LoadSeed(ctx, a, seed, models.Relation{Schema: schema, Name: seed.Relation.Name}); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: schema, Vars: p.Vars, Target: target}}, Target: target}
	pl, err := r.Plan(ctx, plan.Selection{Now: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(ctx, pl, runner.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range sum.Partitions {
		if pr.Err != nil {
			t.Fatalf("%s %s: %v", pr.Model, pr.Partition, pr.Err)
		}
	}
	if sum.Succeeded != 3 {
		t.Fatalf("%d partitions ran, want 3", sum.Succeeded)
	}
	d := a.Dialect()
	cols := []string{"day", "user_id", "events", "first_hour", "path", "days_since_signup", "revenue", "unparsed_amounts"}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = d.QuoteIdent(c)
	}
	res, err := a.Query(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s, %s", strings.Join(quoted, ", "),
		models.Relation{Schema: schema, Name: "daily_visits"}.Quote(d), quoted[0], quoted[1]), adapters.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]any, len(res.Rows))
	for i, row := range res.Rows {
		rows[i] = make([]any, len(row))
		for j, v := range row {
			rows[i][j] = comparable(v)
			if tm, ok := v.(time.Time); ok && j == 0 {
				rows[i][j] = tm.Format(time.DateOnly)
			}
		}
	}
	return rows
}

// TestRenderPortable pins the portable model's SQL in every dialect,
// Snowflake's included, which no test here runs.
func TestRenderPortable(t *testing.T) {
	p := loadPortable(t)
	m, err := p.Model("daily_visits")
	if err != nil {
		t.Fatal(err)
	}
	part, err := m.Partition("2024-01-02")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []models.Dialect{duckdb.Dialect{}, clickhouse.Dialect{}, snowflake.Dialect{}} {
		sql, err := m.Render(&models.Scope{Dialect: d, Schema: "analytics", Vars: p.Vars, Target: "prod"}, part)
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		adaptertest.Golden(t, "testdata/portable/"+d.Name()+".sql", sql+";\n")
	}
}
