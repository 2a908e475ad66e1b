package models

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const dailyRevenue = `/* refill
partition_by: order_date   # output column holding the partition key
grain: day
start: 2024-01-01
tags: [finance]
*/
SELECT order_date, count(*) AS orders, sum(amount) AS revenue
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
  AND amount >= {{ var("min_amount") }}
GROUP BY order_date
`

func TestRender(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{
		"models/marts/daily_revenue.sql": dailyRevenue,
		"models/marts/weekly.sql": `/* refill
partition_by: week_start
grain: week
start: 2024-01-01
depends_on_past: {self: true, daily_revenue: 1}
columns: {week_start: date, k: varchar}
*/
SELECT {{ partition }} AS k, {{ date_add(start, -6, "day") }} AS six_back,
       {{ date_trunc("month", start) }} AS month_start,
       {{ date_trunc("month", ident("order_date")) }} AS trunc_col,
       {{ cast_timestamp(end) }} AS end_ts, {{ this }} AS me, {{ raw("1 + 1") }} AS two,
       {{ var("region") }} AS region, {{ ["a", "it's"] }} AS list
FROM {{ ref("daily_revenue") }}`,
		"models/by_region.sql": "/* refill\npartition_by: region\nvalues: [eu, us]\n*/\nSELECT {{ partition }} AS region FROM {{ ref(\"marts.daily_revenue\") }}",
	})
	s := &Scope{Dialect: ansi{}, Schema: "main", Vars: p.Vars}
	m := mustModel(t, p, "marts.daily_revenue")
	part, err := m.Partition("2024-01-02")
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Render(s, part)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT order_date, count(*) AS orders, sum(amount) AS revenue
FROM "raw"."orders"
WHERE order_date >= DATE '2024-01-02' AND order_date < DATE '2024-01-03'
  AND amount >= 10
GROUP BY order_date`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render (-want +got):\n%s", diff)
	}

	w := mustModel(t, p, "weekly")
	wp, _ := w.Partition("2024-W02")
	got, err = w.Render(s, wp)
	if err != nil {
		t.Fatal(err)
	}
	want = `SELECT '2024-W02' AS k, DATE '2024-01-02' AS six_back,
       DATE '2024-01-01' AS month_start,
       date_trunc('month', "order_date") AS trunc_col,
       TIMESTAMP '2024-01-15 00:00:00' AS end_ts, "marts"."weekly" AS me, 1 + 1 AS two,
       'eu' AS region, ('a', 'it''s') AS list
FROM "marts"."daily_revenue"`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render weekly (-want +got):\n%s", diff)
	}

	r := mustModel(t, p, "by_region")
	rp, err := r.Partition("us")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = r.Render(s, rp)
	if want := `SELECT 'us' AS region FROM "marts"."daily_revenue"`; got != want {
		t.Errorf("list render = %q, want %q", got, want)
	}
	if len(w.Upstream) != 1 || w.Upstream[0] != m {
		t.Errorf("weekly upstream = %v, want [%s]", w.Upstream, m.Name)
	}
}

func TestRenderBatchSpansWindows(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/d.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nbatch: 7\n*/\nSELECT {{ start }}, {{ end }}, {{ partitions }}"})
	m := mustModel(t, p, "d")
	parts := m.Partitions(date("2024-01-01"), date("2024-01-03"))
	got, err := m.Render(&Scope{Dialect: ansi{}}, parts...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT DATE '2024-01-01', DATE '2024-01-04', ('2024-01-01', '2024-01-02', '2024-01-03')"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestUnsetVarsBlockOnlyTheirModel: a var with no value is an error of
// the model that reads it, at its position, not of the project: the other
// models still load and run.
func TestUnsetVarsBlockOnlyTheirModel(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/m.sql": "SELECT {{ var(\"nope\") }}", "models/other.sql": "SELECT 1"})
	m, other := mustModel(t, p, "m"), mustModel(t, p, "other")
	err := p.Unset()
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(err.Error(), `models/m.sql:1:11: var("nope") is not set`) {
		t.Errorf("Unset() = %v", err)
	}
	if p.Unset(other) != nil || p.Unset(m) == nil {
		t.Errorf("Unset(other) = %v, Unset(m) = %v", p.Unset(other), p.Unset(m))
	}
}

func TestVarsAreQuotedLiterals(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/v.sql": "SELECT * FROM t WHERE region = {{ var(\"region\") }}"})
	m := mustModel(t, p, "v")
	s := &Scope{Dialect: ansi{}, Vars: map[string]any{"region": "eu'; DROP TABLE t; --"}}
	got, err := m.Render(s, Partition{Key: WholeTableKey})
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT * FROM t WHERE region = 'eu''; DROP TABLE t; --'`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if ParseScalar("10") != 10 || ParseScalar("eu") != "eu" || ParseScalar("1.5") != 1.5 || ParseScalar("it's") != "it's" {
		t.Error("ParseScalar does not read CLI values as YAML scalars")
	}
}

