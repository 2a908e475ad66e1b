package models

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The ansi test dialect's portable helpers.

func (ansi) DateDiff(g Grain, a, b string) string {
	return fmt.Sprintf("date_diff('%s', %s, %s)", g, a, b)
}
func (d ansi) TryCast(e string, t ColumnType) string {
	return "TRY_CAST(" + e + " AS " + d.ColumnType(t) + ")"
}
func (ansi) StringAgg(e, sep, order string) string {
	if order != "" {
		sep += " ORDER BY " + order
	}
	return fmt.Sprintf("string_agg(%s, %s)", e, sep)
}

// TestPortableHelpers renders the target and the portable helpers with
// the test dialect: SQL arguments go to the dialect, start and end are
// computed by refill, and var() values stay quoted literals.
func TestPortableHelpers(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/h.sql": `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT {{ target.name }} AS target, {{ target.adapter == "ansi" ? raw("ansi_only()") : raw("portable()") }} AS branch,
       {{ date_diff("day", ident("signup_date"), start) }} AS age,
       {{ date_diff("week", date_add(start, -6, "day"), end) }} AS weeks,
       {{ try_cast(ident("amount"), "decimal(18,2)") }} AS amount,
       {{ string_agg(ident("page"), var("sep"), ident("ts")) }} AS pages,
       {{ string_agg(try_cast(ident("n"), "bigint"), ", ") }} AS ns`})
	m := mustModel(t, p, "h")
	part, err := m.Partition("2024-01-08")
	if err != nil {
		t.Fatal(err)
	}
	s := &Scope{Dialect: ansi{}, Target: "prod", Vars: map[string]any{"sep": "'); DROP TABLE t; --"}}
	got, err := m.Render(s, part)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT 'prod' AS target, ansi_only() AS branch,
       date_diff('day', "signup_date", DATE '2024-01-08') AS age,
       1 AS weeks,
       TRY_CAST("amount" AS DECIMAL(18,2)) AS amount,
       string_agg("page", '''); DROP TABLE t; --' ORDER BY "ts") AS pages,
       string_agg(TRY_CAST("n" AS BIGINT), ', ') AS ns`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render (-want +got):\n%s", diff)
	}
	// Another scope is another target: nothing cached leaks across.
	got, err = m.Render(&Scope{Dialect: ansi{}, Vars: s.Vars}, part)
	if err != nil || !strings.HasPrefix(got, "SELECT '' AS target") {
		t.Errorf("without a target: %q, %v", got, err)
	}
}

// TestDateDiffOfDates counts boundaries the way the dialects' DateDiff
// does (runner/enginetest checks those on real engines).
func TestDateDiffOfDates(t *testing.T) {
	t.Parallel()
	ts := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			v = date(s)
		}
		return v
	}
	for _, tc := range []struct {
		unit string
		a, b string
		want int
	}{
		{"day", "2024-01-01", "2024-03-01", 60},
		{"day", "2024-03-01", "2024-01-01", -60},
		{"day", "2024-01-01 23:00", "2024-01-02 01:00", 1},
		{"week", "2024-01-07", "2024-01-08", 1},
		{"week", "2024-01-01", "2024-01-07", 0},
		{"week", "2024-01-08", "2024-01-01", -1},
		{"sunday_week", "2024-01-06", "2024-01-07", 1},
		{"sunday_week", "2024-01-07", "2024-01-13", 0},
		{"sunday_week", "2024-01-14", "2024-01-07", -1},
		{"sunday_week", "2024-12-28", "2025-01-04 12:00", 1},
		{"sunday_week", "2023-12-30", "2023-12-31", 1},
		{"month", "2024-01-31", "2024-02-01", 1},
		{"month", "2023-11-15", "2024-02-01", 3},
		{"year", "2023-12-31", "2024-01-01", 1},
		{"hour", "2024-01-01 23:59", "2024-01-02 00:01", 1},
		{"hour", "2024-01-01", "2024-01-02", 24},
	} {
		g, _ := ParseUnit(tc.unit)
		if got := dateDiff(g, ts(tc.a), ts(tc.b)); got != tc.want {
			t.Errorf("date_diff(%s, %s, %s) = %d, want %d", tc.unit, tc.a, tc.b, got, tc.want)
		}
	}
	// Days are the model's calendar days: across a DST change too.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	a, b := time.Date(2024, 3, 30, 0, 0, 0, 0, berlin), time.Date(2024, 4, 1, 0, 0, 0, 0, berlin)
	if got := dateDiff(Day, a, b); got != 2 {
		t.Errorf("across DST: %d days, want 2", got)
	}
}

// TestPortableHelperErrors checks that misuse is reported at file:line:col
// when the project loads, or when the statement renders.
func TestPortableHelperErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, expr, want string }{
		{"unknown target field", `target.adaptor`, `models/m.sql:1:18: template: target has no field adaptor (it has name and adapter) (did you mean "adapter"?)`},
		{"unit", `date_diff("days", start, end)`, `models/m.sql:1:21: template: date_diff: unknown unit "days" (want hour, day, week, sunday_week, month or year) (did you mean "day"?)`},
		{"old helper's unit", `date_trunc("mnth", ident("d"))`, `models/m.sql:1:22: template: date_trunc: unknown unit "mnth"`},
		{"type", `try_cast(ident("a"), "bigdecimal")`, `models/m.sql:1:32: template: try_cast: unknown type "bigdecimal" (want boolean, integer, bigint, double, decimal(p,s), varchar, date or timestamp) (did you mean "bigint"?)`},
		{"arity", `string_agg(ident("a"))`, `models/m.sql:1:11: template: not enough arguments to call string_agg`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"models/m.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
				"SELECT {{ " + tc.expr + " }}"})
			if err == nil || !strings.Contains(err.Error(), strings.Replace(tc.want, ":1:", ":6:", 1)) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, strings.Replace(tc.want, ":1:", ":6:", 1))
			}
		})
	}
	for _, tc := range []struct{ name, expr, want string }{
		{"a string, not a column", `try_cast("amount", "double")`, `try_cast needs SQL, not the string "amount": write a column as ident("amount")`},
		{"a number", `date_diff("day", 3, end)`, `date_diff needs a date (start, end) or SQL (ident, raw), not int`},
		{"a separator", `string_agg(ident("a"), 1)`, `string_agg needs a separator in quotes`},
		{"two orders", `string_agg(ident("a"), ",", ident("b"), ident("c"))`, `string_agg takes one order expression, not 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, map[string]string{"models/m.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT {{ " + tc.expr + " }}"})
			m := mustModel(t, p, "m")
			part, _ := m.Partition("2024-01-02")
			_, err := m.Render(&Scope{Dialect: ansi{}}, part)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "models/m.sql:6:") {
				t.Errorf("error:\n%v\nwant it at models/m.sql:6 to contain:\n%s", err, tc.want)
			}
		})
	}
}

func (ansi) HashRows(exprs []string) string { return "hash_rows(" + strings.Join(exprs, ", ") + ")" }
