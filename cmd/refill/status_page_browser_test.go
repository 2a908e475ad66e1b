package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var statusPNG = flag.String("status.png", "", "write a screenshot of the example project's status page (as "+
	"TestStatusPageInBrowser builds it, without its hourly model) to this file: ../../docs/status.png for the README")

// hourlyOrders is an hourly model added to the example project, so that the
// page's hour layout is checked too. Most hours have no orders: they are
// done with 0 rows.
const hourlyOrders = `/* refill
description: Orders per hour.
partition_by: hour
grain: hour
start: 2024-04-01
end: 2024-04-30T23
batch: 24
*/
SELECT {{ date_trunc("hour", ident("order_ts")) }} AS hour, count(*) AS orders, sum(amount) AS revenue
FROM {{ source("raw.orders") }}
WHERE order_ts >= {{ start }} AND order_ts < {{ end }}
GROUP BY {{ date_trunc("hour", ident("order_ts")) }}
`

// browserShop builds the example project with a partition in each state
// the page tells apart: done (with and without rows), failed (two days,
// one error), blocked (a run skipped it), stale and missing.
func browserShop(t *testing.T, hourly bool) string {
	t.Helper()
	changes := map[string]string{}
	if hourly {
		changes["models/staging/hourly_orders.sql"] = hourlyOrders
	}
	dir := shop(t, changes)
	mustRefill(t, dir, "seed")
	history := []string{"run", "--from", "2024-01-01", "--to", "2024-02-10", "--now=2024-02-11"}
	if hourly {
		mustRefill(t, dir, "run", "staging.hourly_orders", "--from", "2024-04-01", "--to", "2024-04-10T11", now)
		history = append(history, "--exclude", "staging.hourly_orders")
	}
	mustRefill(t, dir, history...)
	// Orders with a status the audit refuses fail 12 and 13 February.
	execSQL(t, dir, `INSERT INTO raw.orders VALUES (99998, 1, DATE '2024-02-12', TIMESTAMP '2024-02-12 10:00:00', 50, 'bogus', 'eu'),
		(99999, 1, DATE '2024-02-13', TIMESTAMP '2024-02-13 10:00:00', 50, 'bogus', 'eu')`)
	refill(t, dir, "run", "staging.orders", "--from", "2024-02-11", "--to", "2024-02-14", now)
	// The daily revenue of those days is skipped: blocked.
	if r := mustRefill(t, dir, "run", "marts.daily_revenue", "--from", "2024-02-11", "--to", "2024-02-14", now, "--allow-blocked"); !strings.Contains(r.stdout, "2 skipped") &&
		!strings.Contains(r.stdout, "blocked") {
		t.Fatalf("the daily revenue of the failed days was not skipped:\n%s", r.stdout)
	}
	// A changed model: its built partition is stale.
	edit(t, dir, "models/marts/monthly_revenue.sql", "count(*) AS days", "count(*) AS days_counted")
	return dir
}

// chromium returns the path of a Chromium binary, or skips t.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH: the status page is not checked in a browser (apt-get install chromium, as .ci/run does)")
	return ""
}

// runChromium runs headless Chromium with args and returns its stdout.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1600"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// probeScript, appended to a copy of the page, reads what the browser
// drew: the summary's groups, each calendar's axes and, for every cell,
// its class, its computed background, and which column headers stand
// above it. It writes them as JSON into the page for --dump-dom.
const probeScript = `<script>
(function () {
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; };
  const out = {sections: [], models: {}, runs: [], ids: [...document.querySelectorAll("[id]")].map(e => e.id)};
  for (const h of document.querySelectorAll("h3[id$='-summary']")) {
    const groups = [...h.nextElementSibling.querySelectorAll("tr")].slice(1).map(tr => ({
      count: +tr.cells[0].textContent, text: tr.cells[1].querySelector("pre").textContent,
      visible: shown(tr.cells[1].querySelector("pre")), where: tr.cells[2].textContent,
      links: [...tr.cells[2].querySelectorAll("a")].map(a => a.getAttribute("href"))}));
    out.sections.push({id: h.id, title: h.textContent, groups});
  }
  for (const tr of [...document.querySelectorAll("table.runs tr")].slice(1)) {
    out.runs.push([...tr.cells].map(c => c.textContent));
  }
  for (const sec of document.querySelectorAll("section.model")) {
    const m = {rows: [], chips: [...sec.querySelectorAll(".chip")].map(c => ({text: c.textContent, cls: c.className}))};
    const cal = sec.querySelector("table.cal");
    if (cal) {
      const heads = [...cal.tHead.rows[0].cells];
      m.corner = heads[0].textContent;
      m.caption = cal.caption.textContent;
      m.columns = heads.slice(1).map(h => h.textContent);
      const rects = heads.slice(1).map(h => h.getBoundingClientRect());
      const mids = rects.map(r => r.left + r.width / 2);
      m.columnWidths = rects.map(r => r.width);
      for (const tr of cal.tBodies[0].rows) {
        const label = tr.cells[0];
        const row = {label: label.textContent, fold: tr.classList.contains("fold"), left: label.getBoundingClientRect().right, cells: []};
        for (const td of [...tr.cells].slice(1)) {
          const r = td.getBoundingClientRect(), cs = getComputedStyle(td);
          const cols = mids.flatMap((x, i) => x > r.left && x < r.right ? [i] : []);
          row.cells.push({cls: td.className, title: td.title, text: td.textContent, id: td.id, cols,
            // how far its edges are from those of the columns it covers
            off: cols.length ? Math.max(Math.abs(r.left - rects[cols[0]].left), Math.abs(r.right - rects[cols[cols.length - 1]].right)) : -1,
            bg: cs.backgroundColor + " " + cs.backgroundImage, w: r.width, h: r.height});
        }
        m.rows.push(row);
      }
    }
    out.models[sec.id] = m;
  }
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
`