func TestTimeZoneWindowsRenderInUTC(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/local.sql": "/* refill\npartition_by: ts\ngrain: day\nstart: 2024-03-01\ntimezone: Europe/Berlin\n*/\nSELECT {{ start }}, {{ end }}, {{ cast_date(start) }}"})
	m := mustModel(t, p, "local")
	part, err := m.Partition("2024-03-31")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Render(&Scope{Dialect: ansi{}}, part)
	if want := "SELECT TIMESTAMP '2024-03-30 23:00:00', TIMESTAMP '2024-03-31 22:00:00', DATE '2024-03-31'"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := part.End.Sub(part.Start); got != 23*time.Hour {
		t.Errorf("the spring-forward day lasts %v", got)
	}
}

// TestModelErrors checks that each mistake is reported at file:line:col.
func TestModelErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"typo", "/* refill\npartiton_by: order_date\ngrain: day\n*/\nSELECT 1",
			`models/m.sql:2:1: unknown key "partiton_by" in model config (did you mean "partition_by"?)`},
		{"bad grain", "/* refill\npartition_by: d\ngrain: dya\nstart: 2024-01-01\n*/\nSELECT 1",
			`models/m.sql:3:8: unknown grain "dya" (want hour, day, week, month or year) (did you mean "day"?)`},
		{"bad start", "/* refill\npartition_by: d\ngrain: day\nstart: 2024-13-01\n*/\nSELECT 1",
			`models/m.sql:4:8: start: invalid date or partition key "2024-13-01": month out of range`},
		{"no start", "/* refill\npartition_by: d\ngrain: day\n*/\nSELECT 1",
			`a time-partitioned model needs start`},
		{"bad yaml", "/* refill\npartition_by: [d\n*/\nSELECT 1", `invalid YAML: did not find expected`},
		{"template syntax", "SELECT 1\nFROM t WHERE x = {{ start + }}", `models/m.sql:2:27: template: unexpected token EOF`},
		{"unknown name", "SELECT {{ strat }}", `models/m.sql:1:11: template: unknown name strat`},
		{"start on table model", "SELECT {{ start }}", `models/m.sql:1:11: template: unknown name start`},
		{"unknown ref", "SELECT * FROM {{ ref(\"nope\") }}", `models/m.sql:1:18: ref("nope"): unknown model "nope"`},
		{"dynamic ref", "SELECT * FROM {{ ref(var(\"region\")) }}", `models/m.sql:1:18: template: ref() needs a name in quotes`},
		{"unclosed", "SELECT {{ 1", `models/m.sql:1:8: unclosed {{`},
		{"empty", "/* refill\n*/\n", `the model has no SQL`},
		{"batch partition", "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nbatch: 3\n*/\nSELECT {{ partition }}", `cannot use partition`},
		{"grain and values", "/* refill\npartition_by: d\ngrain: day\nvalues: [a]\nstart: 2024-01-01\n*/\nSELECT 1", `models/m.sql:3:8: a model has either grain`},
		{"audit", "/* refill\naudits:\n  - not_nul: [a]\n*/\nSELECT 1", `models/m.sql:3:5: unknown key "not_nul" in audit (did you mean "not_null"?)`},
		{"unique_key name", "/* refill\nunique_key: [id, \"a b\"]\n*/\nSELECT 1 AS id", `models/m.sql:2:13: unique_key must name columns, not "a b"`},
		{"unique_key column", "/* refill\nunique_key: idd\ncolumns:\n  id: bigint\n*/\nSELECT 1 AS id", `models/m.sql:2:13: unique_key idd is not among the declared columns`},
		{"hour tz", "/* refill\npartition_by: d\ngrain: hour\nstart: 2024-01-01\ntimezone: Europe/Berlin\n*/\nSELECT 1", `models/m.sql:5:11: hour partitions are always UTC`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"models/m.sql": tc.text})
			if err == nil {
				t.Fatalf("loaded without error; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Errorf("error is a %T, not an ErrorList", err)
			}
		})
	}
}

func TestErrorQuotesTheLine(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{"models/m.sql": "/* refill\npartiton_by: d\n*/\nSELECT 1"})
	want := "models/m.sql:2:1: unknown key \"partiton_by\" in model config (did you mean \"partition_by\"?)\n     2 | partiton_by: d\n       | ^"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestValidateCollectsEveryError(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{
		"models/a.sql": "SELECT {{ nope }}",
		"models/b.sql": "/* refill\ngrian: day\n*/\nSELECT 1",
	})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if list[0].File != "models/a.sql" || list[1].File != "models/b.sql" {
		t.Errorf("errors not sorted by file: %v", err)
	}
}

