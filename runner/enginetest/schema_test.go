package enginetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// Schema changes: every case ends with the right columns and rows, or a
// refused swap that leaves the table as it was.

// schemaModel renders a daily model over src with the given extra
// configuration and select list, which reads src's columns as sd and sv
// (ClickHouse 18.16 would take a filter on d for one on an output column
// called d).
func schemaModel(config, selectList string) string {
	return "/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n" + config + "*/\n" +
		"SELECT " + selectList + " FROM (SELECT d AS sd, v AS sv FROM {{ source(\"SCHEMA.src\") }}) AS s WHERE sd >= {{ start }} AND sd < {{ end }}"
}

// runAll plans and runs model m.sql over the first three days of 2024.
func runAll(h *adaptertest.Harness, model string, sel plan.Selection) *runner.Summary {
	h.T().Helper()
	r := project(h, map[string]string{"m.sql": model})
	if sel.From == "" && !sel.FullRefresh {
		sel.From, sel.To = "2024-01-01", "2024-01-03"
	}
	sel.Now = adaptertest.Day("2024-02-01")
	pl, err := r.Plan(h.Ctx, sel)
	if err != nil {
		h.T().Fatalf("plan: %v", err)
	}
	s, err := r.Run(h.Ctx, pl, runner.RunOptions{Concurrency: 2})
	if err != nil {
		h.T().Fatalf("run: %v", err)
	}
	return s
}

// columns returns the table's columns as "name type" with types in
// families, for comparisons across warehouses.
func columnNames(h *adaptertest.Harness, table models.Relation) []string {
	h.T().Helper()
	cols, err := h.A.Columns(h.Ctx, table)
	if err != nil {
		h.T().Fatal(err)
	}
	var out []string
	for _, c := range cols {
		out = append(out, strings.ToLower(c.Name))
	}
	return out
}

// refusedBySchema checks that every partition of s failed with a schema
// error mentioning want.
func refusedBySchema(t *testing.T, s *runner.Summary, want string) {
	t.Helper()
	if s.Failed == 0 || s.Succeeded != 0 {
		t.Fatalf("want every partition refused, got %d succeeded, %d failed", s.Succeeded, s.Failed)
	}
	for _, p := range s.Partitions {
		var se *plan.SchemaError
		if p.Status == runner.Failed && (!errors.As(p.Err, &se) || !strings.Contains(p.Err.Error(), want)) {
			t.Errorf("%s: %v; want a schema error about %q", p.Partition, p.Err, want)
		}
	}
}

