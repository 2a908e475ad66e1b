package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/cmd/refill/internal/junit"
)

func TestRefillTestPassesOnTheShop(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	report := filepath.Join(t.TempDir(), "report.xml")
	r := mustRefill(t, dir, "test", "--junit", report)
	for _, want := range []string{"ok       unit      marts.daily_revenue \"sums the day's orders and returns\"", "ok       audit     staging.orders unique(order_id)",
		"ok       run       marts.rolling_revenue", "ok       render    marts.monthly_revenue", "0 failed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	// The JUnit file parses, and has one test case per line of the report.
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var suites junit.Suites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, b)
	}
	lines := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "skip") {
			lines++
		}
	}
	cases := 0
	for _, s := range suites.Suites {
		if s.Tests != len(s.Cases) || s.Failures != 0 {
			t.Errorf("suite %s: tests=%d with %d cases, failures=%d", s.Name, s.Tests, len(s.Cases), s.Failures)
		}
		cases += len(s.Cases)
	}
	if cases != lines || suites.Tests != lines || lines < 20 {
		t.Errorf("JUnit has %d cases (tests=%d), the report %d checks", cases, suites.Tests, lines)
	}
}

func TestRefillTestCatchesBreakage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{"broken SQL", func(t *testing.T, dir string) {
			edit(t, dir, "models/marts/daily_revenue.sql", "sum(amount) AS revenue", "sum(amount_typo) AS revenue")
		}, []string{"FAIL     run       marts.daily_revenue", "models/marts/daily_revenue.sql", "amount_typo"}},
		{"broken template", func(t *testing.T, dir string) {
			edit(t, dir, "models/marts/daily_revenue.sql", "{{ end }}", "{{ ned }}")
		}, []string{"FAIL     validate  models/marts/daily_revenue.sql", "models/marts/daily_revenue.sql:19:53: template: unknown name ned (did you mean \"end\"?)", "unknown name ned"}},
		{"broken expectation", func(t *testing.T, dir string) {
			edit(t, dir, "models/marts/daily_revenue.test.yml", "revenue: 30.5", "revenue: 31.5")
		}, []string{"FAIL     unit      marts.daily_revenue \"sums the day's orders and returns\"", "models/marts/daily_revenue.test.yml:3:",
			"expected, but not in the output:", "revenue: 31.5", "in the output, but not expected:", "revenue: 30.5"}},
		{"broken audit", func(t *testing.T, dir string) {
			edit(t, dir, "models/staging/orders.sql", "values: [placed, shipped, returned]", "values: [placed, shipped]")
		}, []string{"FAIL     audit     staging.orders accepted_values(status)", "models/staging/orders.sql:12: accepted_values(status)", "returned"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := shop(t, nil)
			tc.change(t, dir)
			r := refill(t, dir, "test")
			if r.code != exitFailed {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("report lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}

// edit replaces old with new in a project file, failing if old is absent.
func edit(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	text := readFile(t, dir, rel)
	if !strings.Contains(text, old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	write(t, dir, rel, strings.Replace(text, old, new, 1))
}
