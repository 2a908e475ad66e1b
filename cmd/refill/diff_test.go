package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// The example project's staging model with a logic change: orders under
// 15 are dropped (a filter on amounts) and amounts over 200 doubled.
const changedOrders = `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
end: 2024-04-30
batch: 7
%s
*/
SELECT order_id, customer_id, order_date,
       CASE WHEN amount > 200 THEN amount * 2 ELSE amount END AS amount, status, region
FROM {{ source("%sraw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
  AND amount >= {{ var("min_amount") }}
  AND status <> 'test'
  AND amount >= 15
`

// shopOrder is a row of the example's raw.orders seed.
type shopOrder struct {
	id, day, status string
	amount          float64
}

// shopOrders reads the seed's CSV, not the warehouse: the diff's expected
// rows come from the file and from Go, not from refill or SQL.
func shopOrders(t *testing.T) []shopOrder {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "shop", "seeds", "raw", "orders.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []shopOrder
	for _, r := range recs[1:] {
		amount, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, shopOrder{id: r[0], day: r[2], status: r[5], amount: amount})
	}
	return out
}

// TestDiffMatchesAnIndependentComparison changes the example's staging
// model and checks refill diff, per partition, against counts made in Go
// from the seed file: with unique_key (rows over 200 changed, rows under 15
// only old) and without (each changed row once only old and once only
// new), and that every example row is of its kind.
func TestDiffMatchesAnIndependentComparison(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	diffMatches(t, dir, "", "dev", func() any { return query(t, dir, "SELECT count(*) FROM staging.orders") })
}

