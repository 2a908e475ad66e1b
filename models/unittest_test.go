package models

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// unitProject is a project of a source loaded by a seed, a staging model
// with declared columns over it, and a mart over both.
var unitProject = map[string]string{
	"seeds/raw/payments.csv": "payment_id,day,amount,zip\n1,2024-01-01,10.5,00501\n",
	"seeds/raw/payments.yml": "columns:\n  zip: varchar\n",
	"models/staging/payments.sql": `/* refill
partition_by: day
grain: day
start: 2024-01-01
columns:
  day: date
  amount: double
  note: varchar
  tags: {duckdb: "VARCHAR[]"}
*/
SELECT day, amount, CAST(NULL AS VARCHAR) AS note, [] AS tags FROM {{ source("raw.payments") }}
WHERE day >= {{ start }} AND day < {{ end }}
`,
	"models/marts/totals.sql": `/* refill
partition_by: day
grain: day
start: 2024-01-01
*/
SELECT {{ start }} AS day, count(*) AS payments, sum(p.amount) AS amount
FROM {{ ref("staging.payments") }} AS p JOIN {{ source("raw.refunds") }} AS r ON true
WHERE p.day >= {{ start }} AND p.day < {{ end }}
`,
}

// loadUnitTests loads unitProject with the given test files added.
func loadUnitTests(t *testing.T, tests map[string]string) ([]*UnitTest, error) {
	t.Helper()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte(testProjectYML)}}
	for name, text := range unitProject {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	for name, text := range tests {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	p, err := Load(fsys, LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Adapters: testAdapters})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p.LoadUnitTests(fsys)
}

func mustLoadUnitTests(t *testing.T, tests map[string]string) []*UnitTest {
	t.Helper()
	uts, err := loadUnitTests(t, tests)
	if err != nil {
		t.Fatal(err)
	}
	return uts
}

// columnTypes describes a given table as "name type, ...".
func columnTypes(g Given) string {
	parts := make([]string, len(g.Seed.Columns))
	for i, c := range g.Seed.Columns {
		parts[i] = c.Name + " " + string(c.Type)
	}
	return strings.Join(parts, ", ")
}

func TestGivenTypes(t *testing.T) {
	t.Parallel()
	uts := mustLoadUnitTests(t, map[string]string{
		"models/marts/totals.test.yml": `
- name: typed by what the inputs declare
  partition: 2024-01-02
  given:
    staging.payments:                 # the model's columns: amount is a double though NULL
      - {day: 2024-01-02, amount: null}
    raw.refunds:                      # no seed: the test's columns, then the values
      columns: {refund_id: bigint, reason: varchar}
      rows:
        - {refund_id: 1, amount: null, code: "10", label: 10, empty: ""}
  expect: []
`,
		"models/staging/payments.test.yml": `
- name: a source loaded by a seed has the seed's columns
  partition: 2024-01-01
  given:
    raw.payments:
      - {payment_id: 1, day: 2024-01-01, zip: 501}
  expect: []
`,
	})
	if len(uts) != 2 {
		t.Fatalf("%d tests", len(uts))
	}
	byName := map[string]Given{}
	for _, ut := range uts {
		for _, g := range ut.Given {
			byName[g.Name] = g
		}
	}
	for name, want := range map[string]string{
		// The declared columns, all of them, in order (tags has no portable
		// type, and is not given).
		"staging.payments": "day date, amount double, note varchar",
		// The test's columns first, then the rows'; "10" quoted is a string.
		"raw.refunds": "refund_id bigint, reason varchar, amount varchar, code varchar, label bigint, empty varchar",
		// The seed's columns: zip as its YAML declares, the others as
		// refill seed infers them from the CSV.
		"raw.payments": "payment_id bigint, day date, amount double, zip varchar",
	} {
		g, ok := byName[name]
		if !ok {
			t.Errorf("no given %s", name)
			continue
		}
		if got := columnTypes(g); got != want {
			t.Errorf("given %s: columns %s, want %s", name, got, want)
		}
	}
	if g := byName["raw.refunds"]; strings.Join(g.Untyped, ",") != "amount" || g.Seed.Rows[0][3] != "10" || g.Seed.Rows[0][5] != "" {
		t.Errorf("raw.refunds: untyped %v, want [amount]; row %#v", g.Untyped, g.Seed.Rows[0])
	}
	if g := byName["staging.payments"]; len(g.Untyped) != 0 || g.Seed.Rows[0][1] != nil {
		t.Errorf("staging.payments: untyped %v, rows %v", g.Untyped, g.Seed.Rows)
	}
	if g := byName["raw.payments"]; g.Seed.Rows[0][3] != "501" {
		t.Errorf("raw.payments: zip %#v, want the string 501", g.Seed.Rows[0][3])
	}
}

