package clickhouse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	clickhousego "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// chTest is one ClickHouse-specific test's adapter and databases.
type chTest struct {
	t   *testing.T
	a   *clickhouse.Adapter
	s   string // the default database
	log *statementLog
	ctx context.Context
}

func newTest(t *testing.T) *chTest {
	s := schemas(t)
	log := &statementLog{}
	return &chTest{t: t, a: open(t, s, log), s: s.Default, log: log, ctx: context.Background()}
}

func (c *chTest) rel(name string) models.Relation { return models.Relation{Schema: c.s, Name: name} }

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// seedDays loads table name with one row (d, v) per day of [from, to),
// v = value(day).
func (c *chTest) seedDays(name, from, to string, value func(time.Time) int64) {
	c.t.Helper()
	s := &models.Seed{Relation: c.rel(name), Columns: []models.Column{{Name: "d", Type: models.TypeDate}, {Name: "v", Type: models.TypeInt}}}
	for d := day(from); d.Before(day(to)); d = d.AddDate(0, 0, 1) {
		s.Rows = append(s.Rows, []any{d, value(d)})
	}
	if err := c.a.LoadSeed(c.ctx, s, s.Relation); err != nil {
		c.t.Fatal(err)
	}
}

// publish stages query for window w of model m into target and publishes it.
func (c *chTest) publish(m *models.Model, target models.Relation, query string, w adapters.Window) {
	c.t.Helper()
	st, err := c.a.Stage(c.ctx, adapters.StageRequest{Model: m, Target: target, Query: query, Window: w,
		Tag: adapters.Tag{RunID: "run", Model: m.Name, Partition: "p", Step: "stage"}})
	if err != nil {
		c.t.Fatalf("Stage: %v", err)
	}
	if err := c.a.Publish(c.ctx, []adapters.Swap{{Stage: st}}); err != nil {
		c.t.Fatalf("Publish: %v", err)
	}
	c.a.DropStage(c.ctx, st)
	if err := c.a.Flush(c.ctx); err != nil {
		c.t.Fatalf("Flush: %v", err)
	}
}

// between renders a query of (d, v) rows of src in [from, to).
func (c *chTest) between(src, col, from, to string) string {
	d := c.a.Dialect()
	return fmt.Sprintf("SELECT * FROM %s WHERE %s >= %s AND %s < %s", c.rel(src).Quote(d), d.QuoteIdent(col), d.Date(day(from)),
		d.QuoteIdent(col), d.Date(day(to)))
}

// dump returns "key=v" for every row of table (key formatted with
// layout), sorted.
func (c *chTest) dump(table, col, layout string) []string {
	c.t.Helper()
	res, err := c.a.Query(c.ctx, fmt.Sprintf("SELECT `%s`, v FROM %s", col, c.rel(table).Quote(c.a.Dialect())), adapters.Tag{})
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, r := range res.Rows {
		out = append(out, fmt.Sprintf("%s=%d", r[0].(time.Time).Format(layout), adapters.Int(r[1])))
	}
	sort.Strings(out)
	return out
}

// partitions returns the IDs of table's active partitions.
func (c *chTest) partitions(table string) []string {
	c.t.Helper()
	res, err := c.a.Query(c.ctx, clickhouse.PartitionsSQL(clickhouse.Dialect{}, c.rel(table)), adapters.Tag{})
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, r := range res.Rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return out
}

// dailyModel is a model of days from 2024-01-01 whose clickhouse: block
// sets partition_by (no block when it is "").
func dailyModel(partitionBy string) *models.Model {
	header := "partition_by: d\ngrain: day\nstart: 2024-01-01\n"
	if partitionBy != "" {
		header += fmt.Sprintf("clickhouse: {partition_by: %q}\n", partitionBy)
	}
	return loadModel("daily", header)
}

func dayWindow(from, to string) adapters.Window {
	return adapters.Window{Column: "d", Start: day(from), End: day(to), Location: time.UTC}
}

// expected lists "date=v" for the days of [from, to).
func expected(from, to string, value func(time.Time) int64) []string {
	var out []string
	for d := day(from); d.Before(day(to)); d = d.AddDate(0, 0, 1) {
		out = append(out, fmt.Sprintf("%s=%d", d.Format("2006-01-02"), value(d)))
	}
	return out
}