func testSchemaChanges(t *testing.T, h *adaptertest.Harness) {
	d := h.D()
	h.Seed("src", row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
	target := h.Rel("m")
	intType, floatType, stringType := d.ColumnType(models.TypeInt32), d.ColumnType(models.TypeFloat), d.ColumnType(models.TypeString)
	v1 := schemaModel("", fmt.Sprintf("sd AS d, CAST(sv AS %s) AS v", intType))
	if s := runAll(h, v1, plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("v1: %+v", s)
	}
	before := h.Rows(target)

	// A new column: refused by default, the table untouched.
	v2 := fmt.Sprintf("sd AS d, CAST(sv AS %s) AS v, CAST(sv * 10 AS %s) AS w", intType, intType)
	refusedBySchema(t, runAll(h, schemaModel("", v2), plan.Selection{}), "+ w")
	if cols := columnNames(h, target); fmt.Sprint(cols) != "[d v]" {
		t.Errorf("a refused change altered the table: %v", cols)
	}
	h.WantRows(target, before...)

	// append adds it, and every partition (stale) is rebuilt with it.
	if s := runAll(h, schemaModel("on_schema_change: append\n", v2), plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("append: %+v", s.Partitions)
	}
	if cols := columnNames(h, target); fmt.Sprint(cols) != "[d v w]" {
		t.Errorf("after append: %v", cols)
	}
	res, err := h.A.Query(h.Ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s = %s * 10", target.Quote(d), d.QuoteIdent("w"), d.QuoteIdent("v")), adapters.Tag{})
	if err != nil || adapters.Int(res.Rows[0][0]) != 3 {
		t.Errorf("after append, w is filled in %v rows (%v), want 3", res, err)
	}

	// Dropping v: append refuses; sync drops it.
	v3 := fmt.Sprintf("sd AS d, CAST(sv * 10 AS %s) AS w", intType)
	refusedBySchema(t, runAll(h, schemaModel("on_schema_change: append\n", v3), plan.Selection{}), "- v")
	if s := runAll(h, schemaModel("on_schema_change: sync\n", v3), plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("sync drop: %+v", s.Partitions)
	}
	if cols := columnNames(h, target); fmt.Sprint(cols) != "[d w]" {
		t.Errorf("after sync: %v", cols)
	}

	// Widening w to a floating type: append refuses, sync widens.
	v4 := fmt.Sprintf("sd AS d, CAST(sv * 10 AS %s) + 0.5 AS w", floatType)
	refusedBySchema(t, runAll(h, schemaModel("on_schema_change: append\n", v4), plan.Selection{}), "~ w")
	if s := runAll(h, schemaModel("on_schema_change: sync\n", v4), plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("sync widen: %+v", s.Partitions)
	}
	res, err = h.A.Query(h.Ctx, fmt.Sprintf("SELECT sum(%s) FROM %s", d.QuoteIdent("w"), target.Quote(d)), adapters.Tag{})
	if err != nil || fmt.Sprint(adapters.Normalize(res.Rows[0][0])) != "61.5" {
		t.Errorf("after widening, sum(w) = %v (%v), want 61.5", res, err)
	}

	// Retyping w as text loses nothing of a number, but changes its type:
	// refused under every policy but a rebuild.
	v5 := fmt.Sprintf("sd AS d, CAST(sv AS %s) AS w", stringType)
	refusedBySchema(t, runAll(h, schemaModel("on_schema_change: sync\n", v5), plan.Selection{}), "--full-refresh")
	// (A rebuild holds every partition of January, the month before the
	// test's clock.)
	if s := runAll(h, schemaModel("on_schema_change: sync\n", v5), plan.Selection{FullRefresh: true}); s.Succeeded != 31 || s.Failed != 0 {
		t.Fatalf("full refresh: %+v", s.Partitions)
	}
	cols, _ := h.A.Columns(h.Ctx, target)
	if len(cols) != 2 || h.A.Fit(cols[1].Type, stringType) == adapters.FitLossy {
		t.Errorf("after the full refresh: %v", cols)
	}

	// The partition column's type changes: only a rebuild, which
	// on_schema_change: rebuild plans on its own.
	ts := d.ColumnType(models.TypeTimestamp)
	v6 := fmt.Sprintf("CAST(sd AS %s) AS d, CAST(sv AS %s) AS w", ts, stringType)
	refusedBySchema(t, runAll(h, schemaModel("on_schema_change: sync\npartition_type: timestamp\n", v6), plan.Selection{}), "partition column")
	if s := runAll(h, schemaModel("on_schema_change: rebuild\npartition_type: timestamp\n", v6), plan.Selection{}); s.Succeeded != 31 || s.Failed != 0 {
		t.Fatalf("rebuild: %+v", s.Partitions)
	}
	cols, _ = h.A.Columns(h.Ctx, target)
	if len(cols) != 2 || h.A.Fit(ts, cols[0].Type) == adapters.FitLossy {
		t.Errorf("after the rebuild, the partition column is %v, want %s", cols, ts)
	}
	recs, _ := h.A.Partitions(h.Ctx, []string{"m"})
	if len(recs) != 31 {
		t.Errorf("after the rebuild the ledger has %d records, want 31", len(recs))
	}
}

func testDeclaredColumns(t *testing.T, h *adaptertest.Harness) {
	d := h.D()
	h.Seed("src", row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
	target := h.Rel("m")
	decl := "columns:\n  d: date\n  v: bigint\n  label: varchar\n"
	// The first attempt fails verification: the table exists, empty, with
	// the declared columns, never with the failing query's.
	bad := schemaModel(decl, fmt.Sprintf("%s AS d, sv AS v, CAST('x' AS %s) AS label", d.Date(adaptertest.Day("2023-01-01")), d.ColumnType(models.TypeString)))
	s := runAll(h, bad, plan.Selection{})
	if s.Failed != 3 {
		t.Fatalf("rows outside the window: %+v", s.Partitions)
	}
	cols, err := h.A.Columns(h.Ctx, target)
	if err != nil || len(cols) != 3 || h.A.Fit(cols[1].Type, d.ColumnType(models.TypeInt)) != adapters.FitSame {
		t.Errorf("after a failed first attempt the table has %v (%v); want the declared d, v bigint, label", cols, err)
	}
	// A query whose columns differ from the declared ones is refused.
	extra := schemaModel(decl, fmt.Sprintf("sd AS d, sv AS v, CAST('x' AS %s) AS label, 1 AS surprise", d.ColumnType(models.TypeString)))
	refusedBySchema(t, runAll(h, extra, plan.Selection{}), "surprise")
	lossy := schemaModel(decl, fmt.Sprintf("sd AS d, CAST(sv AS %s) + 0.5 AS v, CAST('x' AS %s) AS label", d.ColumnType(models.TypeFloat), d.ColumnType(models.TypeString)))
	refusedBySchema(t, runAll(h, lossy, plan.Selection{}), "values would change")
	good := schemaModel(decl, fmt.Sprintf("sd AS d, sv AS v, CAST('x' AS %s) AS label", d.ColumnType(models.TypeString)))
	if s := runAll(h, good, plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("good: %+v", s.Partitions)
	}
	h.WantRows(target, row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
}

func testFullRefresh(t *testing.T, h *adaptertest.Harness) {
	h.Seed("src", row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
	target := h.Rel("m")
	if s := runAll(h, dailyModel, plan.Selection{}); s.Succeeded != 3 {
		t.Fatalf("first: %+v", s)
	}
	h.Seed("src", row("2024-01-01", 10), row("2024-01-02", 20), row("2024-01-03", 30), row("2024-01-04", 40))
	r := project(h, map[string]string{"m.sql": dailyModel})
	pl, err := r.Plan(h.Ctx, plan.Selection{FullRefresh: true, Now: adaptertest.Day("2024-01-05")})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps()) != 4 || pl.Steps()[0].Reason != plan.ReasonRebuild || !pl.Rebuild[pl.Steps()[0].Model] {
		t.Fatalf("full refresh plan: %+v", pl.Steps())
	}
	s, err := r.Run(h.Ctx, pl, runner.RunOptions{Batch: 2})
	if err != nil || s.Succeeded != 4 {
		t.Fatalf("full refresh: %+v, %v", s, err)
	}
	h.WantRows(target, row("2024-01-01", 10), row("2024-01-02", 20), row("2024-01-03", 30), row("2024-01-04", 40))
	recs, _ := h.A.Partitions(h.Ctx, []string{"m"})
	published := map[string]bool{}
	for _, rec := range recs {
		published[rec.PublishedAt.String()] = true
		if rec.State != adapters.RecordDone {
			t.Errorf("%s is %s after the rebuild", rec.Partition, rec.State)
		}
	}
	if len(recs) != 4 || len(published) != 1 {
		t.Errorf("the rebuild recorded %d partitions at %d moments; want 4 at one", len(recs), len(published))
	}
	// A model may forbid it.
	forbidding := project(h, map[string]string{"m.sql": strings.Replace(dailyModel, "start: 2024-01-01\n", "start: 2024-01-01\nfull_refresh: false\n", 1)})
	if _, err := forbidding.Plan(h.Ctx, plan.Selection{FullRefresh: true, Now: adaptertest.Day("2024-01-05")}); err == nil || !strings.Contains(err.Error(), "full_refresh: false") {
		t.Errorf("a full refresh of a model that forbids it: %v", err)
	}
}