func TestGivenEmpty(t *testing.T) {
	t.Parallel()
	uts := mustLoadUnitTests(t, map[string]string{
		"models/staging/payments.test.yml": `
- name: no payments
  partition: 2024-01-01
  given: []
  expect: []
- name: no payments, said per table
  partition: 2024-01-01
  given:
    raw.payments: []
  expect: []
`,
		"models/marts/totals.test.yml": `
- name: no refunds
  partition: 2024-01-01
  given:
    staging.payments: []
    raw.refunds: {columns: {refund_id: bigint}}
  expect: []
`,
	})
	var got []string
	for _, ut := range uts {
		for _, g := range ut.Given {
			got = append(got, g.Name+": "+columnTypes(g))
			if len(g.Seed.Rows) != 0 {
				t.Errorf("%s: given %s has %d rows", ut.Name, g.Name, len(g.Seed.Rows))
			}
		}
	}
	want := []string{
		"staging.payments: day date, amount double, note varchar",
		"raw.refunds: refund_id bigint",
		"raw.payments: payment_id bigint, day date, amount double, zip varchar",
		"raw.payments: payment_id bigint, day date, amount double, zip varchar",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("given tables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGivenErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, test string
		want       []string
		count      int // of errors, when not one per want
	}{
		{"empty without declared columns", `
- partition: 2024-01-01
  given: []
  expect: []
`, []string{"models/marts/totals.test.yml:3:10: given: [] leaves raw.refunds empty, but nothing types its columns",
			"seeds/raw/refunds.csv", "3 |   given: []"}, 1},
		{"no rows, no columns", `
- partition: 2024-01-01
  given:
    staging.payments: []
    raw.refunds: []
  expect: []
`, []string{"totals.test.yml:5:18: given raw.refunds has no columns"}, 0},
		{"a value that is not of the declared type", `
- partition: 2024-01-01
  given:
    staging.payments:
      - {day: 2024-01-02, amount: ten}
    raw.refunds: {columns: {refund_id: bigint}, rows: [{refund_id: 1.5}]}
  expect: []
`, []string{`totals.test.yml:5:35: amount: "ten" is not a double (declared at models/staging/payments.sql:7)`,
			`totals.test.yml:6:68: refund_id: "1.5" is not a bigint (declared by the test)`}, 0},
		{"a column the input does not have", `
- partition: 2024-01-01
  given:
    staging.payments:
      - {day: 2024-01-02, amont: 1}
    raw.refunds: [{refund_id: 1}]
  expect: []
`, []string{`totals.test.yml:5:27: staging.payments (models/staging/payments.sql) has no column amont (did you mean "amount"?)`}, 0},
		{"an empty string in a typed column", `
- partition: 2024-01-01
  given:
    staging.payments:
      - {day: "", amount: 1}
    raw.refunds:
      - {refund_id: 1}
      - {refund_id: ""}
  expect: []
`, []string{`totals.test.yml:5:15: day: "" is not a date (declared at models/staging/payments.sql:6); write null for NULL`,
			`totals.test.yml:8:21: refund_id: "" is not a bigint (inferred from the other values); write null for NULL`}, 0},
		{"a row as a mapping", `
- partition: 2024-01-01
  given:
    staging.payments: {day: 2024-01-02}
    raw.refunds: [{refund_id: [1]}]
  expect: []
`, []string{`totals.test.yml:4:23: given staging.payments is a list of rows`,
			`totals.test.yml:5:31: refund_id: a given value is a single value`}, 0},
		{"a list of givens", `
- partition: 2024-01-01
  given: [staging.payments]
  expect: []
`, []string{`totals.test.yml:3:10: given is a mapping of each table the model reads to its rows`}, 0},
		{"a decimal split by a flow mapping's comma", `
- partition: 2024-01-01
  given:
    staging.payments: []
    raw.refunds: {columns: {amount: decimal(18,2)}, rows: []}
  expect: []
`, []string{`totals.test.yml:5:37: columns.amount: the comma of decimal(18, ...) ends the value inside { }: quote the type (amount: "decimal(18,2)")`}, 0},
		{"an unknown type", `
- partition: 2024-01-01
  given:
    staging.payments: []
    raw.refunds: {columns: {refund_id: bigit}, rows: []}
  expect: []
`, []string{`totals.test.yml:5:40: columns.refund_id: unknown column type "bigit"`, "did you mean \"bigint\"?"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uts, err := loadUnitTests(t, map[string]string{"models/marts/totals.test.yml": tc.test})
			if err == nil {
				t.Fatal("loaded")
			}
			if len(uts) != 0 {
				t.Errorf("a test with errors is returned, to run: %+v", uts[0])
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			// One error for each problem, none that follows from another.
			var list ErrorList
			if !errors.As(err, &list) || len(list) != len(tc.want) && tc.count == 0 || tc.count > 0 && len(list) != tc.count {
				t.Errorf("%d errors, want %d:\n%v", len(list), max(tc.count, len(tc.want)), err)
			}
		})
	}
}
