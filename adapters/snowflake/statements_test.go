package snowflake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

var (
	d      = snowflake.Dialect{}
	at     = time.Date(2024, 1, 5, 6, 7, 8, 0, time.UTC)
	stageS = "refill_stage"
)

func rec(model, key string, start time.Time, width time.Duration) adapters.Record {
	return adapters.Record{Model: model, Partition: key, State: adapters.RecordDone, Fingerprint: "0123456789abcdef", Rows: 42,
		RunID: "20240105T060708Z-abcdef", Attempts: 1, WindowStart: start, WindowEnd: start.Add(width), StartedAt: at, FinishedAt: at, PublishedAt: at}
}

// TestStatements records what the adapter issues for each kind of call a
// backfill makes: testdata/statements.sql is the log of the real adapter
// code, run against a fake account that answers as Snowflake would (see
// fakeSnowflake) but keeps no data.
func TestStatements(t *testing.T) {
	rec := recorder.New()
	got := adaptertest.Script(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openFake(t, s, rec, newFakeSnowflake())
	})
	adaptertest.Golden(t, "testdata/statements.sql", got)
}

func TestLedgerWritesAreChunked(t *testing.T) {
	t.Parallel()
	records := make([]adapters.Record, 2500)
	for i := range records {
		records[i] = rec("events.hourly", time.Duration(i).String(), at.Add(time.Duration(i)*time.Hour), time.Hour)
	}
	var deletes, inserts, rows int
	for _, q := range snowflake.RecordStatements(d, "refill", records) {
		switch {
		case strings.HasPrefix(q, "DELETE"):
			deletes++
		case strings.HasPrefix(q, "INSERT"):
			inserts++
			rows += strings.Count(q, "\n  (")
		}
	}
	if deletes != 3 || inserts != 3 || rows != 2500 {
		t.Errorf("2500 records: %d DELETEs, %d INSERTs of %d rows; want 3, 3 and 2500", deletes, inserts, rows)
	}
}

func TestSeedInsertsAreChunked(t *testing.T) {
	seed := &models.Seed{Columns: []models.Column{{Name: "id", Type: models.TypeInt}}}
	for i := range 20000 {
		seed.Rows = append(seed.Rows, []any{int64(i)})
	}
	stmts := snowflake.SeedStatements(d, seed, models.Relation{Schema: "raw", Name: "ids"}, models.Relation{Schema: stageS, Name: "load"})
	rows := 0
	for _, q := range stmts {
		if strings.HasPrefix(q, "INSERT") {
			n := strings.Count(q, "\n  (")
			if n > 16384 {
				t.Errorf("an INSERT carries %d rows, over Snowflake's 16,384", n)
			}
			rows += n
		}
	}
	if rows != 20000 || !strings.HasPrefix(stmts[len(stmts)-2], "CREATE OR REPLACE TABLE") {
		t.Errorf("seed statements insert %d rows (want 20000) and end with %q", rows, stmts[len(stmts)-2])
	}
}