// TestDiffMatchesAnIndependentComparisonClickHouse is the same on
// ClickHouse (18.16 or 26, as CLICKHOUSE_DSN says).
func TestDiffMatchesAnIndependentComparisonClickHouse(t *testing.T) {
	t.Parallel()
	dir, prefix := clickhouseShop(t)
	ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
	diffMatches(t, dir, prefix, "clickhouse", func() any {
		res, err := ch.Query(context.Background(), fmt.Sprintf("SELECT count() FROM `%sstaging`.`orders`", prefix), adapters.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows[0][0]
	})
}

// diffMatches runs the comparison on the shop in dir, its schemas
// prefixed with prefix, on target; rows counts staging.orders' rows.
func diffMatches(t *testing.T, dir, prefix, target string, rows func() any) {
	model, file := prefix+"staging.orders", "models/"+prefix+"staging/orders.sql"
	mustRefill(t, dir, "seed", "--target", target)
	mustRefill(t, dir, "run", model, "--target", target, "--to", "2024-01-31", "--yes", "--quiet", now)

	type counts struct{ onlyOld, onlyNew, changed, same int64 }
	want := map[string]map[bool]*counts{} // day -> keyed -> counts
	kept := map[string]bool{}             // order ids in the table
	for _, o := range shopOrders(t) {
		if o.day > "2024-01-31" || o.amount < 10 || o.status == "test" {
			continue // not in the table, nor in the query's result
		}
		kept[o.id] = true
		if want[o.day] == nil {
			want[o.day] = map[bool]*counts{true: {}, false: {}}
		}
		k, w := want[o.day][true], want[o.day][false]
		switch {
		case o.amount < 15:
			k.onlyOld++
			w.onlyOld++
		case o.amount > 200:
			k.changed++
			w.onlyOld++
			w.onlyNew++
		default:
			k.same++
			w.same++
		}
	}
	if len(want) != 31 {
		t.Fatalf("the seed has orders on %d days of January, want 31", len(want))
	}
	orig, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, keyed := range []bool{true, false} {
		t.Run(fmt.Sprintf("unique_key=%v", keyed), func(t *testing.T) {
			key := ""
			if keyed {
				key = "unique_key: order_id"
			}
			write(t, dir, file, fmt.Sprintf(changedOrders, key, prefix))
			r := mustRefill(t, dir, "diff", model, "--target", target, "--from", "2024-01-01", "--to", "2024-01-31", "--examples", "2", "-o", "json", now)
			var out diffOutput
			if err := jsonUnmarshal(r.stdout, &out); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			if len(out.Partitions) != 31 {
				t.Fatalf("%d partitions compared, want 31", len(out.Partitions))
			}
			var total counts
			for _, p := range out.Partitions {
				w := want[p.Partition][keyed]
				got := counts{p.OnlyOld, p.OnlyNew, p.Changed, p.Same}
				if got != *w {
					t.Errorf("%s: diff %+v, want %+v", p.Partition, got, *w)
				}
				total.onlyOld += got.onlyOld
				total.changed += got.changed
				if p.Old != w.onlyOld+w.changed+w.same || p.New != w.onlyNew+w.changed+w.same {
					t.Errorf("%s: %d old and %d new rows", p.Partition, p.Old, p.New)
				}
				kinds := map[string]int64{}
				for _, ex := range p.Examples {
					checkExample(t, p.Partition, ex, kept)
					kinds[ex.Kind]++
				}
				for kind, n := range map[string]int64{"only_old": got.onlyOld, "only_new": got.onlyNew, "changed": got.changed} {
					if kinds[kind] != min(n, 2) {
						t.Errorf("%s: %d %s examples of %d rows, want %d", p.Partition, kinds[kind], kind, n, min(n, 2))
					}
				}
				if n := len(p.Examples); n > 2*3 {
					t.Errorf("%s: %d examples, want at most 2 of each kind", p.Partition, n)
				}
			}
			if total.onlyOld == 0 || keyed && total.changed == 0 {
				t.Fatalf("the change made no difference the test can see: %+v", total)
			}
			// The text output says the same in total.
			text := mustRefill(t, dir, "diff", model, "--target", target, "--from", "2024-01-01", "--to", "2024-01-31", now).stdout
			if !strings.Contains(text, "31 of 31 partitions differ") {
				t.Errorf("text output:\n%s", text)
			}
			// --exit-code: 1 when rows differ.
			if r := refill(t, dir, "diff", model, "--target", target, "--partitions", "2024-01-02", "--exit-code", now); r.code != exitFailed {
				t.Errorf("--exit-code with differences: exit %d, want %d\n%s", r.code, exitFailed, r.stderr)
			}
		})
	}
	// The published SQL again: nothing differs, and the table is untouched.
	write(t, dir, file, string(orig))
	mustRefill(t, dir, "diff", model, "--target", target, "--from", "2024-01-01", "--to", "2024-01-31", "--exit-code", now)
	if n := rows(); fmt.Sprint(n) != fmt.Sprint(len(kept)) {
		t.Errorf("%s holds %v rows after the diffs, want %d", model, n, len(kept))
	}
}

// checkExample checks that an example row is of its kind: only old rows
// are dropped (under 15) or, compared whole, doubled; only new and changed
// rows are doubled.
func checkExample(t *testing.T, day string, ex diffExampleJSON, kept map[string]bool) {
	t.Helper()
	amount := func(row map[string]*string) float64 {
		if row["amount"] == nil || row["order_id"] == nil {
			t.Fatalf("%s: example %+v lacks its values", day, ex)
		}
		f, err := strconv.ParseFloat(*row["amount"], 64)
		if err != nil {
			t.Fatalf("%s: example %+v: %v", day, ex, err)
		}
		return f
	}
	id := func(row map[string]*string) string { return *row["order_id"] }
	switch ex.Kind {
	case "only_old":
		if a := amount(ex.Old); a >= 15 && a <= 200 || !kept[id(ex.Old)] {
			t.Errorf("%s: only old example %v", day, ex.Old)
		}
	case "only_new":
		if a := amount(ex.New); a <= 400 {
			t.Errorf("%s: only new example %v, want a doubled amount", day, ex.New)
		}
	case "changed":
		if id(ex.Old) != id(ex.New) || amount(ex.New) != 2*amount(ex.Old) && fmt.Sprintf("%.2f", amount(ex.New)) != fmt.Sprintf("%.2f", 2*amount(ex.Old)) {
			t.Errorf("%s: changed example %v -> %v", day, ex.Old, ex.New)
		}
	default:
		t.Errorf("%s: example of kind %q", day, ex.Kind)
	}
}

// TestRunReview changes the staging model and runs it with --review: over
// --max-changed nothing is published and the ledger is untouched; under
// it, the table changes by exactly the rows the review showed, counted
// here from the table before and after.
func TestRunReview(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	days := []string{"--from", "2024-01-01", "--to", "2024-01-03", now}
	mustRefill(t, dir, append([]string{"run", "staging.orders", "--yes", "--quiet"}, days...)...)
	snapshot := func() map[string]string {
		rows := queryRows(t, dir, "SELECT order_id, amount FROM staging.orders WHERE order_date <= DATE '2024-01-03'")
		out := map[string]string{}
		for _, r := range rows {
			out[fmt.Sprint(r[0])] = fmt.Sprint(r[1])
		}
		return out
	}
	before := snapshot()
	write(t, dir, "models/staging/orders.sql", fmt.Sprintf(changedOrders, "unique_key: order_id", ""))

	r := refill(t, dir, append([]string{"run", "staging.orders", "--review", "--max-changed", "5%", "--yes"}, days...)...)
	if r.code != exitFailed || !strings.Contains(r.stdout, "refused by the review") {
		t.Fatalf("over --max-changed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused review changed the table")
	}
	if p := mustRefill(t, dir, append([]string{"plan", "staging.orders"}, days...)...); !strings.Contains(p.stdout, "stale") {
		t.Fatalf("after a refused review the partitions are not stale:\n%s", p.stdout)
	}
	for _, bad := range [][]string{{"--max-changed", "5%"}, {"--review", "--max-changed", "x"}, {"--review", "--publish", "partition", "--yes"}, {"--review"}} {
		if r := refill(t, dir, append(append([]string{"run", "staging.orders"}, bad...), days...)...); r.code != exitUsage {
			t.Errorf("run %v: exit %d, want %d\n%s", bad, r.code, exitUsage, r.stderr)
		}
	}

	r = mustRefill(t, dir, append([]string{"run", "staging.orders", "--review", "--max-changed", "60%", "--yes"}, days...)...)
	after := snapshot()
	var onlyOld, onlyNew, changed, same int
	for id, amount := range before {
		switch a, ok := after[id]; {
		case !ok:
			onlyOld++
		case a != amount:
			changed++
		default:
			same++
		}
	}
	for id := range after {
		if _, ok := before[id]; !ok {
			onlyNew++
		}
	}
	want := fmt.Sprintf("3 of 3 partitions differ (1 model): %d rows only old, %d only new, %d changed, %d the same.", onlyOld, onlyNew, changed, same)
	if !strings.Contains(r.stdout, want) || changed == 0 {
		t.Errorf("the review did not show what was published: want %q in\n%s", want, r.stdout)
	}
	// Published: nothing differs any more.
	mustRefill(t, dir, append([]string{"diff", "staging.orders", "--exit-code"}, days...)...)
}

// TestDiffSample diffs a few partitions spread over the range: the first,
// the last, and evenly between.
func TestDiffSample(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--to", "2024-01-31", "--yes", "--quiet", now)
	for _, tc := range []struct {
		n    string
		want []string
	}{
		{"1", []string{"2024-01-31"}},
		{"4", []string{"2024-01-01", "2024-01-11", "2024-01-21", "2024-01-31"}},
		{"40", nil}, // every day
	} {
		r := mustRefill(t, dir, "diff", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-31", "--sample", tc.n, "-o", "json", now)
		var out diffOutput
		if err := jsonUnmarshal(r.stdout, &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range out.Partitions {
			got = append(got, p.Partition)
		}
		if tc.want == nil && len(got) != 31 || tc.want != nil && strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("--sample %s: %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestStatusPageDiffsChangedModels: status --html --diff shows, for a model
// whose SQL changed, the diff of three of its partitions built by the old
// SQL, the same counts refill diff gives for them.
func TestStatusPageDiffsChangedModels(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "+marts.daily_revenue", "--to", "2024-01-31", "--yes", "--quiet", now)
	page := filepath.Join(t.TempDir(), "status.html")
	mustRefill(t, dir, "status", "--html", page, "--diff", now)
	if html, _ := os.ReadFile(page); !strings.Contains(string(html), "No model's version differs") {
		t.Errorf("before the change the page shows:\n%s", html)
	}
	daily, err := osReadFile(dir, "models/marts/daily_revenue.sql")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "models/marts/daily_revenue.sql", strings.Replace(daily, "sum(amount) AS revenue", "sum(CASE WHEN status = 'returned' THEN 0 ELSE amount END) AS revenue", 1))
	mustRefill(t, dir, "status", "--html", page, "--diff", now)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.Contains(html, "marts.daily_revenue</a>: 31 partitions built by an earlier version; 3 diffed") {
		t.Fatalf("the page lacks the change's section:\n%s", html)
	}
	r := mustRefill(t, dir, "diff", "marts.daily_revenue", "--partitions", "2024-01-01,2024-01-16,2024-01-31", "-o", "json", now)
	var out diffOutput
	if err := jsonUnmarshal(r.stdout, &out); err != nil {
		t.Fatal(err)
	}
	var onlyOld, onlyNew, changed, same int64
	for _, p := range out.Partitions {
		onlyOld, onlyNew, changed, same = onlyOld+p.OnlyOld, onlyNew+p.OnlyNew, changed+p.Changed, same+p.Same
	}
	want := fmt.Sprintf("(compared whole): %d only old, %d only new, %d changed, %d the same.", onlyOld, onlyNew, changed, same)
	if onlyOld == 0 || !strings.Contains(html, want) {
		t.Errorf("the page does not say %q:\n%s", want, html)
	}
	if r := refill(t, dir, "status", "--diff", now); r.code != exitUsage {
		t.Errorf("--diff without --html: exit %d", r.code)
	}
}
