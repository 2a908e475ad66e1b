package snowflake_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snowflakedb/gosnowflake"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

// ledgerRows renders values of the ledger's columns cols as gosnowflake
// hands them to database/sql: numbers as decimal strings, timestamps as
// times, text as strings.
func ledgerRows(cols []sqlkit.Column, values ...[]any) *recorder.Rows {
	described := make([]column, len(cols))
	for i, c := range cols {
		kind := "TEXT"
		switch c.Type {
		case models.TypeInt:
			kind = "FIXED"
		case models.TypeTimestamp:
			kind = "TIMESTAMP_NTZ"
		}
		described[i] = column{strings.ToUpper(c.Name), kind}
	}
	var out [][]driver.Value
	for _, row := range values {
		vals := make([]driver.Value, len(row))
		for i, v := range row {
			if n, ok := v.(int); ok {
				v = strconv.Itoa(n)
			}
			vals[i] = v
		}
		out = append(out, vals)
	}
	return rows(described, out...)
}

func schemasFor() adaptertest.Schemas {
	return adaptertest.Schemas{Default: "shop", Ledger: "refill", Stage: "refill_stage"}
}

// withLedger opens the adapter on a fake account and sets up its ledger.
func withLedger(t *testing.T) (*fakeSnowflake, *recorder.Recorder, *snowflake.Adapter) {
	t.Helper()
	f, rec := newFakeSnowflake(), recorder.New()
	a := openFake(t, schemasFor(), rec, f)
	if err := a.SetupLedger(t.Context()); err != nil {
		t.Fatal(err)
	}
	return f, rec, a
}

// TestLedgerReadsSnowflakeValues reads every kind of ledger row as
// gosnowflake returns it (NUMBER as strings, TIMESTAMP_NTZ as times).
func TestLedgerReadsSnowflakeValues(t *testing.T) {
	t.Parallel()
	f, _, a := withLedger(t)
	ctx := t.Context()
	start := at.Add(-24 * time.Hour)
	record := adapters.Record{Model: "daily", Partition: "2024-01-04", State: adapters.RecordFailed, Fingerprint: "fp", Rows: 7, RunID: "r1",
		Attempts: 3, WindowStart: start, WindowEnd: at, StartedAt: at, FinishedAt: at.Add(time.Second), Error: "it's broken"}
	run := &adapters.Run{ID: "r1", Target: "prod", Status: adapters.RunFailed, Selection: "{}", Host: "h", PID: 9, StartedAt: at,
		FinishedAt: at.Add(time.Minute), Succeeded: 1, Failed: 2, Skipped: 3, Error: "boom"}
	lease := adapters.Lease{Table: "shop.daily", RunID: "r1", Host: "h", PID: 9, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)}
	version := adapters.Version{Model: "daily", Fingerprint: "fp", Text: "SELECT 1", CreatedAt: at}
	f.extra = func(q string) (*recorder.Rows, bool) {
		if !strings.HasPrefix(q, "SELECT") {
			return nil, false
		}
		switch {
		case strings.Contains(q, `"PARTITIONS"`):
			return ledgerRows(sqlkit.PartitionColumns, []any{"daily", "2024-01-04", "failed", "fp", 7, "r1", 3, start, at, at, at.Add(time.Second), nil, "it's broken", nil}), true
		case strings.Contains(q, `"RUNS"`):
			return ledgerRows(sqlkit.RunColumns, []any{"r1", "prod", "failed", "{}", "h", 9, at, at.Add(time.Minute), 1, 2, 3, "boom"}), true
		case strings.Contains(q, `"LEASES"`):
			return ledgerRows(sqlkit.LeaseColumns, []any{"shop.daily", "r1", "h", 9, at, at, at.Add(time.Minute)}), true
		case strings.Contains(q, `"VERSIONS"`):
			return ledgerRows(sqlkit.VersionColumns, []any{"daily", "fp", "SELECT 1", at, nil, nil, nil}), true
		}
		return nil, false
	}
	recs, err := a.Partitions(ctx, []string{"daily"})
	if err != nil || len(recs) != 1 || fmt.Sprint(recs[0]) != fmt.Sprint(record) {
		t.Errorf("Partitions = %+v, %v\nwant %+v", recs, err, record)
	}
	got, err := a.LoadRun(ctx, "r1")
	if err != nil || fmt.Sprint(*got) != fmt.Sprint(*run) {
		t.Errorf("LoadRun = %+v, %v\nwant %+v", got, err, run)
	}
	runs, err := a.Runs(ctx, 5)
	if err != nil || len(runs) != 1 || fmt.Sprint(*runs[0]) != fmt.Sprint(*run) {
		t.Errorf("Runs = %v, %v", runs, err)
	}
	leases, err := a.Leases(ctx)
	if err != nil || len(leases) != 1 || fmt.Sprint(leases[0]) != fmt.Sprint(lease) {
		t.Errorf("Leases = %+v, %v\nwant %+v", leases, err, lease)
	}
	versions, err := a.Versions(ctx, []string{"daily"})
	if err != nil || len(versions) != 1 || fmt.Sprint(versions[0]) != fmt.Sprint(version) {
		t.Errorf("Versions = %+v, %v\nwant %+v", versions, err, version)
	}
}

