package check

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// UnitTestResult is the outcome of one unit test.
type UnitTestResult struct {
	Test   *models.UnitTest
	Passed bool
	// Message explains a failure: the diff between expected and actual
	// rows, or the error that stopped the test.
	Message string
	SQL     string // the statement the test ran
}

// RunUnitTest loads the test's given rows into a (fresh, empty) warehouse,
// runs the model for the test's partition and compares its rows with the
// expected ones, ignoring row order and columns the test does not list.
func RunUnitTest(ctx context.Context, a adapters.Adapter, scope *models.Scope, ut *models.UnitTest) (*UnitTestResult, error) {
	res := &UnitTestResult{Test: ut}
	m := ut.Model
	s := *scope
	if len(ut.Vars) > 0 {
		s.Vars = map[string]any{}
		for k, v := range scope.Vars {
			s.Vars[k] = v
		}
		for k, v := range ut.Vars {
			s.Vars[k] = v
		}
	}
	given := map[string]bool{}
	for _, g := range ut.Given {
		var rel models.Relation
		switch {
		case g.This:
			rel = s.Relation(m)
			given["this"] = true
		case g.Model != nil:
			rel = s.Relation(g.Model)
			given["ref:"+g.Model.Name] = true
		default:
			r, _ := models.ParseRelation(g.Name)
			if r.Schema == "" {
				r.Schema = s.Schema
			}
			rel = r
			given["source:"+g.Name] = true
		}
		if err := adapters.LoadSeed(ctx, a, g.Seed, rel); err != nil {
			return nil, fmt.Errorf("%s:%d: loading the given rows of %s: %w", ut.File, g.Line, g.Name, err)
		}
	}
	var missing []string
	for _, up := range m.Upstream {
		if !given["ref:"+up.Name] {
			missing = append(missing, up.Name)
		}
	}
	for _, src := range m.SQL.Source {
		if !given["source:"+src] {
			missing = append(missing, src)
		}
	}
	if len(missing) > 0 {
		res.Message = fmt.Sprintf("the model reads %s, which the test does not give: add them under given: (with rows, or [] for none), or write given: [] to leave every table it reads empty", strings.Join(missing, ", "))
		return res, nil
	}
	if m.Config.Self && !given["this"] {
		// Its own past, not given: empty, as for the first partition.
		cols, err := adapters.DeclaredColumns(m, a.Dialect())
		if err != nil {
			return nil, err
		}
		if err := a.CreateTable(ctx, s.Relation(m), m, cols); err != nil {
			return nil, err
		}
	}
	part, err := m.Partition(ut.Partition)
	if err != nil {
		return nil, err
	}
	sql, err := m.Render(&s, part)
	if err != nil {
		return nil, err
	}
	res.SQL = sql
	out, err := a.Query(ctx, "SELECT * FROM (\n"+sql+"\n) AS unit_test_output", adapters.Tag{Model: m.Name, Partition: part.Key, Step: "unit test"})
	if err != nil {
		res.Message = "the model failed: " + err.Error() + untypedHint(ut)
		return res, nil
	}
	res.Message = compareRows(ut, out)
	res.Passed = res.Message == ""
	return res, nil
}

// untypedHint names the given columns that nothing typed (NULL in every
// row, no declaration): they are varchar, the likely cause of a failure.
func untypedHint(ut *models.UnitTest) string {
	var b strings.Builder
	for _, g := range ut.Given {
		if len(g.Untyped) == 0 {
			continue
		}
		types := make([]string, len(g.Untyped))
		for i, c := range g.Untyped {
			types[i] = c + ": <type>"
		}
		fmt.Fprintf(&b, "\n%s:%d: %s: %s %s NULL in every given row and nothing declares %s type, so %s varchar; declare it: %s: {columns: {%s}, rows: [...]}",
			ut.File, g.Line, g.Name, strings.Join(g.Untyped, ", "), oneOrMany(len(g.Untyped), "is", "are"), oneOrMany(len(g.Untyped), "its", "their"),
			oneOrMany(len(g.Untyped), "it is", "they are"), g.Name, strings.Join(types, ", "))
	}
	return b.String()
}