func old(d time.Time) int64   { return int64(d.Day()) }
func fresh(d time.Time) int64 { return 100 + int64(d.Day()) }

// TestDailyModelOnMonthlyPartitions backfills three days of a daily model
// whose table is partitioned by month: the REPLACE of the month must keep
// the month's other days.
func TestDailyModelOnMonthlyPartitions(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-02-03", old)
	c.seedDays("src2", "2024-01-01", "2024-02-03", fresh)
	m, target := dailyModel("toYYYYMM(d)"), c.rel("daily")
	c.publish(m, target, c.between("src", "d", "2024-01-01", "2024-02-03"), dayWindow("2024-01-01", "2024-02-03"))
	if got := c.partitions("daily"); fmt.Sprint(got) != "[202401 202402]" {
		t.Fatalf("partitions of a monthly table: %v", got)
	}
	c.publish(m, target, c.between("src2", "d", "2024-01-10", "2024-01-13"), dayWindow("2024-01-10", "2024-01-13"))
	want := append(expected("2024-01-01", "2024-01-10", old), expected("2024-01-10", "2024-01-13", fresh)...)
	want = append(want, expected("2024-01-13", "2024-02-03", old)...)
	if got := c.dump("daily", "d", "2006-01-02"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after backfilling 3 days:\n got %v\nwant %v", got, want)
	}
	if n := len(c.log.matching("REPLACE PARTITION ID '202401' FROM", "`daily`")); n == 0 {
		t.Error("no REPLACE PARTITION ID '202401' into daily was issued")
	}
	if n := len(c.log.matching("202402", "ALTER TABLE")); n != 1 {
		t.Errorf("February was touched by %d ALTERs, want only the first publication's", n)
	}
	// The first publication went into an empty table: straight from the
	// stage. The second needed a swap table for the month's other days.
	if n := len(c.workTables(target)); n != 1 {
		t.Errorf("%d swap tables were made, want 1 (the second publication's)", n)
	}
	c.wantNoLeftovers(target, 0)
}

// workTables returns the CREATE statements of target's swap tables.
func (c *chTest) workTables(target models.Relation) []string {
	return c.log.matching("CREATE TABLE", adapters.StagePrefix(target)+adapters.KindSwap+"_")
}