// TestLeaseHeld: when another run holds an unexpired lease, AcquireLease
// rolls its transaction back and names that run.
func TestLeaseHeld(t *testing.T) {
	t.Parallel()
	f, rec, a := withLedger(t)
	ctx := t.Context()
	f.extra = func(q string) (*recorder.Rows, bool) {
		if strings.HasPrefix(q, "SELECT") && strings.Contains(q, `"RUN_ID" <>`) {
			return ledgerRows(sqlkit.LeaseColumns, []any{"shop.daily", "other", "elsewhere", 7, at, at, at.Add(time.Hour)}), true
		}
		return nil, false
	}
	rec.Reset()
	err := a.AcquireLease(ctx, adapters.Lease{Table: "shop.daily", RunID: "mine", Host: "h", PID: 1, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)})
	var held *adapters.LeaseHeldError
	if !errors.As(err, &held) || held.Held.RunID != "other" || held.Held.PID != 7 {
		t.Fatalf("AcquireLease = %v, want a LeaseHeldError naming run other", err)
	}
	stmts := rec.Statements()
	if last := stmts[len(stmts)-1]; last != "ROLLBACK" || strings.Contains(strings.Join(stmts, ";"), "COMMIT") {
		t.Errorf("the lease's statements end with %q and commit: %q", last, stmts)
	}
}

// TestWarehouses: statements run on the warehouse their model names, and,
// once any did, every other unit selects the target's warehouse again,
// since a pooled connection may still be on another.
func TestWarehouses(t *testing.T) {
	f := newFakeSnowflake()
	rec := recorder.New()
	a := openFake(t, schemasFor(), rec, f)
	ctx := t.Context()
	big := loadModel("big", "snowflake: {warehouse: big_wh}\n")
	rec.Reset()
	st, err := a.Stage(ctx, adapters.StageRequest{Model: big, Target: models.Relation{Schema: "shop", Name: "big"}, Query: `SELECT 1 AS "V"`,
		Tag: adapters.Tag{RunID: "r", Model: "big", Step: "stage"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Query(ctx, "SELECT count(*) FROM "+st.Relation.Quote(a.Dialect()), adapters.Tag{Model: "big", Step: "verify"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Query(ctx, "SELECT 1", adapters.Tag{Model: "other", Step: "verify"}); err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, s := range rec.Statements() {
		if strings.HasPrefix(s, "USE WAREHOUSE") {
			uses = append(uses, s)
		}
	}
	want := []string{`USE WAREHOUSE "BIG_WH"`, `USE WAREHOUSE "BIG_WH"`, `USE WAREHOUSE "WH"`}
	if fmt.Sprint(uses) != fmt.Sprint(want) {
		t.Errorf("warehouse switches %q, want %q\n%s", uses, want, rec)
	}
}

// TestEstimate reads the bytes Snowflake's plan assigns to a query.
func TestEstimate(t *testing.T) {
	f := newFakeSnowflake()
	a := openFake(t, schemasFor(), recorder.New(), f)
	f.extra = func(q string) (*recorder.Rows, bool) {
		if strings.HasPrefix(q, "EXPLAIN USING JSON\n") {
			plan := `{"GlobalStats":{"partitionsTotal":10,"partitionsAssigned":4,"bytesAssigned":1024}}`
			return &recorder.Rows{Columns: []recorder.Column{{Name: "content", Type: "TEXT"}}, Values: [][]driver.Value{{plan}}}, true
		}
		return nil, false
	}
	e, err := a.Estimate(t.Context(), "SELECT 1")
	if err != nil || e.Bytes != 1024 || e.Rows != -1 || !strings.Contains(e.Note, "4 of 10") {
		t.Errorf("Estimate = %+v, %v", e, err)
	}
}

// TestTransientAndFit: the adapter's methods that need no statement.
func TestTransientAndFit(t *testing.T) {
	a := openFake(t, schemasFor(), recorder.New(), newFakeSnowflake())
	if a.Transient(errors.New("SQL compilation error")) || !a.Transient(&gosnowflake.SnowflakeError{Number: gosnowflake.ErrSessionGone}) {
		t.Error("Transient misclassifies a compilation error or a lost session")
	}
	if a.Fit("NUMBER(38,0)", "NUMBER(38,0)") != adapters.FitSame || a.Fit("NUMBER(10,0)", "NUMBER(38,0)") != adapters.FitLossless ||
		a.Fit("NUMBER(38,2)", "NUMBER(38,0)") != adapters.FitLossy {
		t.Error("Fit misjudges NUMBER widths")
	}
	if a.Dialect().Name() != "snowflake" || a.Info().Name != "snowflake" {
		t.Error("names")
	}
}
