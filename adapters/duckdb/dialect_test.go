package duckdb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// TestRenderShop pins the DuckDB SQL of every model of the example project.
func TestRenderShop(t *testing.T) {
	adaptertest.Golden(t, "testdata/shop.sql", adaptertest.RenderShop(t, duckdb.Dialect{}, "main"))
}

// TestStatements pins every statement shape the adapter issues.
func TestStatements(t *testing.T) {
	d := duckdb.Dialect{}
	day := func(s string) time.Time { v, _ := time.Parse("2006-01-02", s); return v }
	at := time.Date(2024, 1, 5, 6, 7, 8, 0, time.UTC)
	rec := func(key string, start time.Time) adapters.Record {
		return adapters.Record{Model: "marts.daily", Partition: key, State: adapters.StateDone, Fingerprint: "0123456789abcdef",
			Rows: 42, RunID: "20240105T060708Z-abcdef", Attempts: 1, WindowStart: start, WindowEnd: start.Add(24 * time.Hour),
			StartedAt: at, FinishedAt: at, PublishedAt: at}
	}
	stage := func(name string, w adapters.Window) *adapters.Stage {
		return &adapters.Stage{Relation: models.Relation{Schema: "refill_stage", Name: name}, Target: models.Relation{Schema: "marts", Name: "daily"}, Window: w}
	}
	var b strings.Builder
	section := func(title string, stmts ...string) {
		b.WriteString("-- " + title + "\n")
		for _, s := range stmts {
			b.WriteString(s + ";\n")
		}
		b.WriteString("\n")
	}
	section("ledger", duckdb.LedgerStatements(d, "refill")...)
	daily := adapters.Window{Column: "order_date", Start: day("2024-01-02"), End: day("2024-01-03"), Location: time.UTC}
	section("publish one day", duckdb.PublishStatements(d, "refill", []adapters.Swap{{Stage: stage("marts__daily__1", daily),
		Records: []adapters.Record{rec("2024-01-02", day("2024-01-02"))}}})...)
	batch := adapters.Window{Column: "order_date", Start: day("2024-01-02"), End: day("2024-01-05"), Location: time.UTC}
	section("publish a batch of three days", duckdb.PublishStatements(d, "refill", []adapters.Swap{{Stage: stage("marts__daily__2", batch),
		Records: []adapters.Record{rec("2024-01-02", day("2024-01-02")), rec("2024-01-03", day("2024-01-03")), rec("2024-01-04", day("2024-01-04"))}}})...)
	hourly := adapters.Window{Column: "ts", Start: at.Truncate(time.Hour), End: at.Truncate(time.Hour).Add(time.Hour), Timestamp: true}
	section("publish an hour", duckdb.PublishStatements(d, "refill", []adapters.Swap{{Stage: stage("marts__hourly__3", hourly)}})...)
	list := adapters.Window{Column: "region", Values: []any{"eu", "it's"}}
	section("publish list values", duckdb.PublishStatements(d, "refill", []adapters.Swap{{Stage: stage("marts__by_region__4", list)}})...)
	section("publish a whole table", duckdb.PublishStatements(d, "refill", []adapters.Swap{{Stage: stage("marts__all__5", adapters.Window{})}})...)
	section("publish two tables together", duckdb.PublishStatements(d, "refill", []adapters.Swap{
		{Stage: stage("marts__daily__6", daily), Records: []adapters.Record{rec("2024-01-02", day("2024-01-02"))}},
		{Stage: &adapters.Stage{Relation: models.Relation{Schema: "refill_stage", Name: "marts__monthly__7"}, Target: models.Relation{Schema: "marts", Name: "monthly"},
			Window: adapters.Window{Column: "month_start", Start: day("2024-01-01"), End: day("2024-02-01"), Location: time.UTC}}},
	})...)
	section("overlay", duckdb.OverlaySQL(d, models.Relation{Schema: "refill_stage", Name: "marts__daily__overlay"}, models.Relation{Schema: "marts", Name: "daily"}, true,
		[]*adapters.Stage{stage("marts__daily__1", daily), stage("marts__daily__2", batch)}))
	seed := &models.Seed{Columns: []models.Column{{Name: "id", Type: models.TypeInt}, {Name: "name", Type: models.TypeString}, {Name: "day", Type: models.TypeDate}},
		Rows: [][]any{{int64(1), "O'Brien", day("2024-01-02")}, {int64(2), nil, day("2024-01-03")}}}
	section("seed", duckdb.SeedStatements(d, seed, models.Relation{Schema: "raw", Name: "people"})...)
	adaptertest.Golden(t, "testdata/statements.sql", b.String())
}