func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// compareRows matches expected rows with actual ones (as a multiset, on the
// expected columns, with typed comparison) and describes the difference.
func compareRows(ut *models.UnitTest, out *adapters.Result) string {
	index := map[string]int{}
	for i, c := range out.Columns {
		index[strings.ToLower(c)] = i
	}
	for _, c := range ut.Columns {
		if _, ok := index[strings.ToLower(c)]; !ok {
			return fmt.Sprintf("the output has no column %s (it has %s)", c, strings.Join(out.Columns, ", "))
		}
	}
	used := make([]bool, len(out.Rows))
	var missing []map[string]any
	var shown []any // the values the diff prints
	for _, want := range ut.Expect {
		found := false
		for i, row := range out.Rows {
			if !used[i] && rowMatches(want, row, index) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, want)
			for _, c := range ut.Columns {
				shown = append(shown, want[c])
			}
		}
	}
	var unexpected []string
	for i, row := range out.Rows {
		if !used[i] {
			unexpected = append(unexpected, formatRow(ut.Columns, row, index))
			if len(ut.Columns) == 0 {
				shown = append(shown, row...)
			}
			for _, c := range ut.Columns {
				shown = append(shown, row[index[strings.ToLower(c)]])
			}
		}
	}
	if len(missing) == 0 && len(unexpected) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the output differs (%d rows expected, %d returned)", len(ut.Expect), len(out.Rows))
	if len(missing) > 0 {
		b.WriteString("\nexpected, but not in the output:")
		for _, w := range missing {
			b.WriteString("\n  - " + formatExpected(ut.Columns, w))
		}
	}
	if len(unexpected) > 0 {
		b.WriteString("\nin the output, but not expected:")
		for _, u := range unexpected {
			b.WriteString("\n  - " + u)
		}
	}
	b.WriteString(typeNote(shown))
	return b.String()
}

func rowMatches(want map[string]any, row []any, index map[string]int) bool {
	for c, w := range want {
		if !valueEqual(w, row[index[strings.ToLower(c)]]) {
			return false
		}
	}
	return true
}

// valueEqual compares an expected YAML value with a warehouse value: numbers
// numerically (to 1e-9 relative), dates and timestamps by their text,
// strings and booleans exactly. A string never equals a number.
func valueEqual(want, got any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	switch w := want.(type) {
	case int, float64:
		wf := toFloat(w)
		var gf float64
		switch g := got.(type) {
		case int64:
			gf = float64(g)
		case uint64:
			gf = float64(g)
		case float64:
			gf = g
		default:
			return false
		}
		return math.Abs(wf-gf) <= 1e-9*math.Max(1, math.Max(math.Abs(wf), math.Abs(gf)))
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case string:
		switch g := got.(type) {
		case string:
			return g == w
		case time.Time:
			for _, layout := range []string{"2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05"} {
				if t, err := time.Parse(layout, w); err == nil && t.Equal(g) {
					return true
				}
			}
		}
	}
	return false
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

func formatExpected(cols []string, row map[string]any) string {
	parts := make([]string, 0, len(row))
	for _, c := range cols {
		if v, ok := row[c]; ok {
			parts = append(parts, fmt.Sprintf("%s: %s", c, formatValue(v)))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func formatRow(cols []string, row []any, index map[string]int) string {
	if len(cols) == 0 {
		keys := make([]string, 0, len(index))
		for k := range index {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return index[keys[i]] < index[keys[j]] })
		cols = keys
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s: %s", c, formatValue(row[index[strings.ToLower(c)]]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if yamlKind(v) != "" || v == "" || v != strings.TrimSpace(v) || strings.ContainsAny(v, ":{}[],#'\"\n&*!|>%@`") {
			return strconv.Quote(v)
		}
		return v
	case time.Time:
		if v.Equal(v.Truncate(24 * time.Hour)) {
			return v.Format("2006-01-02")
		}
		return v.Format("2006-01-02 15:04:05.999999999")
	case float64:
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprint(v)
}

// yamlKind returns what s would be if written unquoted in a test file, when
// that is not a string: "the number", "the boolean" or "null". A diff quotes
// such strings, so that "10" (a string) and 10 (a number) look different.
func yamlKind(s string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(s), &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.ScalarNode {
		return ""
	}
	switch doc.Content[0].Tag {
	case "!!int", "!!float":
		return "the number"
	case "!!bool":
		return "the boolean"
	case "!!null":
		return "null"
	}
	return ""
}

// typeNote explains a diff in which a string reads like another type: the
// likely cause of an expected row that looks like an output row.
func typeNote(values []any) string {
	for _, v := range values {
		if s, ok := v.(string); ok {
			if kind := yamlKind(s); kind != "" {
				what := kind + " " + s
				if kind == "null" {
					what = "null"
				}
				return fmt.Sprintf("\n(a quoted value is a string: %s is not %s)", strconv.Quote(s), what)
			}
		}
	}
	return ""
}
