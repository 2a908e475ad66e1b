package check_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/check"
)

// unitFiles is a project whose unit tests need typed and empty inputs: a
// staging model with declared columns over a seeded source, a mart over
// it, and a whole-table model over a source that nothing types.
var unitFiles = map[string]string{
	"refill.yml":             "target: dev\ntargets:\n  dev: {adapter: duckdb}\n",
	"seeds/raw/payments.csv": "payment_id,day,amount\n1,2024-01-01,10.5\n",
	"models/staging/payments.sql": `/* refill
partition_by: day
grain: day
start: 2024-01-01
columns:
  day: date
  amount: double
*/
SELECT day, amount FROM {{ source("raw.payments") }} WHERE day >= {{ start }} AND day < {{ end }}
`,
	"models/marts/totals.sql": `/* refill
partition_by: day
grain: day
start: 2024-01-01
*/
SELECT {{ start }} AS day, count(*) AS payments, sum(amount) AS amount
FROM {{ ref("staging.payments") }} WHERE day >= {{ start }} AND day < {{ end }}
`,
	"models/marts/refunds.sql": `SELECT count(*) AS refunds, sum(amount) AS amount, max(reason) AS reason FROM {{ source("raw.refunds") }}
`,
}

// runUnitTests runs the unit tests of unitFiles plus tests (file -> text)
// in an in-memory DuckDB each, and returns the results by test name.
func runUnitTests(t *testing.T, tests map[string]string) map[string]*check.UnitTestResult {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, text := range unitFiles {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	for name, text := range tests {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	p, err := models.Load(fsys, loadOptions)
	if err != nil {
		t.Fatal(err)
	}
	uts, err := p.LoadUnitTests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*check.UnitTestResult{}
	for _, ut := range uts {
		db, err := duckdb.Open(t.Context(), duckdb.Config{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := check.RunUnitTest(t.Context(), db, &models.Scope{Dialect: db.Dialect(), Schema: "main", Vars: p.Vars}, ut)
		db.Close()
		if err != nil {
			t.Fatalf("%s: %v", ut.Name, err)
		}
		out[ut.Name] = res
	}
	return out
}

func TestUnitTestTypedAndEmptyInputs(t *testing.T) {
	t.Parallel()
	results := runUnitTests(t, map[string]string{
		"models/marts/totals.test.yml": `
- name: an amount that is always NULL is still a double
  partition: 2024-01-02
  given:
    staging.payments:
      - {day: 2024-01-02, amount: null}
      - {day: 2024-01-02, amount: null}
  expect:
    - {day: 2024-01-02, payments: 2, amount: null}
- name: no payments
  partition: 2024-01-02
  given: []
  expect:
    - {day: 2024-01-02, payments: 0, amount: null}
`,
		"models/staging/payments.test.yml": `
- name: the seed types the source
  partition: 2024-01-02
  given: []
  expect: []
`,
		"models/marts/refunds.test.yml": `
- name: the test types what nothing else does
  given:
    raw.refunds:
      columns: {amount: "decimal(18,2)"}
      rows:
        - {reason: late, amount: null}
  expect:
    - {refunds: 1, amount: null, reason: late}
- name: no refunds, declared in the test
  given:
    raw.refunds: {columns: {amount: "decimal(18,2)", reason: varchar}}
  expect:
    - {refunds: 0, amount: null, reason: null}
`,
	})
	if len(results) != 5 {
		t.Errorf("%d results, want 5", len(results))
	}
	for name, res := range results {
		if !res.Passed {
			t.Errorf("%s: %s\n%s", name, res.Message, res.SQL)
		}
	}
}

func TestUnitTestUntypedColumnHint(t *testing.T) {
	t.Parallel()
	res := runUnitTests(t, map[string]string{
		"models/marts/refunds.test.yml": `
- name: an untyped NULL column
  given:
    raw.refunds:
      - {reason: late, amount: null}
  expect: []
`,
	})["an untyped NULL column"]
	if res.Passed {
		t.Fatal("passed")
	}
	for _, want := range []string{
		"the model failed: ",
		"\nmodels/marts/refunds.test.yml:4: raw.refunds: amount is NULL in every given row and nothing declares its type, so it is varchar;" +
			" declare it: raw.refunds: {columns: {amount: <type>}, rows: [...]}",
	} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, res.Message)
		}
	}
}

func TestUnitTestDiffShowsTypes(t *testing.T) {
	t.Parallel()
	results := runUnitTests(t, map[string]string{
		"models/marts/refunds.test.yml": `
- name: a string is not a number
  given:
    raw.refunds:
      - {reason: "10", amount: 10}
  expect:
    - {refunds: "1", amount: 10, reason: 10}
- name: a string is not NULL
  given:
    raw.refunds:
      - {reason: "NULL", amount: 1}
  expect:
    - {refunds: 1, reason: null}
`,
	})
	for name, want := range map[string]string{
		"a string is not a number": `the output differs (1 rows expected, 1 returned)
expected, but not in the output:
  - {refunds: "1", amount: 10, reason: 10}
in the output, but not expected:
  - {refunds: 1, amount: 10, reason: "10"}
(a quoted value is a string: "1" is not the number 1)`,
		"a string is not NULL": `the output differs (1 rows expected, 1 returned)
expected, but not in the output:
  - {refunds: 1, reason: null}
in the output, but not expected:
  - {refunds: 1, reason: "NULL"}
(a quoted value is a string: "NULL" is not null)`,
	} {
		res := results[name]
		if res == nil || res.Passed || res.Message != want {
			t.Errorf("%s: got\n%v\nwant\n%s", name, res, want)
		}
	}
}