// A model's version ignores formatting but not meaning: a reflowed model
// is not stale, a changed literal, var or table is.
func TestVersion(t *testing.T) {
	t.Parallel()
	version := func(text string, vars map[string]any, schema string) *Version {
		t.Helper()
		p := mustLoad(t, map[string]string{"models/d.sql": text})
		s := &Scope{Dialect: ansi{}, Schema: schema, Vars: p.Vars}
		for k, v := range vars {
			s.Vars[k] = v
		}
		return mustModel(t, p, "d").Version(s)
	}
	base := version(dailyRevenue, nil, "main")
	if len(base.Fingerprint) != 16 || !strings.Contains(base.Text, "var: min_amount = 10") || !strings.Contains(base.Text, "sum(amount)") {
		t.Errorf("version %s:\n%s", base.Fingerprint, base.Text)
	}
	reflowed := strings.NewReplacer("SELECT ", "SELECT\n  -- the day's figures\n  ", ", ", " ,\n  ", "GROUP BY", "\n/* one row a day */\nGROUP   BY").Replace(dailyRevenue)
	if v := version(reflowed, nil, "main"); v.Fingerprint != base.Fingerprint {
		t.Errorf("reflowing the model changed its version:\n%s", reflowed)
	} else if v.Text == base.Text {
		t.Error("the version text is not the model as written")
	}
	for name, v := range map[string]*Version{
		"a literal":   version(strings.Replace(dailyRevenue, "count(*)", "count(*) + 1", 1), nil, "main"),
		"a source":    version(strings.Replace(dailyRevenue, `source("raw.orders")`, `source("raw.orders_v2")`, 1), nil, "main"),
		"a var value": version(dailyRevenue, map[string]any{"min_amount": 11}, "main"),
		"the schema":  version(dailyRevenue, nil, "analytics"),
	} {
		if v.Fingerprint == base.Fingerprint {
			t.Errorf("changing %s keeps the version", name)
		}
	}
}

// A model that reads its own past must say so, declare its columns, and
// not be batched.
func TestSelfDependency(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT * FROM {{ this }}":                                      "models/m.sql:6:18: the model reads its own table ({{ this }}): declare depends_on_past: self",
		"/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ndepends_on_past: self\n*/\nSELECT * FROM {{ this }}":               "needs columns:",
		"/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ndepends_on_past: self\nbatch: 7\ncolumns: {d: date}\n*/\nSELECT 1": "cannot be batched",
		"/* refill\ndepends_on_past: self\ncolumns: {d: date}\n*/\nSELECT 1":                                                           "applies only to time-partitioned models",
	} {
		if _, err := load(t, map[string]string{"models/m.sql": text}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", text, err, want)
		}
	}
	p := mustLoad(t, map[string]string{"models/m.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ndepends_on_past: self\ncolumns: {d: date}\n*/\nSELECT d FROM {{ this }}"})
	if m := mustModel(t, p, "m"); !m.Config.Self || len(m.Upstream) != 0 {
		t.Errorf("self model: %+v", m.Config)
	}
}

// TestTargetNameInVersion: target.name renders the target's name, and a
// model that reads it has a version per target; one that does not keeps
// one version whatever the target.
func TestTargetNameInVersion(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{
		"models/by_target.sql": `SELECT {{ target.name == "prod" ? raw("1") : raw("0") }} AS live`,
		"models/plain.sql":     "SELECT 1 AS x",
	})
	byTarget, plain := mustModel(t, p, "by_target"), mustModel(t, p, "plain")
	dev, prod := &Scope{Dialect: ansi{}, Target: "dev"}, &Scope{Dialect: ansi{}, Target: "prod"}
	got, err := byTarget.Render(prod, Partition{Key: WholeTableKey})
	if err != nil || got != "SELECT 1 AS live" {
		t.Errorf("render on prod: %q, %v", got, err)
	}
	if byTarget.Version(dev).Fingerprint == byTarget.Version(prod).Fingerprint {
		t.Error("a model that reads target.name has one version for two targets")
	}
	if plain.Version(dev).Fingerprint != plain.Version(prod).Fingerprint {
		t.Error("a model that does not read target has a version per target")
	}
}

