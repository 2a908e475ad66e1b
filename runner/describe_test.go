package runner

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// describer records the queries it is asked to describe.
type describer struct {
	adapters.Adapter // nil: only Dialect and Describe are called
	queries          []string
}

func (d *describer) Dialect() models.Dialect { return duckdb.Dialect{} }

// shapes is a describer that is an adapters.ShapeDescriber.
type shapes struct{ describer }

func (*shapes) DescribesShapes() {}

func (d *describer) Describe(_ context.Context, q string, _ adapters.Tag) ([]adapters.TableColumn, error) {
	d.queries = append(d.queries, q)
	return []adapters.TableColumn{{Name: "d", Type: "DATE"}}, nil
}

// A run describes a model's query once for all the units whose queries
// differ only in date and timestamp literals (the windows', and the day
// before them), and again once a table's columns may have changed; a
// query that differs in anything else is described on its own.
func TestDescribeOncePerQueryShape(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")},
		"models/days.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT d, {{ start }} AS since, {{ end }} AS until, {{ date_add(start, -1, \"day\") }} AS before FROM src.t WHERE d >= {{ start }} AND d < {{ end }}")},
		"models/hours.sql": {Data: []byte("/* refill\npartition_by: h\ngrain: hour\nstart: 2024-01-01\n*/\n" +
			"SELECT h FROM src.t WHERE h >= {{ start }} AND h < {{ end }}")},
		"models/keyed.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\n" +
			"SELECT d, {{ partition }} AS k FROM src.t WHERE d >= {{ start }} AND d < {{ end }}")},
	}
	p, err := models.Load(fsys, models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}})
	if err != nil {
		t.Fatal(err)
	}
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main"}
	ctx := context.Background()
	s := &shapes{}
	a := &s.describer
	e := &execution{r: &Runner{}}
	e.r.Adapter = s
	describe := func(name string, i int) {
		t.Helper()
		m, err := p.Model(name)
		if err != nil {
			t.Fatal(err)
		}
		parts := m.Partitions(m.Config.Start, m.Config.Start.AddDate(0, 0, 40))
		q, err := m.Render(scope, parts[i], parts[i+1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.describe(ctx, m, q, false, adapters.Tag{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		describe("days", i)
		describe("hours", i)
	}
	if len(a.queries) != 2 {
		t.Fatalf("described %d queries of days and hours, want 2:\n%q", len(a.queries), a.queries)
	}
	m, _ := p.Model("days")
	e.columns.forget(scope.Relation(m))
	describe("hours", 0)
	describe("hours", 30)
	if len(a.queries) != 3 {
		t.Fatalf("after a table's columns changed, described %d queries, want 3", len(a.queries))
	}
	for i := range 3 {
		describe("keyed", i)
	}
	if len(a.queries) != 6 {
		t.Fatalf("a query with its partition's key: described %d queries, want 6:\n%q", len(a.queries), a.queries[3:])
	}
	// A query reading overlays, and every query of an adapter that does
	// not say literals leave types alone, is described every time.
	m, _ = p.Model("hours")
	hours := m.Partitions(m.Config.Start, m.Config.Start.AddDate(0, 0, 1))
	for _, c := range []struct {
		name     string
		a        *describer
		adapter  adapters.Adapter
		overlaid bool
	}{{"overlaid", a, s, true}, {"no ShapeDescriber", &describer{}, nil, false}} {
		if c.adapter == nil {
			c.adapter = c.a
		}
		e.r.Adapter = c.adapter
		n := len(c.a.queries)
		for i := range 3 {
			q, err := m.Render(scope, hours[i])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.describe(ctx, m, q, c.overlaid, adapters.Tag{}); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(c.a.queries) - n; got != 3 {
			t.Errorf("%s: described %d queries, want 3", c.name, got)
		}
	}
}