// TestStagesVerifiedTogether stages and verifies two days of one month
// of an existing table before publishing either, as a run with
// concurrency does: what the verification of the second read of the month
// (empty) no longer holds when it is published, and the first day must
// survive.
func TestStagesVerifiedTogether(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-02-02", old)
	m, target := dailyModel("toYYYYMM(d)"), c.rel("daily")
	c.publish(m, target, c.between("src", "d", "2024-02-01", "2024-02-02"), dayWindow("2024-02-01", "2024-02-02"))
	var stages []*adapters.Stage
	for _, from := range []string{"2024-01-01", "2024-01-02"} {
		to := day(from).AddDate(0, 0, 1).Format("2006-01-02")
		st, err := c.a.Stage(c.ctx, adapters.StageRequest{Model: m, Target: target, Query: c.between("src", "d", from, to),
			Window: dayWindow(from, to), Tag: adapters.Tag{RunID: "run", Model: m.Name, Partition: from, Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		if groups, ok, err := c.a.SummarizeStage(c.ctx, st); err != nil || !ok || len(groups) != 1 || groups[0].Rows != 1 {
			t.Fatalf("SummarizeStage: %v, %v, %v; want one group of one row", groups, ok, err)
		}
		stages = append(stages, st)
	}
	for _, st := range stages {
		if err := c.a.Publish(c.ctx, []adapters.Swap{{Stage: st}}); err != nil {
			t.Fatal(err)
		}
		c.a.DropStage(c.ctx, st)
	}
	if err := c.a.Flush(c.ctx); err != nil {
		t.Fatal(err)
	}
	want := append(expected("2024-01-01", "2024-01-03", old), expected("2024-02-01", "2024-02-02", old)...)
	if got := c.dump("daily", "d", "2006-01-02"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after publishing two days of a month:\n got %v\nwant %v", got, want)
	}
	c.wantNoLeftovers(target, 0)
}

// wantNoLeftovers checks that the stage database holds n tables of
// target (the stages tests keep), so no swap table was left behind.
func (c *chTest) wantNoLeftovers(target models.Relation, n int) {
	c.t.Helper()
	res, err := c.a.Query(c.ctx, fmt.Sprintf("SELECT name FROM system.tables WHERE startsWith(name, '%s')", adapters.StagePrefix(target)), adapters.Tag{})
	if err != nil {
		c.t.Fatal(err)
	}
	if len(res.Rows) != n {
		c.t.Errorf("%d tables of %s in the stage database, want %d: %v", len(res.Rows), target, n, res.Rows)
	}
}

// TestAlignedDailyPartitions backfills two days of a table partitioned by
// day: exactly those two partitions are replaced.
func TestAlignedDailyPartitions(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-01-08", old)
	c.seedDays("src2", "2024-01-01", "2024-01-08", fresh)
	m, target := dailyModel("d"), c.rel("daily")
	c.publish(m, target, c.between("src", "d", "2024-01-01", "2024-01-08"), dayWindow("2024-01-01", "2024-01-08"))
	if got := c.partitions("daily"); len(got) != 7 || got[0] != "20240101" {
		t.Fatalf("partitions of a daily table: %v", got)
	}
	c.publish(m, target, c.between("src2", "d", "2024-01-03", "2024-01-05"), dayWindow("2024-01-03", "2024-01-05"))
	want := append(expected("2024-01-01", "2024-01-03", old), expected("2024-01-03", "2024-01-05", fresh)...)
	want = append(want, expected("2024-01-05", "2024-01-08", old)...)
	if got := c.dump("daily", "d", "2006-01-02"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after backfilling 2 days:\n got %v\nwant %v", got, want)
	}
	swaps := c.log.matching("ALTER TABLE `" + c.s + "`.`daily`")
	if len(swaps) != 2 || !strings.Contains(swaps[1], "REPLACE PARTITION ID '20240103'") ||
		!strings.Contains(swaps[1], "REPLACE PARTITION ID '20240104'") || strings.Count(swaps[1], "PARTITION ID") != 2 {
		t.Errorf("the second swap should replace exactly 20240103 and 20240104, issued %q", swaps)
	}
	if work := c.workTables(target); len(work) != 0 {
		t.Errorf("aligned partitions were swapped through a swap table: %q", work)
	}
}

// TestEmptyWindowDropsPartition publishes an empty stage over a day of a
// daily-partitioned table: the day's partition is dropped.
func TestEmptyWindowDropsPartition(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-01-04", old)
	m, target := dailyModel("d"), c.rel("daily")
	c.publish(m, target, c.between("src", "d", "2024-01-01", "2024-01-04"), dayWindow("2024-01-01", "2024-01-04"))
	c.publish(m, target, c.between("src", "d", "2024-01-02", "2024-01-02"), dayWindow("2024-01-02", "2024-01-03"))
	if got, want := c.dump("daily", "d", "2006-01-02"), []string{"2024-01-01=1", "2024-01-03=3"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after an empty window: %v, want %v", got, want)
	}
	if got := c.partitions("daily"); fmt.Sprint(got) != "[20240101 20240103]" {
		t.Errorf("partitions after an empty window: %v", got)
	}
	if len(c.log.matching("DROP PARTITION ID '20240102'")) != 1 {
		t.Errorf("no DROP PARTITION ID '20240102' was issued")
	}
	// Again, with nothing left to drop: a no-op.
	c.publish(m, target, c.between("src", "d", "2024-01-02", "2024-01-02"), dayWindow("2024-01-02", "2024-01-03"))
	if got := c.partitions("daily"); fmt.Sprint(got) != "[20240101 20240103]" {
		t.Errorf("partitions after a second empty window: %v", got)
	}
}

// TestHourModel backfills two hours of an hourly model (DateTime column,
// timestamp windows, daily physical partitions by default).
func TestHourModel(t *testing.T) {
	c := newTest(t)
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	load := func(name string, offset int64) {
		s := &models.Seed{Relation: c.rel(name), Columns: []models.Column{{Name: "ts", Type: models.TypeTimestamp}, {Name: "v", Type: models.TypeInt}}}
		for h := 0; h < 30; h++ {
			s.Rows = append(s.Rows, []any{base.Add(time.Duration(h)*time.Hour + 30*time.Minute), offset + int64(h)})
		}
		if err := c.a.LoadSeed(c.ctx, s, s.Relation); err != nil {
			t.Fatal(err)
		}
	}
	load("src", 0)
	load("src2", 100)
	m := &models.Model{Name: "hourly", Config: models.Config{PartitionBy: "ts", Grain: models.Hour, Location: time.UTC, Start: base, TimestampWindow: true}}
	d := c.a.Dialect()
	window := func(from, to int) (string, adapters.Window) {
		w := adapters.Window{Column: "ts", Start: base.Add(time.Duration(from) * time.Hour), End: base.Add(time.Duration(to) * time.Hour), Timestamp: true}
		return w.Predicate(d), w
	}
	target := c.rel("hourly")
	pred, w := window(0, 30)
	c.publish(m, target, "SELECT * FROM "+c.rel("src").Quote(d)+" WHERE "+pred, w)
	if got := c.partitions("hourly"); fmt.Sprint(got) != "[20240301 20240302]" {
		t.Fatalf("partitions of an hourly table: %v", got)
	}
	pred, w = window(5, 7)
	c.publish(m, target, "SELECT * FROM "+c.rel("src2").Quote(d)+" WHERE "+pred, w)
	got := c.dump("hourly", "ts", "01T15:04")
	var want []string
	for h := 0; h < 30; h++ {
		v := int64(h)
		if h == 5 || h == 6 {
			v += 100
		}
		want = append(want, fmt.Sprintf("%s=%d", base.Add(time.Duration(h)*time.Hour+30*time.Minute).Format("01T15:04"), v))
	}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after backfilling 2 hours:\n got %v\nwant %v", got, want)
	}
}

// TestDateWindowOnDateTimeColumn checks that a daily model over a DateTime
// column is either swapped correctly (servers that compare DateTime with
// Date properly) or refused with advice (18.16, which does not).
func TestDateWindowOnDateTimeColumn(t *testing.T) {
	c := newTest(t)
	s := &models.Seed{Relation: c.rel("src"), Columns: []models.Column{{Name: "d", Type: models.TypeTimestamp}, {Name: "v", Type: models.TypeInt}}}
	for i := 0; i < 3; i++ {
		s.Rows = append(s.Rows, []any{day("2024-01-01").Add(time.Duration(24*i+5) * time.Hour), int64(i)})
	}
	if err := c.a.LoadSeed(c.ctx, s, s.Relation); err != nil {
		t.Fatal(err)
	}
	w := dayWindow("2024-01-02", "2024-01-03")
	_, err := c.a.Stage(c.ctx, adapters.StageRequest{Model: dailyModel(""), Target: c.rel("daily"),
		Query: "SELECT * FROM " + c.rel("src").Quote(c.a.Dialect()) + " WHERE " + w.Predicate(c.a.Dialect()), Window: w})
	if c.a.Server().DateTimeCompare {
		if err != nil {
			t.Errorf("Stage on ClickHouse %s: %v", c.a.Server().Version, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "partition_type: timestamp") {
		t.Errorf("Stage on ClickHouse %s = %v, want advice to set partition_type: timestamp", c.a.Server().Version, err)
	}
	c.wantNoLeftovers(c.rel("daily"), 0)
}

// TestFailedStageLeavesNothing stages queries that fail while running,
// for a new and for an existing target: each error carries the server's
// message and no table is left behind.
func TestFailedStageLeavesNothing(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-01-04", old)
	m, target := dailyModel(""), c.rel("daily")
	bad := "SELECT d, throwIf(v = 2) + v AS v FROM " + c.rel("src").Quote(c.a.Dialect()) + " -- a trailing comment"
	for _, when := range []string{"new target", "existing target"} {
		_, err := c.a.Stage(c.ctx, adapters.StageRequest{Model: m, Target: target, Query: bad, Window: dayWindow("2024-01-01", "2024-01-04")})
		if err == nil || !strings.Contains(err.Error(), "throwIf") {
			t.Errorf("%s: Stage of a failing query = %v, want the server's throwIf message", when, err)
		}
		c.wantNoLeftovers(target, 0)
		c.publish(m, target, c.between("src", "d", "2024-01-01", "2024-01-04")+" -- a trailing comment", dayWindow("2024-01-01", "2024-01-04"))
	}
	_, err := c.a.Stage(c.ctx, adapters.StageRequest{Model: m, Target: target, Query: "SELECT d, v, 1 AS extra FROM " + c.rel("src").Quote(c.a.Dialect()),
		Window: dayWindow("2024-01-01", "2024-01-04")})
	if err == nil || !strings.Contains(err.Error(), "returns columns the table lacks: extra") {
		t.Errorf("Stage of a query with an extra column = %v", err)
	}
	c.wantNoLeftovers(target, 0)
}

// TestQueryNormalizesValues checks the value types Query returns.
func TestQueryNormalizesValues(t *testing.T) {
	c := newTest(t)
	res, err := c.a.Query(c.ctx, `SELECT toUInt64(3), toUInt64(18446744073709551615), CAST(NULL AS Nullable(Int32)), toNullable(toInt8(-5)),
		toDate('2024-01-02'), toDateTime('2024-01-02 03:04:05', 'Asia/Tokyo'), toDecimal64(1.5, 2), toDecimal32(2, 0), toNullable('x'), 1.25, count()
		FROM system.one`, adapters.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(3), uint64(18446744073709551615), nil, int64(-5), time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 1, 1, 18, 4, 5, 0, time.UTC), 1.5, int64(2), "x", 1.25, int64(1)}
	if got := res.Rows[0]; fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Errorf("Query values:\n got %#v\nwant %#v", got, want)
	}
}

// TestQueryTagging checks that statements carry refill's query_id (and,
// where the server has it, log_comment) in system.query_log.
func TestQueryTagging(t *testing.T) {
	c := newTest(t)
	tag := adapters.Tag{RunID: "20240105T060708Z-abc", Model: "marts.daily", Partition: "2024-01-02..2024-01-04", Step: "verify"}
	marker := fmt.Sprintf("tagging_%d", time.Now().UnixNano())
	if _, err := c.a.Query(c.ctx, "SELECT '"+marker+"' AS m", tag); err != nil {
		t.Fatal(err)
	}
	cols := "query_id"
	if c.a.Server().LogComment {
		cols += ", log_comment"
	}
	// The server logs a query's finish after it has answered the client,
	// so the entry may reach the log's queue only after a flush: flush
	// and look again for a while.
	var res *adapters.Result
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, ferr := c.a.DB().ExecContext(c.ctx, "SYSTEM FLUSH LOGS"); ferr != nil {
			t.Fatalf("cannot flush the query log: %v", ferr)
		}
		res, err = c.a.Query(c.ctx, "SELECT "+cols+" FROM system.query_log WHERE type = 2 AND query LIKE '%"+marker+"%' AND query NOT LIKE '%query_log%'", adapters.Tag{})
		if err != nil || len(res.Rows) > 0 || time.Now().After(deadline) {
			break
		}
	}
	var exc *clickhousego.Exception
	switch {
	case errors.As(err, &exc) && exc.Code == 60:
		// The chDB front end (.ci/chdb) keeps no server logs; a server does,
		// and 18.16 checks the tags here.
		t.Skipf("the server keeps no system.query_log, so the tags cannot be read back: %v", err)
	case err != nil:
		t.Fatal(err)
	case len(res.Rows) == 0:
		t.Fatalf("system.query_log has no record of the query (the server must run with log_queries = 1, as .ci/clickhouse's does)")
	}
	id := fmt.Sprint(res.Rows[0][0])
	if prefix := "refill-20240105T060708Z-abc-marts.daily-2024-01-02..2024-01-04-verify-"; !strings.HasPrefix(id, prefix) {
		t.Errorf("query_id = %q, want prefix %q", id, prefix)
	}
	if c.a.Server().LogComment {
		var got map[string]string
		if err := json.Unmarshal([]byte(fmt.Sprint(res.Rows[0][1])), &got); err != nil || got["run_id"] != tag.RunID || got["partition"] != tag.Partition {
			t.Errorf("log_comment = %v (%v)", res.Rows[0][1], err)
		}
	}
}

// TestConnectionSurvivesErrors runs good statements after ones the
// server rejects while parsing: 18.16 leaves such a connection unusable,
// so the adapter must not reuse it.
func TestConnectionSurvivesErrors(t *testing.T) {
	c := newTest(t)
	c.a.DB().SetMaxOpenConns(1) // every statement on the same connection, if it were kept
	for i := 0; i < 3; i++ {
		c.seedDays("src", "2024-01-01", "2024-01-03", old)
		if _, err := c.a.Query(c.ctx, "SELECT count( FROM system.one", adapters.Tag{}); err == nil || !strings.Contains(err.Error(), "Syntax error") {
			t.Fatalf("a syntax error: %v", err)
		}
		res, err := c.a.Query(c.ctx, "SELECT count() FROM "+c.rel("src").Quote(c.a.Dialect()), adapters.Tag{})
		if err != nil || adapters.Int(res.Rows[0][0]) != 2 {
			t.Fatalf("the statement after a syntax error: %v, %v", res, err)
		}
	}
}

// TestNullablePartitionColumn creates a table from a query whose
// partition column is Nullable: the default keys must still be accepted.
func TestNullablePartitionColumn(t *testing.T) {
	c := newTest(t)
	c.seedDays("src", "2024-01-01", "2024-01-04", old)
	q := "SELECT toNullable(d) AS d, v FROM " + c.rel("src").Quote(c.a.Dialect()) + " WHERE d >= toDate('2024-01-02') AND d < toDate('2024-01-03')"
	c.publish(dailyModel(""), c.rel("daily"), q, dayWindow("2024-01-02", "2024-01-03"))
	if got := c.dump("daily", "d", "2006-01-02"); fmt.Sprint(got) != "[2024-01-02=2]" {
		t.Errorf("rows %v", got)
	}
	if got := c.partitions("daily"); fmt.Sprint(got) != "[202401]" {
		t.Errorf("partitions %v", got)
	}
}

// A publication's records are written after its swap, in
// batches (Flush), and its stage is kept until they are: a crash in between
// leaves the stage, whose name carries its window, for the next run
// (runner.recordUnrecorded). The crash is simulated by cancelling the
// context as the ledger write is about to run.
func TestStageKeptUntilRecorded(t *testing.T) {
	s := schemas(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &statementLog{}
	crash := false
	cfg := clickhouse.Config{DSN: dsn(t), Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage, Log: func(q string) {
		log.add(q)
		if crash && strings.Contains(q, "'done'") && strings.Contains(q, "INSERT INTO") {
			cancel()
		}
	}}
	a, err := clickhouse.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &chTest{t: t, a: a, s: s.Default, log: log, ctx: context.Background()}
	t.Cleanup(func() {
		for _, db := range []string{s.Default, s.Ledger, s.Stage} {
			a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+a.Dialect().QuoteIdent(db))
		}
		a.Close()
	})
	if err := a.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	c.seedDays("src", "2024-01-01", "2024-01-03", old)
	m := dailyModel("")
	target := c.rel("t")
	const run = "20240101T000000Z-aaaaaa"
	publish := func(from, to string) {
		st, err := a.Stage(ctx, adapters.StageRequest{Model: m, Target: target, Query: c.between("src", "d", from, to),
			Window: dayWindow(from, to), Tag: adapters.Tag{RunID: run, Model: "m", Step: "stage"}})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if err := a.Publish(ctx, []adapters.Swap{{Stage: st, Records: []adapters.Record{{Model: "m", Partition: from, State: adapters.RecordDone,
			Fingerprint: "fp", Rows: 1, RunID: run, Attempts: 1, StartedAt: now, FinishedAt: now, PublishedAt: now}}}}); err != nil {
			t.Fatal(err)
		}
		if err := a.DropStage(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	stages := func(a *clickhouse.Adapter) []string {
		names, err := a.Unrecorded(context.Background(), func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	states := func() map[string]adapters.RecordState {
		recs, err := a.Partitions(context.Background(), []string{"m"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]adapters.RecordState{}
		for _, r := range recs {
			out[r.Partition] = r.State
		}
		return out
	}
	publish("2024-01-01", "2024-01-02")
	if got := stages(a); len(got) != 1 || len(states()) != 0 {
		t.Errorf("before Flush: stages %v, ledger %v; want the stage kept and nothing recorded", got, states())
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := stages(a); len(got) != 0 || states()["2024-01-01"] != adapters.RecordDone {
		t.Errorf("after Flush: stages %v, ledger %v; want the record and no stage", got, states())
	}
	var order []string
	for _, q := range log.stmts {
		switch {
		case strings.Contains(q, "'done'") && strings.Contains(q, "INSERT INTO"):
			order = append(order, "record")
		case strings.HasPrefix(q, "ALTER TABLE") && strings.Contains(q, "REPLACE PARTITION") && strings.Contains(q, "`t`"):
			order = append(order, "swap")
		case strings.HasPrefix(q, "DROP TABLE") && strings.Contains(q, "__s_"):
			order = append(order, "drop stage")
		}
	}
	if fmt.Sprint(order) != "[swap record drop stage]" {
		t.Errorf("statements in the order %v; want [swap record drop stage]", order)
	}

	crash = true
	publish("2024-01-02", "2024-01-03")
	if err := a.Flush(ctx); err == nil {
		t.Fatal("the Flush whose ledger write was cut succeeded")
	}
	// The next run, a new process, finds the stage and its window.
	next, err := clickhouse.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	left := stages(next)
	if len(left) != 1 {
		t.Fatalf("stages after the crash: %v; want the unrecorded publication's", left)
	}
	if start, end, ok := adapters.StageWindow(left[0]); !ok || !start.Equal(day("2024-01-02")) || !end.Equal(day("2024-01-03")) {
		t.Errorf("the stage %s carries the window %v..%v (%v)", left[0], start, end, ok)
	}
	if got := states(); got["2024-01-02"] != "" {
		t.Errorf("ledger states %v; the crashed publication is not recorded", got)
	}
	if got := c.dump("t", "d", "2006-01-02"); len(got) != 2 {
		t.Errorf("target rows %v: the swap happened, so both days are there", got)
	}
}

// TestNullableStringPartitionColumn: ClickHouse 18.16 crashes (a
// segmentation fault) when it inserts into a table whose partition key is
// computed from a Nullable string column, so there the adapter refuses such a stage before
// creating anything; newer servers take it.
func TestNullableStringPartitionColumn(t *testing.T) {
	s := schemas(t)
	a := open(t, s, nil)
	ctx := t.Context()
	m := &models.Model{Name: "r", Config: models.Config{PartitionBy: "region", Values: []any{"eu"}, Location: time.UTC}}
	target := models.Relation{Schema: s.Default, Name: "by_region"}
	st, err := a.Stage(ctx, adapters.StageRequest{Model: m, Target: target, Query: "SELECT toNullable('eu') AS region, 1 AS v",
		Window: adapters.Window{Column: "region", Values: []any{"eu"}}, Tag: adapters.Tag{RunID: "test", Step: "stage"}})
	old := strings.HasPrefix(a.Server().Version, "18.")
	if old {
		if err == nil || !strings.Contains(err.Error(), "Nullable") || !strings.Contains(err.Error(), "assumeNotNull(`region`) AS `region`") {
			t.Fatalf("staging a Nullable partition column on %s: %v, want a refusal saying how to fix the model", a.Server().Version, err)
		}
	} else if err != nil {
		t.Fatalf("staging a Nullable partition column on %s: %v", a.Server().Version, err)
	} else {
		if err := a.Publish(ctx, []adapters.Swap{{Stage: st}}); err != nil {
			t.Fatal(err)
		}
	}
	// The server is still up.
	if _, err := a.Query(ctx, "SELECT 1", adapters.Tag{}); err != nil {
		t.Fatalf("the server stopped answering: %v", err)
	}
}
