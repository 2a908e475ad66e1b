package snowflake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

// statements renders sections of statements for a golden file.
type statements struct {
	b          strings.Builder
	stageReady bool // the stage schema was created by an earlier section
}

func (s *statements) section(title string, stmts ...string) {
	s.b.WriteString("-- " + title + "\n")
	for _, q := range stmts {
		s.b.WriteString(q + ";\n")
	}
	s.b.WriteString("\n")
}

var (
	d      = snowflake.Dialect{}
	at     = time.Date(2024, 1, 5, 6, 7, 8, 0, time.UTC)
	runID  = "20240105T060708Z-abcdef"
	stageS = "refill_stage"
)

func day(s string) time.Time {
	v, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return v
}

func rec(model, key string, start time.Time, width time.Duration) adapters.Record {
	r := adapters.Record{Model: model, Partition: key, State: adapters.StateDone, Fingerprint: "0123456789abcdef",
		Rows: 42, RunID: runID, Attempts: 1, StartedAt: at, FinishedAt: at, PublishedAt: at}
	if !start.IsZero() {
		r.WindowStart, r.WindowEnd = start, start.Add(width)
	}
	return r
}

func model(name string, cfg models.Config) *models.Model {
	return &models.Model{Name: name, Config: cfg}
}

// stage returns a stage of target (schema.table) named as Stage names it.
func stage(m *models.Model, target string, n int, w adapters.Window, partition string) *adapters.Stage {
	rel, err := models.ParseRelation(target)
	if err != nil {
		panic(err)
	}
	name := adapters.StagePrefix(rel) + "ab12cd_" + string(rune('0'+n))
	return &adapters.Stage{Relation: models.Relation{Schema: stageS, Name: name}, Target: rel, Model: m, Window: w,
		Tag: adapters.Tag{RunID: runID, Model: m.Name, Partition: partition, Step: "publish"}}
}

// unit renders every statement the adapter issues to stage, publish and
// drop swaps (one unit, or a --publish together), in the order it issues
// them; create makes it a first publish that creates the target tables.
func (s *statements) unit(title string, queries []string, swaps []adapters.Swap, cols [][]snowflake.Column, create bool) {
	var stmts []string
	for i, sw := range swaps {
		st := sw.Stage
		if w := st.Model.Config.Snowflake.Warehouse; w != "" {
			stmts = append(stmts, snowflake.UseWarehouseSQL(d, d.Fold(w)))
		}
		if !s.stageReady { // once per adapter
			s.stageReady = true
			stmts = append(stmts, snowflake.SchemaExistsQuery(d, "", stageS), snowflake.CreateSchemaSQL(d, "", stageS))
		}
		stmts = append(stmts, snowflake.CreateStageSQL(d, st.Relation, queries[i]))
	}
	for _, sw := range swaps {
		if w := sw.Stage.Model.Config.Snowflake.Warehouse; w != "" {
			stmts = append(stmts, snowflake.UseWarehouseSQL(d, d.Fold(w)))
			break
		}
	}
	plans := make([]snowflake.SwapPlan, len(swaps))
	for i, sw := range swaps {
		stmts = append(stmts, snowflake.ColumnsQuery(d, sw.Stage.Relation), snowflake.TableExistsQuery(d, sw.Stage.Target))
		plans[i] = snowflake.SwapPlan{Columns: cols[i], CreateTable: create, CreateSchema: create}
		if create {
			stmts = append(stmts, snowflake.SchemaExistsQuery(d, sw.Stage.Target.Database, sw.Stage.Target.Schema))
		}
	}
	setup, tx := snowflake.PublishStatements(d, "refill", swaps, plans)
	stmts = append(append(stmts, setup...), tx...)
	for _, sw := range swaps {
		stmts = append(stmts, snowflake.DropSQL(d, "TABLE", sw.Stage.Relation))
	}
	s.section(title, stmts...)
}

var (
	dailyCols = []snowflake.Column{{"ORDER_DATE", "DATE"}, {"ORDERS", "NUMBER(38,0)"}, {"REVENUE", "NUMBER(38,2)"}, {"region", "VARCHAR"}}
	dailyQ    = "SELECT order_date, count(*) AS orders, sum(amount) AS revenue, region AS \"region\"\nFROM \"ANALYTICS\".\"ORDERS\"\nWHERE order_date >= '2024-01-02'::DATE AND order_date < '2024-01-03'::DATE\nGROUP BY order_date, region -- a trailing comment"
)