// TestRefreshRule: refresh: is for whole-table and list models, a mode or a
// duration; without it a model reading a source refreshes always, one
// declaring a watermark when it moves, and any other never.
func TestRefreshRule(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\nrefresh: 6h\n*/\nSELECT 1 AS d": "models/m.sql:5:10: refresh applies to whole-table and list models",
		"/* refill\nrefresh: sometimes\n*/\nSELECT 1":                                               `refresh must be always, never or a duration such as 6h or 1d, not "sometimes"`,
		"/* refill\nrefresh: 0h\n*/\nSELECT 1":                                                      "refresh must be always, never or a duration",
	} {
		if _, err := load(t, map[string]string{"models/m.sql": text}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", text, err, want)
		}
	}
	p := mustLoad(t, map[string]string{
		"models/src.sql":    `SELECT * FROM {{ source("raw.t") }}`,
		"models/plain.sql":  `SELECT * FROM {{ ref("src") }}`,
		"models/every.sql":  "/* refill\nrefresh: 1d\n*/\nSELECT * FROM {{ source(\"raw.t\") }}",
		"models/marked.sql": "/* refill\nwatermark: SELECT max(x) FROM {{ source(\"raw.t\") }}\n*/\nSELECT * FROM {{ source(\"raw.t\") }}",
		"models/never.sql":  "/* refill\nrefresh: never\n*/\nSELECT * FROM {{ source(\"raw.t\") }}",
	})
	for name, want := range map[string]string{"src": "always", "plain": "never", "every": "1d", "marked": "watermark", "never": "never"} {
		if got := mustModel(t, p, name).RefreshRule().String(); got != want {
			t.Errorf("%s: refresh %s, want %s", name, got, want)
		}
	}
}

// TestWarnings: validate warns, at the expression, when a local-date
// model compares a column other than its partition column with a DATE
// start or end, and when a model reads before its window without a
// depends_on_past that covers it.
func TestWarnings(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{
		"models/local.sql": "/* refill\npartition_by: day\ngrain: day\nstart: 2024-01-01\ntimezone: America/New_York\npartition_type: date\n*/\n" +
			"SELECT CAST(started_at AS DATE) AS day FROM {{ source(\"raw.trips\") }}\nWHERE started_at >= {{ start }} AND day < {{ end }}",
		"models/fine.sql": "/* refill\npartition_by: day\ngrain: day\nstart: 2024-01-01\ntimezone: America/New_York\npartition_type: date\n*/\n" +
			"SELECT CAST(started_at AS DATE) AS day FROM {{ source(\"raw.trips\") }}\nWHERE started_at >= {{ cast_timestamp(start) }} AND day < {{ end }}",
		"models/back.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT d FROM {{ ref(\"fine\") }}\nWHERE d >= {{ date_add(start, -7, \"day\") }} AND d < {{ end }}",
		"models/covered.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ndepends_on_past: 7\n*/\n" +
			"SELECT d FROM {{ ref(\"fine\") }}\nWHERE d >= {{ date_add(start, -7, \"day\") }} AND d < {{ end }}",
	})
	var got []string
	for _, w := range p.Warnings() {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"models/local.sql:9:24: local compares started_at with {{ start }}, a DATE of America/New_York (partition_type: date): if started_at is a timestamp",
		"models/back.sql:7:15: back reads 7 days before its window (date_add(start, -7, \"day\")) without a depends_on_past that covers it",
		"declare depends_on_past: 7",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d warnings, want 2 (none for fine and covered):\n%s", len(got), all)
	}
}

// TestLocate: a byte of the rendered statement maps to the file's line
// and column that rendered it: the character itself in literal SQL, the
// expression in what an expression rendered, whatever the expressions
// before it rendered.
func TestLocate(t *testing.T) {
	t.Parallel()
	text := "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT {{ start }} AS d,\n  {{ ref(\"up\") }}.x AS x\nFROM {{ ref(\"up\") }}\nWHERE bad"
	p := mustLoad(t, map[string]string{"models/m.sql": text, "models/up.sql": "SELECT 1 AS x"})
	m := mustModel(t, p, "m")
	s := &Scope{Dialect: ansi{}, Schema: "main", Vars: p.Vars}
	part, _ := m.Partition("2024-01-02")
	sql, err := m.Render(s, part)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("boom")
	for _, c := range []struct {
		at        string // the rendered text the offset is at
		line, col int
	}{
		{"SELECT", 6, 1},
		{"DATE '2024-01-02'", 6, 11}, // the expression: start
		{"'2024-01-02' AS", 6, 11},
		{"AS d", 6, 20},
		{`"main"."up".x`, 7, 6},
		{".x AS x", 7, 18},
		{"bad", 9, 7},
	} {
		off := strings.Index(sql, c.at)
		err := m.Locate(s, []Partition{part}, off, cause)
		var we *WarehouseError
		if !errors.As(err, &we) || we.At.Line != c.line || we.At.Col != c.col || !errors.Is(err, cause) {
			t.Errorf("offset of %q in\n%s\nis %v, want line %d col %d", c.at, sql, err, c.line, c.col)
		}
	}
	if err := m.Locate(s, []Partition{part}, -1, cause); err != cause {
		t.Errorf("an offset of -1 is %v, want the error as it was", err)
	}
}
