package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusHTMLPage checks the page of a real run of the example project
// as written, without a browser (TestStatusPageInBrowser checks what a
// browser draws of it).
func TestStatusHTMLPage(t *testing.T) {
	t.Parallel()
	dir := statusShop(t)
	for range 5 { // 7 runs: more than status prints, fewer than the page shows
		mustRefill(t, dir, "run", "marts.rolling_revenue", "--partitions", "2024-01-01", "--mode", "all", now)
	}
	page := filepath.Join(t.TempDir(), "status.html")
	r := mustRefill(t, dir, "status", now, "--html", page, "--output", "json")
	var out struct{ Runs []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Runs) != recentRuns {
		t.Errorf("status --output json with --html: %d runs (%v), want %d", len(out.Runs), err, recentRuns)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		// The failure in the summary, with its error on the page.
		`<h3 id="failed-summary"><i class="sw failed"></i>Failed: 1 partition, 1 group by error</h3>`,
		`<pre class="msg err">audit failed: accepted_values(status) (models/staging/orders.sql:12): status has values outside [placed shipped returned]: bogus (1 rows)`,
		`<a href="#staging.orders@2024-02-05">2024-02-05</a>`,
		// Its cell, linked from the summary.
		`<td class="failed" title="2024-02-05: failed: audit failed: accepted_values(status)`,
		`id="staging.orders@2024-02-05"`,
		// A model's section, axes and rows.
		`<section class="model" id="marts.daily_revenue">`,
		`<thead><tr><th class="corner">month</th><th><b>1</b></th><th><b>2</b></th>`,
		`<tr><th>2024-01</th><td class="done" colspan="31"></td></tr>`,
		// The stale partition, with its reason.
		`the model changed since it was built (version `,
		// The ledger's details of the failed partition.
		`<tr><td>2024-02-05</td><td><span class="tag failed">failed</span></td><td class="num">22</td><td>`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if got := strings.Count(text, `<span class="tag done">succeeded</span>`) + strings.Count(text, `<span class="tag failed">failed</span></td><td>20`); got != 7 {
		t.Errorf("the page shows %d runs, want all 7", got)
	}
}
