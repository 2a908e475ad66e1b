package models

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shop is a small graph: raw orders -> orders -> daily_revenue -> monthly,
// plus a rolling model and list and whole-table models.
var shop = map[string]string{
	"models/staging/orders.sql": "/* refill\npartition_by: order_date\ngrain: day\nstart: 2024-01-01\ntags: [core]\n*/\nSELECT * FROM {{ source(\"raw.orders\") }}",
	"models/marts/daily_revenue.sql": "/* refill\npartition_by: order_date\ngrain: day\nstart: 2024-01-01\ntags: [finance]\n*/\n" +
		"SELECT * FROM {{ ref(\"staging.orders\") }}",
	"models/marts/monthly_revenue.sql": "/* refill\npartition_by: month\ngrain: month\nstart: 2024-01-01\ntags: [finance]\n*/\n" +
		"SELECT * FROM {{ ref(\"daily_revenue\") }}",
	"models/marts/rolling.sql": "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ndepends_on_past: 6\n*/\n" +
		"SELECT * FROM {{ ref(\"daily_revenue\") }}",
	"models/marts/by_region.sql": "/* refill\npartition_by: region\nvalues: [eu, us]\n*/\nSELECT * FROM {{ ref(\"staging.orders\") }}",
	"models/summary.sql":         "SELECT * FROM {{ ref(\"monthly_revenue\") }}",
	"models/hourly.sql":          "/* refill\npartition_by: h\ngrain: hour\nstart: 2024-01-01\n*/\nSELECT 1",
	"models/from_hourly.sql":     "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT * FROM {{ ref(\"hourly\") }}",
	"models/daily_of_month.sql":  "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT * FROM {{ ref(\"monthly_revenue\") }}",
}

func names(ms []*Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func TestGraphOrder(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, shop)
	pos := map[string]int{}
	for i, m := range p.Graph.Order {
		pos[m.Name] = i
	}
	for _, m := range p.Models {
		for _, up := range m.Upstream {
			if pos[up.Name] >= pos[m.Name] {
				t.Errorf("%s comes before its upstream %s", m.Name, up.Name)
			}
		}
	}
}