// TestStatements pins every statement shape the adapter issues.
func TestStatements(t *testing.T) {
	var s statements
	utc := time.UTC

	daily := model("marts.daily", models.Config{PartitionBy: "order_date", Grain: models.Day, Location: utc,
		Snowflake: models.SnowflakeOptions{Warehouse: "big_wh", ClusterBy: "order_date"}})
	oneDay := adapters.Window{Column: "order_date", Start: day("2024-01-02"), End: day("2024-01-03"), Location: utc}
	s.unit("a daily model: stage, first publish on its own warehouse, creating the target", []string{dailyQ},
		[]adapters.Swap{{Stage: stage(daily, "marts.daily", 1, oneDay, "2024-01-02"),
			Records: []adapters.Record{rec("marts.daily", "2024-01-02", day("2024-01-02"), 24*time.Hour)}}},
		[][]snowflake.Column{dailyCols}, true)

	plain := model("marts.daily", models.Config{PartitionBy: "order_date", Grain: models.Day, Location: utc})
	three := adapters.Window{Column: "order_date", Start: day("2024-01-02"), End: day("2024-01-05"), Location: utc}
	s.unit("a batch of three days into an existing table", []string{strings.ReplaceAll(dailyQ, "2024-01-03", "2024-01-05")},
		[]adapters.Swap{{Stage: stage(plain, "marts.daily", 2, three, "2024-01-02..2024-01-04"), Records: []adapters.Record{
			rec("marts.daily", "2024-01-02", day("2024-01-02"), 24*time.Hour),
			rec("marts.daily", "2024-01-03", day("2024-01-03"), 24*time.Hour),
			rec("marts.daily", "2024-01-04", day("2024-01-04"), 24*time.Hour)}}},
		[][]snowflake.Column{dailyCols}, false)

	hour := at.Truncate(time.Hour)
	hourly := model("events.hourly", models.Config{PartitionBy: "event_hour", Grain: models.Hour, Location: utc, TimestampWindow: true})
	s.unit("an hourly model", []string{"SELECT DATE_TRUNC('HOUR', ts) AS event_hour, count(*) AS n FROM raw.events\nWHERE ts >= '2024-01-05 06:00:00'::TIMESTAMP_NTZ AND ts < '2024-01-05 07:00:00'::TIMESTAMP_NTZ\nGROUP BY 1"},
		[]adapters.Swap{{Stage: stage(hourly, "events.hourly", 3, adapters.Window{Column: "event_hour", Start: hour, End: hour.Add(time.Hour), Timestamp: true}, "2024-01-05T06"),
			Records: []adapters.Record{rec("events.hourly", "2024-01-05T06", hour, time.Hour)}}},
		[][]snowflake.Column{{{"EVENT_HOUR", "TIMESTAMP_NTZ"}, {"N", "NUMBER(38,0)"}}}, true)

	list := model("marts.by_region", models.Config{PartitionBy: "region", Values: []any{"eu", "it's"}, Location: utc})
	s.unit("a list model", []string{"SELECT region, sum(amount) AS revenue FROM raw.orders WHERE region IN ('eu') GROUP BY region"},
		[]adapters.Swap{{Stage: stage(list, "marts.by_region", 4, adapters.Window{Column: "region", Values: []any{"eu"}}, "eu"),
			Records: []adapters.Record{rec("marts.by_region", "eu", time.Time{}, 0)}}},
		[][]snowflake.Column{{{"REGION", "VARCHAR"}, {"REVENUE", "NUMBER(38,2)"}}}, false)

	whole := model("marts.customers", models.Config{Location: utc})
	s.unit("an unpartitioned model", []string{"SELECT customer_id, min(order_date) AS first_order FROM raw.orders GROUP BY customer_id"},
		[]adapters.Swap{{Stage: stage(whole, "marts.customers", 5, adapters.Window{}, "all"),
			Records: []adapters.Record{rec("marts.customers", "all", time.Time{}, 0)}}},
		[][]snowflake.Column{{{"CUSTOMER_ID", "NUMBER(38,0)"}, {"FIRST_ORDER", "DATE"}}}, true)

	monthly := model("marts.monthly", models.Config{PartitionBy: "month_start", Grain: models.Month, Location: utc})
	s.unit("two tables published together (--publish together), creating one", []string{dailyQ, "SELECT DATE_TRUNC('MONTH', order_date) AS month_start, sum(revenue) AS revenue FROM \"REFILL_STAGE\".\"MARTS__DAILY__OVERLAY_AB12CD_9\" GROUP BY 1"},
		[]adapters.Swap{
			{Stage: stage(plain, "marts.daily", 6, oneDay, "2024-01-02"), Records: []adapters.Record{rec("marts.daily", "2024-01-02", day("2024-01-02"), 24*time.Hour)}},
			{Stage: stage(monthly, "marts.monthly", 7, adapters.Window{Column: "month_start", Start: day("2024-01-01"), End: day("2024-02-01"), Location: utc}, "2024-01"),
				Records: []adapters.Record{rec("marts.monthly", "2024-01", day("2024-01-01"), 31*24*time.Hour)}},
		},
		[][]snowflake.Column{dailyCols, {{"MONTH_START", "DATE"}, {"REVENUE", "NUMBER(38,2)"}}}, true)

	s.section("overlay view (--publish together), and its drop",
		snowflake.ColumnsQuery(d, stage(plain, "marts.daily", 1, oneDay, "").Relation),
		snowflake.TableExistsQuery(d, models.Relation{Schema: "marts", Name: "daily"}),
		snowflake.OverlaySQL(d, models.Relation{Schema: stageS, Name: "marts__daily__overlay_ab12cd_9"}, models.Relation{Schema: "marts", Name: "daily"}, true,
			[]*adapters.Stage{stage(plain, "marts.daily", 1, oneDay, ""), stage(plain, "marts.daily", 2, three, "")}, dailyCols),
		snowflake.DropSQL(d, "VIEW", models.Relation{Schema: stageS, Name: "marts__daily__overlay_ab12cd_9"}))

	s.section("clean stages left by a crashed run",
		snowflake.StagesQuery(d, stageS),
		snowflake.DropSQL(d, "VIEW", models.Relation{Schema: stageS, Name: "MARTS__DAILY__OVERLAY_1F2E3D_4"}),
		snowflake.DropSQL(d, "TABLE", models.Relation{Schema: stageS, Name: "MARTS__DAILY__1F2E3D_3"}))

	s.section("schema change before a publish (on_schema_change: append adds, sync also drops and widens)",
		snowflake.AlterStatements(d, models.Relation{Schema: "marts", Name: "daily"}, &adapters.SchemaChange{
			Add:   []adapters.TableColumn{{Name: "RETURNS", Type: "NUMBER(38,0)"}, {Name: "channel", Type: "VARCHAR"}},
			Drop:  []string{"LEGACY"},
			Widen: []adapters.TableColumn{{Name: "REVENUE", Type: "NUMBER(38,4)"}}})...)

	target, fresh := models.Relation{Schema: "marts", Name: "daily"}, models.Relation{Schema: stageS, Name: adapters.StagePrefix(models.Relation{Schema: "marts", Name: "daily"}) + "w_ab12cd_r"}
	rebuild := func(exists bool) []string {
		pending := []adapters.Record{rec("marts.daily", "2024-01-02", day("2024-01-02"), 24*time.Hour), rec("marts.daily", "2024-01-03", day("2024-01-03"), 24*time.Hour)}
		for i := range pending {
			pending[i].State = adapters.StatePending
		}
		done := []adapters.Record{rec("marts.daily", "2024-01-02", day("2024-01-02"), 24*time.Hour), rec("marts.daily", "2024-01-03", day("2024-01-03"), 24*time.Hour)}
		var out []string
		for _, step := range snowflake.RebuildStatements(d, "refill", target, fresh,
			[]*adapters.Stage{stage(plain, "marts.daily", 1, oneDay, "2024-01-02"), stage(plain, "marts.daily", 2, oneDay, "2024-01-03")},
			dailyCols, "order_date", exists, pending, done) {
			out = append(out, step...)
		}
		return out
	}
	s.section("full refresh of an existing table (--full-refresh): a new table from the stages, SWAP WITH, the ledger rewritten", rebuild(true)...)
	s.section("full refresh of a missing table: the new table is renamed into place", rebuild(false)...)

	ledgerStatements(&s)

	seed := &models.Seed{Columns: []models.Column{{Name: "id", Type: models.TypeInt}, {Name: "name", Type: models.TypeString},
		{Name: "score", Type: models.TypeFloat}, {Name: "ok", Type: models.TypeBool}, {Name: "day", Type: models.TypeDate}, {Name: "seen", Type: models.TypeTimestamp}},
		Rows: [][]any{{int64(1), "O'Brien \\ \"x\"", 1.5, true, day("2024-01-02"), at}, {int64(2), nil, -2.25, false, day("2024-01-03"), at.Add(time.Hour)}}}
	raw := models.Relation{Schema: "raw", Name: "people"}
	s.section("seed load",
		append([]string{snowflake.SchemaExistsQuery(d, "", "raw"), snowflake.CreateSchemaSQL(d, "", "raw")},
			snowflake.SeedStatements(d, seed, raw, models.Relation{Schema: stageS, Name: adapters.StagePrefix(raw) + "seed_ab12cd_8"})...)...)

	s.section("session: default warehouse, a model's warehouse",
		snowflake.CurrentWarehouseSQL, snowflake.UseWarehouseSQL(d, d.Fold("transform_xl")), snowflake.UseWarehouseSQL(d, "My Warehouse"))
	s.section("QUERY_TAG values (set per statement through gosnowflake.WithQueryTag, shown as literals)",
		"SELECT "+d.QuoteString(snowflake.QueryTag(adapters.Tag{RunID: runID, Model: "marts.daily", Partition: "2024-01-02..2024-01-04", Step: "stage"})),
		"SELECT "+d.QuoteString(snowflake.QueryTag(adapters.Tag{Step: "ledger"})))
	adaptertest.Golden(t, "testdata/statements.sql", s.b.String())
}