type probedCell struct {
	Cls, Title, Text, ID, Bg string
	Cols                     []int
	W, H, Off                float64
}

type probedRow struct {
	Label string
	Fold  bool
	Left  float64
	Cells []probedCell
}

type probedModel struct {
	Corner, Caption string
	Columns         []string
	ColumnWidths    []float64
	Rows            []probedRow
	Chips           []struct{ Text, Cls string }
}

type probedGroup struct {
	Count       int
	Text, Where string
	Visible     bool
	Links       []string
}

type probedPage struct {
	Sections []struct {
		ID, Title string
		Groups    []probedGroup
	}
	Models map[string]probedModel
	Runs   [][]string
	IDs    []string
}

// probe loads page in headless Chromium and returns what it drew.
func probe(t *testing.T, bin, page string) probedPage {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.LastIndex(text, "</body>")
	if i < 0 {
		t.Fatal("the page has no </body>")
	}
	probed := filepath.Join(t.TempDir(), "probed.html")
	if err := os.WriteFile(probed, []byte(text[:i]+probeScript+text[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, "--dump-dom", "file://"+probed)
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the browser did not run the probe; its DOM:\n%.3000s", dom)
	}
	var p probedPage
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// cellAt returns the cell of model's calendar in the row labelled row that
// the browser drew under column col (0-based).
func (p probedPage) cellAt(t *testing.T, model, row string, col int) probedCell {
	t.Helper()
	for _, r := range p.Models[model].Rows {
		if r.Label != row {
			continue
		}
		for _, c := range r.Cells {
			for _, k := range c.Cols {
				if k == col {
					return c
				}
			}
		}
		t.Fatalf("%s: row %s has no cell under column %d", model, row, col)
	}
	t.Fatalf("%s: no row labelled %s; rows: %v", model, row, p.rowLabels(model))
	return probedCell{}
}

func (p probedPage) rowLabels(model string) []string {
	var out []string
	for _, r := range p.Models[model].Rows {
		out = append(out, r.Label)
	}
	return out
}

// group returns the group of summary section id whose text contains text.
func (p probedPage) group(t *testing.T, id, text string) probedGroup {
	t.Helper()
	groups := p.section(t, id)
	for _, g := range groups {
		if strings.Contains(g.Text, text) {
			return g
		}
	}
	t.Errorf("the summary's %s has no group %q: %+v", id, text, groups)
	return probedGroup{}
}

func (p probedPage) section(t *testing.T, id string) []probedGroup {
	t.Helper()
	for _, s := range p.Sections {
		if s.ID == id {
			return s.Groups
		}
	}
	t.Fatalf("the summary has no section %s", id)
	return nil
}

// TestStatusPageInBrowser loads the status page of a real run of the
// example project in headless Chromium and checks what it draws: the
// summary's failures with their error text on screen, labelled axes, and
// each partition's cell in its state under the right row and column.
func TestStatusPageInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := browserShop(t, true)
	page := filepath.Join(t.TempDir(), "status.html")
	mustRefill(t, dir, "status", now, "--html", page)
	p := probe(t, bin, page)

	// Failures, grouped by error: both days in one group, the audit's
	// message on screen, linked to their cells.
	failed := p.section(t, "failed-summary")
	if len(failed) != 1 || failed[0].Count != 2 || !strings.Contains(failed[0].Text, "accepted_values(status)") || !failed[0].Visible {
		t.Errorf("failures in the summary: %+v; want one group of 2 with the audit's error on screen", failed)
	} else {
		if !strings.Contains(failed[0].Where, "staging.orders: 2024-02-12 … 2024-02-13 (2)") {
			t.Errorf("the failure group lists %q", failed[0].Where)
		}
		ids := map[string]bool{}
		for _, id := range p.IDs {
			ids[id] = true
		}
		for _, l := range failed[0].Links {
			if !ids[strings.TrimPrefix(l, "#")] {
				t.Errorf("the summary links to %s, which the page does not have", l)
			}
		}
	}
	// Blocked partitions, grouped by what they wait for.
	if g := p.group(t, "blocked-summary", "reads failed partitions of staging.orders"); g.Count != 3 ||
		!strings.Contains(g.Where, "marts.daily_revenue: 2024-02-12 … 2024-02-13 (2)") {
		t.Errorf("the partitions blocked by the failures: %+v", g)
	}
	if g := p.group(t, "stale-summary", "the model changed since it was built"); g.Count != 1 || !strings.Contains(g.Where, "marts.monthly_revenue: 2024-01") {
		t.Errorf("the stale partitions of the changed model: %+v", g)
	}
	if g := p.group(t, "stale-summary", "upstream staging.orders"); g.Count != 4 || !g.Visible {
		t.Errorf("the partitions stale after staging.orders was rebuilt: %+v", g)
	}

	// A daily model: a row per month, a column per day of the month.
	orders := p.Models["staging.orders"]
	if orders.Corner != "month" || len(orders.Columns) != 31 || orders.Columns[0] != "1" || orders.Columns[30] != "31" ||
		!strings.Contains(orders.Caption, "day of the month") {
		t.Errorf("staging.orders's axes: corner %q, columns %v, caption %q", orders.Corner, orders.Columns, orders.Caption)
	}
	if got := p.rowLabels("staging.orders"); strings.Join(got, ",") != "2024-01,2024-02,2024-03,2024-04" {
		t.Errorf("staging.orders's rows: %v", got)
	}
	for _, c := range []struct {
		model, row string
		day        int
		class      string
	}{
		{"staging.orders", "2024-01", 1, "done"},
		{"staging.orders", "2024-02", 11, "done"},
		{"staging.orders", "2024-02", 12, "failed"},
		{"staging.orders", "2024-02", 13, "failed"},
		{"staging.orders", "2024-02", 14, "done"},
		{"staging.orders", "2024-02", 15, "missing"},
		{"staging.orders", "2024-04", 30, "missing"},
		{"marts.daily_revenue", "2024-02", 11, "done"},
		{"marts.daily_revenue", "2024-02", 12, "blocked"},
		{"marts.daily_revenue", "2024-02", 15, "missing"},
		{"marts.rolling_revenue", "2024-02", 12, "blocked"},
	} {
		cell := p.cellAt(t, c.model, c.row, c.day-1)
		if cell.Cls != c.class {
			t.Errorf("%s %s-%02d is drawn %q, want %q (%+v)", c.model, c.row, c.day, cell.Cls, c.class, cell)
		}
		// Runs of done or missing partitions are named by the axes; the
		// others say what they are when hovered.
		if key := fmt.Sprintf("%s-%02d", c.row, c.day); c.class != "done" && c.class != "missing" && !strings.HasPrefix(cell.Title, key+": ") &&
			!strings.Contains(cell.Title, " … "+key+": ") && !strings.Contains(cell.Title, key+" … ") {
			t.Errorf("%s %s: its cell's title is %q", c.model, key, cell.Title)
		}
	}
	if cell := p.cellAt(t, "staging.orders", "2024-02", 11); !strings.Contains(cell.Title, "accepted_values(status)") {
		t.Errorf("the failed cell's title %q lacks the error", cell.Title)
	}
	// A month has only its days: February 2024 draws nothing under 30 and 31.
	for _, r := range orders.Rows {
		if r.Label == "2024-02" {
			last := r.Cells[len(r.Cells)-1]
			if last.Cols[len(last.Cols)-1] != 28 {
				t.Errorf("February's last cell covers columns %v", last.Cols)
			}
		}
	}
	// A monthly model: a row per year, a column per month.
	monthly := p.Models["marts.monthly_revenue"]
	if monthly.Corner != "year" || strings.Join(monthly.Columns, " ") != "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec" {
		t.Errorf("marts.monthly_revenue's axes: %q %v", monthly.Corner, monthly.Columns)
	}
	if c := p.cellAt(t, "marts.monthly_revenue", "2024", 0); c.Cls != "stale" {
		t.Errorf("marts.monthly_revenue 2024-01 is drawn %q, want stale", c.Cls)
	}
	// A list model: a chip per value.
	if chips := p.Models["marts.revenue_by_region"].Chips; len(chips) != 3 || chips[0].Text != "eu" || chips[0].Cls != "chip stale" {
		t.Errorf("marts.revenue_by_region's chips: %+v", chips)
	}

	// An hourly model: a row per day, a column per hour, so rows line up.
	hourly := p.Models["staging.hourly_orders"]
	if hourly.Corner != "day (UTC)" || len(hourly.Columns) != 24 || hourly.Columns[0] != "00" || hourly.Columns[23] != "23" {
		t.Errorf("staging.hourly_orders's axes: %q %v", hourly.Corner, hourly.Columns)
	}
	for _, r := range hourly.Rows {
		if r.Left != hourly.Rows[0].Left {
			t.Errorf("staging.hourly_orders's rows do not line up: %s starts at %v, %s at %v", r.Label, r.Left, hourly.Rows[0].Label, hourly.Rows[0].Left)
		}
	}
	for hour, want := range map[int]string{11: "done empty", 12: "missing", 23: "missing"} {
		if c := p.cellAt(t, "staging.hourly_orders", "2024-04-10 Wed", hour); !strings.Contains(want, c.Cls) {
			t.Errorf("staging.hourly_orders 2024-04-10T%02d is drawn %q, want one of %q", hour, c.Cls, want)
		}
	}
	// Whole days in one state fold into one band.
	lastRow := hourly.Rows[len(hourly.Rows)-1]
	if !lastRow.Fold || lastRow.Label != "2024-04-11 … 2024-04-30" || len(lastRow.Cells) != 1 || lastRow.Cells[0].Cls != "missing" ||
		lastRow.Cells[0].Text != "20 days: all 480 partitions missing" {
		t.Errorf("staging.hourly_orders's last row: %+v", lastRow)
	}

	// Columns are all one width, and every cell spans exactly the columns
	// it is drawn under.
	for name, m := range p.Models {
		for _, w := range m.ColumnWidths {
			if w != m.ColumnWidths[0] {
				t.Errorf("%s's columns are not all one width: %v", name, m.ColumnWidths)
				break
			}
		}
		for _, r := range m.Rows {
			for _, c := range r.Cells {
				if c.Off < 0 || c.Off > 0.5 {
					t.Errorf("%s %s: a %s cell over columns %v is %vpx off them", name, r.Label, c.Cls, c.Cols, c.Off)
				}
			}
		}
	}

	// Every state looks different, and blocked is not missing: no
	// background drawn for a cell of one state is drawn for another.
	drawnAs := map[string]string{} // computed background -> state
	for name, m := range p.Models {
		for _, r := range m.Rows {
			for _, c := range r.Cells {
				if c.Cls == "" {
					continue
				}
				if c.H < 10 || c.W < 10 {
					t.Errorf("%s %s: a %s cell is drawn %vx%v", name, r.Label, c.Cls, c.W, c.H)
				}
				if other, ok := drawnAs[c.Bg]; ok && other != c.Cls {
					t.Errorf("%s and %s cells look the same: %s", c.Cls, other, c.Bg)
				}
				drawnAs[c.Bg] = c.Cls
			}
		}
	}
	for _, class := range []string{"done", "empty", "failed", "blocked", "missing", "stale"} {
		found := false
		for _, c := range drawnAs {
			found = found || c == class
		}
		if !found {
			t.Errorf("no %s cell was drawn", class)
		}
	}

	// Run history: the run that failed, and the run that skipped.
	var failedRun, skippedRun bool
	for _, r := range p.Runs {
		failedRun = failedRun || r[1] == "failed" && r[5] == "2"
		skippedRun = skippedRun || r[6] == "2"
	}
	if len(p.Runs) != 4 || !failedRun || !skippedRun {
		t.Errorf("recent runs: %v; want 4, one that failed 2 partitions and one that skipped 2", p.Runs)
	}

	if *statusPNG != "" {
		screenshot(t, bin)
	}
}

// screenshot writes *statusPNG: the status page of the example project
// (without the hourly model, which is not part of it).
func screenshot(t *testing.T, bin string) {
	dir := browserShop(t, false)
	page := filepath.Join(t.TempDir(), "status.html")
	mustRefill(t, dir, "status", now, "--html", page)
	out, err := filepath.Abs(*statusPNG)
	if err != nil {
		t.Fatal(err)
	}
	runChromium(t, bin, "--window-size=1100,2560", "--screenshot="+out, "file://"+page)
	if fi, err := os.Stat(out); err != nil || fi.Size() < 10_000 {
		t.Fatalf("the screenshot %s: %v", out, err)
	}
	t.Logf("wrote %s", out)
}