func TestCycle(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{
		"models/a.sql": "SELECT * FROM {{ ref(\"c\") }}",
		"models/b.sql": "SELECT * FROM {{ ref(\"a\") }}",
		"models/c.sql": "SELECT * FROM {{ ref(\"b\") }}",
		"models/d.sql": "SELECT * FROM {{ ref(\"a\") }}",
	})
	var cycle *CycleError
	if !errors.As(err, &cycle) {
		t.Fatalf("want a CycleError, got %v", err)
	}
	want := "models form a cycle through ref(): a (models/a.sql) -> b (models/b.sql) -> c (models/c.sql) -> a (models/a.sql)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, shop)
	for _, tc := range []struct {
		sel, excl []string
		want      []string
	}{
		{[]string{"daily_revenue"}, nil, []string{"marts.daily_revenue"}},
		{[]string{"daily_revenue+"}, nil, []string{"marts.daily_revenue", "marts.monthly_revenue", "marts.rolling", "daily_of_month", "summary"}},
		{[]string{"+monthly_revenue"}, nil, []string{"staging.orders", "marts.daily_revenue", "marts.monthly_revenue"}},
		{[]string{"tag:finance"}, nil, []string{"marts.daily_revenue", "marts.monthly_revenue"}},
		{[]string{"staging/*"}, nil, []string{"staging.orders"}},
		{[]string{"marts/"}, []string{"marts.rolling", "by_region"}, []string{"marts.daily_revenue", "marts.monthly_revenue"}},
		{[]string{"hourly, summary", "tag:core"}, nil, []string{"hourly", "staging.orders", "summary"}},
		{[]string{"orders+"}, []string{"tag:finance+"}, []string{"staging.orders", "marts.by_region"}},
	} {
		got, err := p.Select(tc.sel, tc.excl)
		if err != nil {
			t.Errorf("Select(%v, %v): %v", tc.sel, tc.excl, err)
			continue
		}
		if diff := cmp.Diff(sorted(tc.want), sorted(names(got))); diff != "" {
			t.Errorf("Select(%v, %v) (-want +got):\n%s", tc.sel, tc.excl, diff)
		}
	}
	for _, bad := range []string{"daily_revenu", "tag:nope", "nowhere/*", "+"} {
		if _, err := p.Select([]string{bad}, nil); err == nil {
			t.Errorf("Select(%q) succeeded", bad)
		}
	}
	if _, err := p.Select([]string{"daily_revenu"}, nil); !strings.Contains(err.Error(), `did you mean "daily_revenue"`) {
		t.Errorf("no suggestion: %v", err)
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestMapping covers every partition-mapping case between grains.
func TestMapping(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, shop)
	get := func(n string) *Model { return mustModel(t, p, n) }
	part := func(m *Model, key string) Partition {
		t.Helper()
		pp, err := m.Partition(key)
		if err != nil {
			t.Fatal(err)
		}
		return pp
	}
	// upstreamKeys lists the partitions of up within Jan-Feb 2024 that
	// partition key of down depends on.
	upstreamKeys := func(down *Model, key string, up *Model) []string {
		span := DependencySpan(down, part(down, key), up)
		var out []string
		for _, u := range up.Partitions(date("2023-12-01"), date("2024-02-29")) {
			if span.Overlaps(up, u) {
				out = append(out, u.Key)
			}
		}
		return out
	}
	days := func(from, to string) []string {
		return keys(get("staging.orders").Partitions(date(from), date(to)))
	}
	for _, tc := range []struct {
		name, down, key, up string
		want                []string
	}{
		{"day to day", "marts.daily_revenue", "2024-01-10", "staging.orders", []string{"2024-01-10"}},
		{"month reads days", "marts.monthly_revenue", "2024-02", "marts.daily_revenue", days("2024-02-01", "2024-02-29")},
		{"day reads month", "daily_of_month", "2024-01-10", "marts.monthly_revenue", []string{"2024-01"}},
		{"day reads hours", "from_hourly", "2024-01-10", "hourly", nil}, // filled below
		{"rolling window", "marts.rolling", "2024-01-10", "marts.daily_revenue", days("2024-01-04", "2024-01-10")},
		{"rolling clipped at start", "marts.rolling", "2024-01-02", "marts.daily_revenue", days("2024-01-01", "2024-01-02")},
		{"list reads everything", "marts.by_region", "eu", "staging.orders", days("2024-01-01", "2024-02-29")},
		{"table reads everything", "summary", WholeTableKey, "marts.monthly_revenue", []string{"2024-01", "2024-02"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if tc.name == "day reads hours" {
				h := get("hourly")
				want = keys(h.Partitions(time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 10, 23, 0, 0, 0, time.UTC)))
				if len(want) != 24 {
					t.Fatalf("%d hours in a day", len(want))
				}
			}
			got := upstreamKeys(get(tc.down), tc.key, get(tc.up))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// Dependents is the inverse: which downstream partitions read u.
	for _, tc := range []struct {
		down, up, key string
		from, to      string
	}{
		{"marts.daily_revenue", "staging.orders", "2024-01-10", "2024-01-10", "2024-01-11"},
		{"marts.monthly_revenue", "marts.daily_revenue", "2024-01-10", "2024-01-01", "2024-02-01"},
		{"daily_of_month", "marts.monthly_revenue", "2024-01", "2024-01-01", "2024-02-01"},
		{"marts.rolling", "marts.daily_revenue", "2024-01-10", "2024-01-10", "2024-01-17"},
	} {
		from, to, all := Dependents(get(tc.down), get(tc.up), part(get(tc.up), tc.key))
		if all || !from.Equal(date(tc.from)) || !to.Equal(date(tc.to)) {
			t.Errorf("Dependents(%s of %s %s) = [%v, %v) all=%v; want [%s, %s)", tc.down, tc.up, tc.key, from, to, all, tc.from, tc.to)
		}
	}
	if _, _, all := Dependents(get("summary"), get("marts.monthly_revenue"), part(get("marts.monthly_revenue"), "2024-01")); !all {
		t.Error("a whole-table model does not depend on every upstream partition")
	}
}