// ledgerStatements adds the ledger's statements.
func ledgerStatements(s *statements) {
	s.section("ledger DDL (SetupLedger, when a ledger table is missing)",
		append([]string{snowflake.LedgerTablesQuery(d, "refill"), snowflake.SchemaExistsQuery(d, "", "refill")},
			snowflake.LedgerStatements(d, "refill")...)...)
	s.section("ledger reads (Partitions and LoadRun check the table exists first and create nothing)",
		snowflake.TableExistsQuery(d, models.Relation{Schema: "refill", Name: adapters.PartitionsTable}),
		snowflake.PartitionsQuery(d, "refill", []string{"marts.daily", "marts.monthly"}),
		snowflake.TableExistsQuery(d, models.Relation{Schema: "refill", Name: adapters.RunsTable}),
		snowflake.LoadRunQuery(d, "refill", runID))
	failed := rec("marts.daily", "2024-01-03", day("2024-01-03"), 24*time.Hour)
	failed.State, failed.Rows, failed.Attempts, failed.Error = adapters.StateFailed, 0, 3, `division by zero in 'revenue' \ retry`
	s.section("record failed partitions", snowflake.RecordPartitionsStatements(d, "refill", []adapters.Record{failed})...)
	s.section("save a run", snowflake.SaveRunStatements(d, "refill", &adapters.Run{ID: runID, Target: "prod", Status: adapters.RunSucceeded,
		Selection: `{"from":"2024-01-01"}`, Host: "ci-7", PID: 4242, StartedAt: at, FinishedAt: at.Add(time.Minute), Succeeded: 3, Failed: 1})...)
	lease := adapters.Lease{Table: "marts.daily", RunID: runID, Host: "ci-7", PID: 4242, AcquiredAt: at, HeartbeatAt: at, ExpiresAt: at.Add(time.Minute)}
	lock, insert, check := snowflake.LeaseStatements(d, "refill", lease)
	s.section("acquire a lease (COMMIT when check returns no row, else ROLLBACK and LeaseHeldError)",
		snowflake.BeginSQL, lock, insert, check, snowflake.CommitSQL)
	s.section("renew and release leases",
		snowflake.RenewLeasesSQL(d, "refill", runID, at, at.Add(2*time.Minute)), snowflake.ReleaseLeasesSQL(d, "refill", runID))
}

func TestLedgerWritesAreChunked(t *testing.T) {
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
