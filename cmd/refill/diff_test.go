package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
FROM {{ source("raw.orders") }}
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
	mustRefill(t, dir, "seed")
	mustRefill(t, dir, "run", "staging.orders", "--to", "2024-01-31", "--yes", "--quiet", now)

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
	for _, keyed := range []bool{true, false} {
		t.Run(fmt.Sprintf("unique_key=%v", keyed), func(t *testing.T) {
			key := ""
			if keyed {
				key = "unique_key: order_id"
			}
			write(t, dir, "models/staging/orders.sql", fmt.Sprintf(changedOrders, key))
			r := mustRefill(t, dir, "diff", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-31", "--examples", "2", "-o", "json", now)
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
				for _, ex := range p.Examples {
					checkExample(t, p.Partition, ex, kept)
				}
				if n := len(p.Examples); n > 2*3 {
					t.Errorf("%s: %d examples, want at most 2 of each kind", p.Partition, n)
				}
			}
			if total.onlyOld == 0 || keyed && total.changed == 0 {
				t.Fatalf("the change made no difference the test can see: %+v", total)
			}
			// The text output says the same in total.
			text := mustRefill(t, dir, "diff", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-31", now).stdout
			if !strings.Contains(text, fmt.Sprintf("31 of 31 partitions differ")) {
				t.Errorf("text output:\n%s", text)
			}
			// --exit-code: 1 when rows differ.
			if r := refill(t, dir, "diff", "staging.orders", "--partitions", "2024-01-02", "--exit-code", now); r.code != exitFailed {
				t.Errorf("--exit-code with differences: exit %d, want %d\n%s", r.code, exitFailed, r.stderr)
			}
		})
	}
	// The published SQL again: nothing differs, and the table is untouched.
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "shop", "models", "staging", "orders.sql"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "models/staging/orders.sql", string(orig))
	mustRefill(t, dir, "diff", "staging.orders", "--from", "2024-01-01", "--to", "2024-01-31", "--exit-code", now)
	if n := query(t, dir, "SELECT count(*) FROM staging.orders"); fmt.Sprint(n) != fmt.Sprint(len(kept)) {
		t.Errorf("staging.orders holds %v rows after the diffs, want %d", n, len(kept))
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
