package enginetest

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// runnerTests are the checks of the runner on a real adapter: what the
// adapter suite (adaptertest) cannot see from the adapter alone.
var runnerTests = []adaptertest.Test{
	{Name: "OutOfWindowRowsAreRefused", Fn: testRefused},
	{Name: "RunnerBackfillsAndResumes", Fn: testRunner},
	{Name: "SchemaChanges", Fn: testSchemaChanges},
	{Name: "DeclaredColumns", Fn: testDeclaredColumns},
	{Name: "FullRefresh", Fn: testFullRefresh},
}

// project builds an in-memory project whose models read the suite's source
// table, and a runner for it.
func project(h *adaptertest.Harness, files map[string]string) *runner.Runner {
	h.T().Helper()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  t: {adapter: test}\n")}}
	for k, v := range files {
		fsys["models/"+k] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(v, "SCHEMA", h.S.Default))}
	}
	p, err := models.Load(fsys, models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		h.T().Fatal(err)
	}
	return &runner.Runner{Reader: plan.Reader{Project: p, Adapter: h.A, Scope: &models.Scope{Dialect: h.D(), Schema: h.S.Default, Vars: p.Vars}}, Target: "t"}
}

const dailyModel = `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT d, v FROM {{ source("SCHEMA.src") }} WHERE d >= {{ start }} AND d < {{ end }}`

func testRefused(t *testing.T, h *adaptertest.Harness) {
	h.Seed("src", row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
	r := project(h, map[string]string{"m.sql": dailyModel})
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-03", Now: adaptertest.Day("2024-02-01")}
	pl, err := r.Plan(h.Ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := r.Run(h.Ctx, pl, runner.RunOptions{}); err != nil || s.Failed != 0 {
		t.Fatalf("first run: %+v, %v", s, err)
	}
	// Off by one: every window also takes the next day.
	bad := project(h, map[string]string{"m.sql": strings.Replace(dailyModel, "d < {{ end }}", "d <= {{ end }}", 1)})
	sel.Mode = plan.ModeAll
	pl, _ = bad.Plan(h.Ctx, sel)
	s, err := bad.Run(h.Ctx, pl, runner.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var verr *runner.VerifyError
	if s.Failed != 2 || !errors.As(s.Partitions[0].Err, &verr) {
		t.Errorf("want 2 partitions refused by verification (the last window has no next day), got %+v", s.Partitions)
	}
	h.WantRows(h.Rel("m"), row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3))
}

func testRunner(t *testing.T, h *adaptertest.Harness) {
	h.Seed("src", row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3), row("2024-01-05", 5))
	r := project(h, map[string]string{
		"m.sql": dailyModel,
		"agg.sql": `/* refill
partition_by: month
grain: month
start: 2024-01-01
*/
SELECT {{ cast_date(date_trunc("month", ident("d"))) }} AS month, sum(v) AS total, count(*) AS n
FROM {{ ref("m") }} WHERE d >= {{ start }} AND d < {{ end }}
GROUP BY {{ cast_date(date_trunc("month", ident("d"))) }}`,
	})
	// Five days do not make a month: the month reaches past the range, and
	// is left out until every day of it is built.
	partial, err := r.Plan(h.Ctx, plan.Selection{From: "2024-01-01", To: "2024-01-05", Now: adaptertest.Day("2024-02-01")})
	if err != nil {
		t.Fatal(err)
	}
	if len(partial.Steps()) != 5 || len(partial.Blocked()) != 0 || len(partial.Notes) != 1 || !strings.Contains(partial.Notes[0], "(m 2024-01-06)") {
		t.Fatalf("plan of five days has %d steps, blocked %+v and notes %q; want the five days, and the month left out past 2024-01-06", len(partial.Steps()), partial.Blocked(), partial.Notes)
	}
	sel := plan.Selection{From: "2024-01-01", To: "2024-01-31", Now: adaptertest.Day("2024-02-01")}
	pl, err := r.Plan(h.Ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps()) != 32 || len(pl.Blocked()) != 0 {
		t.Fatalf("plan has %d steps and %d blocked, want 31 days and a month", len(pl.Steps()), len(pl.Blocked()))
	}
	s, err := r.Run(h.Ctx, pl, runner.RunOptions{Batch: 2})
	if err != nil || s.Failed != 0 || s.Succeeded != 32 {
		t.Fatalf("run: %+v, %v", s, err)
	}
	h.WantRows(h.Rel("m"), row("2024-01-01", 1), row("2024-01-02", 2), row("2024-01-03", 3), row("2024-01-05", 5))
	res, err := h.A.Query(h.Ctx, "SELECT total, n FROM "+h.Rel("agg").Quote(h.D()), adapters.Tag{})
	if err != nil || len(res.Rows) != 1 || adapters.Int(res.Rows[0][0]) != 11 || adapters.Int(res.Rows[0][1]) != 4 {
		t.Errorf("agg = %v, %v", res, err)
	}
	recs, _ := h.A.Partitions(h.Ctx, []string{"m"})
	rows := map[string]int64{}
	for _, rec := range recs {
		rows[rec.Partition] = rec.Rows
	}
	if rows["2024-01-04"] != 0 || rows["2024-01-05"] != 1 || len(rows) != 31 {
		t.Errorf("ledger rows per partition = %v", rows)
	}
	again, _ := r.Plan(h.Ctx, sel)
	if len(again.Steps()) != 0 {
		t.Errorf("a rerun plans %d steps, want none", len(again.Steps()))
	}
}
