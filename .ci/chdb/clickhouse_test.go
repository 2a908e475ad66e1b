package chdb_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"
)

// openNative opens a connection with clickhouse-go's native API.
func openNative(t *testing.T, database string) driver.Conn {
	t.Helper()
	opts, err := clickhouse.ParseDSN(dsn(t, database))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestServerHello(t *testing.T) {
	conn := openNative(t, "default")
	ctx := context.Background()
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := conn.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "ClickHouse" || v.Version.Major != 26 || v.Version.Minor != 5 || v.Revision != 54460 || v.Timezone.String() != "UTC" {
		t.Errorf("server hello: %+v", v)
	}
	var version, zone string
	if err := conn.QueryRow(ctx, "SELECT version(), timezone()").Scan(&version, &zone); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "26.5.") || zone != "UTC" {
		t.Errorf("version() %q, timezone() %q", version, zone)
	}
}

// typesQuery returns one row of many types.
const typesQuery = `SELECT toDate('2024-01-02') AS d, toDateTime('2024-01-02 03:04:05') AS dt,
	toDateTime64('2024-01-02 03:04:05.123', 3) AS dt64, CAST(NULL AS Nullable(Int32)) AS n0, toNullable(toInt32(-5)) AS n1,
	toLowCardinality('lc') AS lc, toDecimal64(1.5, 2) AS dec, toUInt64(18446744073709551615) AS u64, 1.25 AS f64, 'str' AS s,
	['a', 'b'] AS arr, [toNullable(1), NULL] AS arrn, CAST([] AS Array(LowCardinality(String))) AS arrlc,
	map('k', toUInt8(1)) AS m, CAST('b' AS Enum8('a' = 1, 'b' = 2)) AS e, true AS b,
	toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS u, toLowCardinality(toNullable('x')) AS lcn`

func TestScanNative(t *testing.T) {
	conn := openNative(t, "default")
	var (
		d, dt, dt64 time.Time
		n0, n1      *int32
		lc, s, e    string
		dec         decimal.Decimal
		u64         uint64
		f64         float64
		arr         []string
		arrn        []*uint8
		arrlc       []string
		m           map[string]uint8
		b           bool
		u           string
		lcn         *string
	)
	err := conn.QueryRow(utc(context.Background()), typesQuery).Scan(&d, &dt, &dt64, &n0, &n1, &lc, &dec, &u64, &f64, &s,
		&arr, &arrn, &arrlc, &m, &e, &b, &u, &lcn)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	got := fmt.Sprintln(d.Equal(day), dt.Equal(day.Add(3*time.Hour+4*time.Minute+5*time.Second)),
		dt64.Equal(day.Add(3*time.Hour+4*time.Minute+5*time.Second+123*time.Millisecond)), n0 == nil, *n1, lc, dec.String(), u64, f64, s,
		arr, len(arrn), *arrn[0], arrn[1] == nil, len(arrlc), m, e, b, u, *lcn)
	want := "true true true true -5 lc 1.5 18446744073709551615 1.25 str [a b] 2 1 true 0 map[k:1] b true 61f0c404-5cb3-11e7-907b-a6006ad3dba0 x\n"
	if got != want {
		t.Errorf("scanned\n got %s\nwant %s", got, want)
	}
}

func TestScanDatabaseSQL(t *testing.T) {
	db := openDB(t)
	rows := queryRows(t, utc(context.Background()), db, typesQuery)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	var got []string
	for _, v := range rows[0] {
		switch v := v.(type) {
		case time.Time:
			got = append(got, v.UTC().Format("2006-01-02T15:04:05.000"))
		case *int32:
			got = append(got, fmt.Sprint(*v))
		case *string:
			got = append(got, *v)
		case []*uint8:
			var elems []string
			for _, e := range v {
				if e == nil {
					elems = append(elems, "NULL")
				} else {
					elems = append(elems, fmt.Sprint(*e))
				}
			}
			got = append(got, "["+strings.Join(elems, " ")+"]")
		default:
			got = append(got, fmt.Sprint(v))
		}
	}
	want := "2024-01-02T00:00:00.000 2024-01-02T03:04:05.000 2024-01-02T03:04:05.123 <nil> -5 lc 1.5 18446744073709551615 1.25 str " +
		"[a b] [1 NULL] [] map[k:1] b true 61f0c404-5cb3-11e7-907b-a6006ad3dba0 x"
	if strings.Join(got, " ") != want {
		t.Errorf("scanned\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestResultColumnsWithoutRows(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	name := database(t, db)
	mustExec(t, ctx, db, "CREATE TABLE `"+name+"`.e (d Date, v Int64) ENGINE = MergeTree ORDER BY d")
	for q, want := range map[string]string{
		"SELECT toDate('2024-01-01') AS d, toNullable(1) AS x, toLowCardinality('a') AS lc WHERE 0": "d Date, x Nullable(UInt8), lc LowCardinality(String)",
		"SHOW TABLES FROM system LIKE 'no_such_table%'":                                             "name String",
		"EXPLAIN ESTIMATE SELECT * FROM `" + name + "`.e WHERE d = '2024-01-01'":                    "database String, table String, parts UInt64, rows UInt64, marks UInt64",
		"SELECT * FROM `" + name + "`.e":                                                            "d Date, v Int64",
	} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		types, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, ct := range types {
			cols = append(cols, ct.Name()+" "+ct.DatabaseTypeName())
		}
		if rows.Next() {
			t.Errorf("%s returned a row", q)
		}
		rows.Close()
		if got := strings.Join(cols, ", "); got != want {
			t.Errorf("%s: columns %q, want %q", q, got, want)
		}
	}
}

func TestResultOfManyBlocks(t *testing.T) {
	db := openDB(t)
	rows, err := db.QueryContext(context.Background(), "SELECT number, toString(number) FROM numbers(200000)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n, sum uint64
	for rows.Next() {
		var v uint64
		var s string
		if err := rows.Scan(&v, &s); err != nil {
			t.Fatal(err)
		}
		if s != fmt.Sprint(v) {
			t.Fatalf("row %d: %q", v, s)
		}
		n, sum = n+1, sum+v
	}
	if err := rows.Err(); err != nil || n != 200000 || sum != 199999*200000/2 {
		t.Errorf("%d rows summing to %d, %v", n, sum, err)
	}
}

// TestPartitionSwaps runs the statements refill's ClickHouse adapter
// depends on.
func TestPartitionSwaps(t *testing.T) {
	db := openDB(t)
	ctx := utc(context.Background())
	q := "`" + database(t, db) + "`"
	mustExec(t, ctx, db,
		"CREATE TABLE "+q+".t (d Date, v Int64) ENGINE = MergeTree PARTITION BY toYYYYMM(d) ORDER BY d",
		"INSERT INTO "+q+".t SELECT toDate('2024-01-01') + number, number FROM numbers(40)",
		"CREATE TABLE "+q+".stage AS "+q+".t",
		"INSERT INTO "+q+".stage SELECT toDate('2024-01-01') + number, 100 + number FROM numbers(31)",
		"ALTER TABLE "+q+".t REPLACE PARTITION ID '202401' FROM "+q+".stage, DROP PARTITION ID '202402'",
	)
	parts := fmt.Sprintf("SELECT DISTINCT partition_id FROM system.parts WHERE database = '%s' AND table = 't' AND active ORDER BY partition_id",
		strings.Trim(q, "`"))
	if got := fmt.Sprint(queryRows(t, ctx, db, parts)); got != "[[202401]]" {
		t.Errorf("partitions after REPLACE and DROP: %s", got)
	}
	if got := one(t, ctx, db, "SELECT sum(v) FROM "+q+".t"); fmt.Sprint(got) != fmt.Sprint(31*100+30*31/2) {
		t.Errorf("sum after the swap: %v", got)
	}
	mustExec(t, ctx, db, "ALTER TABLE "+q+".t REPLACE PARTITION 202401 FROM "+q+".stage") // by value
	for stmt, want := range map[string]string{
		"EXISTS TABLE " + q + ".t":                                       "1",
		"EXISTS TABLE " + q + ".no_such_table":                           "0",
		"SELECT count() FROM " + q + ".t WHERE d = toDate('2024-01-05')": "1",
	} {
		if got := fmt.Sprint(one(t, ctx, db, stmt)); got != want {
			t.Errorf("%s = %s, want %s", stmt, got, want)
		}
	}
	create := fmt.Sprint(one(t, ctx, db, "SHOW CREATE TABLE "+q+".t"))
	if !strings.Contains(create, "ENGINE = MergeTree") || !strings.Contains(create, "PARTITION BY toYYYYMM(d)") {
		t.Errorf("SHOW CREATE TABLE:\n%s", create)
	}
	desc := queryRows(t, ctx, db, "DESCRIBE TABLE (SELECT d, v, toNullable(v) AS n FROM "+q+".t)")
	var cols []string
	for _, r := range desc {
		cols = append(cols, fmt.Sprint(r[0], " ", r[1]))
	}
	if got := strings.Join(cols, ", "); got != "d Date, v Int64, n Nullable(Int64)" {
		t.Errorf("DESCRIBE (subquery): %s", got)
	}
	est := queryRows(t, ctx, db, "EXPLAIN ESTIMATE SELECT * FROM "+q+".t WHERE d >= toDate('2024-01-10')")
	if len(est) != 1 || fmt.Sprint(est[0][3]) != "31" {
		t.Errorf("EXPLAIN ESTIMATE: %v", est)
	}

	mustExec(t, ctx, db,
		"CREATE TABLE "+q+".r (k String, v Int64, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY k",
		"INSERT INTO "+q+".r SELECT 'a', 1, 1",
		"INSERT INTO "+q+".r SELECT 'a', 2, 2 UNION ALL SELECT 'b', 3, 1",
		"INSERT INTO "+q+".r VALUES ('b', 4, 0)", // rows in the statement's text
		"EXCHANGE TABLES "+q+".t AND "+q+".stage",
		"RENAME TABLE "+q+".stage TO "+q+".renamed",
	)
	if got := fmt.Sprint(queryRows(t, ctx, db, "SELECT k, v FROM "+q+".r FINAL ORDER BY k")); got != "[[a 2] [b 3]]" {
		t.Errorf("ReplacingMergeTree FINAL: %s", got)
	}
	if got := fmt.Sprint(one(t, ctx, db, "SELECT count() FROM "+q+".t")); got != "31" {
		t.Errorf("after EXCHANGE TABLES, t has %s rows", got)
	}
}

func TestExceptions(t *testing.T) {
	db := openDB(t)
	db.SetMaxOpenConns(1) // one connection: it must survive every exception
	ctx := context.Background()
	for _, tc := range []struct {
		query string
		code  int32
		text  string
	}{
		{"SELECT count() FROM default.no_such_table", 60, "(UNKNOWN_TABLE)"},
		{"SELECT count( FROM system.one", 62, "Syntax error"},
		{"SELECT 1; SELECT 2", 62, "Multi-statements are not allowed"},
		{"SELECT throwIf(number = 3) FROM numbers(10)", 395, "throwIf"},
		{"SELECT no_such_function(1)", 46, "(UNKNOWN_FUNCTION)"},
		{"INSERT INTO default.no_such_table SELECT 1", 60, "UNKNOWN_TABLE"},
	} {
		_, err := db.QueryContext(ctx, tc.query)
		if code := exceptionCode(err); code != tc.code || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v (code %d), want code %d and %q", tc.query, err, code, tc.code, tc.text)
		}
		if got := one(t, ctx, db, "SELECT 1"); fmt.Sprint(got) != "1" {
			t.Errorf("after %s: %v", tc.query, got)
		}
	}
}

func TestUnknownDatabaseInDSN(t *testing.T) {
	opts, err := clickhouse.ParseDSN(dsn(t, "no_such_database"))
	if err != nil {
		t.Fatal(err)
	}
	db := clickhouse.OpenDB(opts)
	defer db.Close()
	if err := db.Ping(); exceptionCode(err) != 81 {
		t.Errorf("Ping with an unknown database: %v, want code 81", err)
	}
}

func TestQuerySettings(t *testing.T) {
	db := openDB(t)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	with := func(s clickhouse.Settings) context.Context {
		return clickhouse.Context(ctx, clickhouse.WithSettings(s))
	}

	_, err := db.QueryContext(with(clickhouse.Settings{"max_result_rows": 10, "result_overflow_mode": "throw"}), "SELECT number FROM numbers(100)")
	if code := exceptionCode(err); code != 396 {
		t.Errorf("max_result_rows = 10 over 100 rows: %v, want code 396", err)
	}
	if n := len(queryRows(t, ctx, db, "SELECT number FROM numbers(100)")); n != 100 {
		t.Errorf("the next query, without settings, read %d rows: max_result_rows was not reset", n)
	}

	comment := `{"app":"refill","partition":"it's \"quoted\""}`
	if got := one(t, with(clickhouse.Settings{"log_comment": comment}), db, "SELECT getSetting('log_comment')"); got != comment {
		t.Errorf("log_comment = %q, want %q", got, comment)
	}
	if got := one(t, ctx, db, "SELECT getSetting('log_comment')"); got != "" {
		t.Errorf("log_comment after a query that set it: %q", got)
	}

	// chDB changes a few defaults: a statement's value is reset to chDB's.
	before := one(t, ctx, db, "SELECT getSetting('storage_file_read_method')")
	if got := one(t, with(clickhouse.Settings{"storage_file_read_method": "pread"}), db, "SELECT getSetting('storage_file_read_method')"); got != "pread" {
		t.Errorf("storage_file_read_method = %v, want pread", got)
	}
	if got := one(t, ctx, db, "SELECT getSetting('storage_file_read_method')"); got != before || before != "mmap" {
		t.Errorf("storage_file_read_method = %v after a query that set it, %v before", got, before)
	}

	// 150 daily partitions in one INSERT: over the default limit of 100.
	q := "`" + database(t, db) + "`"
	mustExec(t, ctx, db, "CREATE TABLE "+q+".daily (d Date) ENGINE = MergeTree PARTITION BY d ORDER BY d")
	insert := "INSERT INTO " + q + ".daily SELECT toDate('2024-01-01') + number FROM numbers(150)"
	if _, err := db.ExecContext(ctx, insert); exceptionCode(err) != 252 {
		t.Errorf("150 partitions in one INSERT: %v, want TOO_MANY_PARTS (252)", err)
	}
	if _, err := db.ExecContext(with(clickhouse.Settings{"max_partitions_per_insert_block": 0}), insert); err != nil {
		t.Errorf("with max_partitions_per_insert_block = 0: %v", err)
	}

	if _, err := db.ExecContext(with(clickhouse.Settings{"no_such_setting": 1}), "SELECT 1"); exceptionCode(err) != 115 {
		t.Errorf("an unknown setting: %v, want UNKNOWN_SETTING (115)", err)
	}
	if _, err := db.ExecContext(with(clickhouse.Settings{"readonly": 1}), "SELECT 1"); exceptionCode(err) != 48 {
		t.Errorf("readonly: %v, want NOT_IMPLEMENTED (48)", err)
	}
}

func TestSessionSetAndUse(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	name := database(t, db)
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for _, s := range []string{"SET log_comment = 'one', max_threads = 3", "USE `" + name + "`"} {
		if _, err := c1.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	probe := "SELECT getSetting('log_comment'), toString(getSetting('max_threads')), currentDatabase()"
	if got := fmt.Sprint(queryRows(t, ctx, c1, probe)); got != fmt.Sprintf("[[one 3 %s]]", name) {
		t.Errorf("the connection that said SET and USE: %s", got)
	}
	if got := fmt.Sprint(queryRows(t, ctx, c2, probe)); got != "[[ 2 default]]" && got != "[[ 'auto(2)' default]]" {
		t.Errorf("another connection: %s", got)
	}
	if _, err := c1.ExecContext(ctx, "USE no_such_database"); exceptionCode(err) != 81 {
		t.Errorf("USE of an unknown database: %v", err)
	}
	if _, err := c1.ExecContext(ctx, "SET no_such_setting = 1"); exceptionCode(err) != 115 {
		t.Errorf("SET of an unknown setting: %v", err)
	}
	if got := fmt.Sprint(one(t, ctx, c1, "SELECT currentDatabase()")); got != name {
		t.Errorf("after a failed USE, the database is %s", got)
	}
}

func TestConcurrentConnections(t *testing.T) {
	db := openDB(t)
	db.SetMaxOpenConns(8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				comment := fmt.Sprintf("g%d-%d", g, i)
				ctx := clickhouse.Context(context.Background(), clickhouse.WithSettings(clickhouse.Settings{"log_comment": comment}))
				var got string
				var n uint64
				if err := db.QueryRowContext(ctx, "SELECT getSetting('log_comment'), count() FROM numbers(1000)").Scan(&got, &n); err != nil {
					t.Error(err)
					return
				}
				if got != comment || n != 1000 {
					t.Errorf("query with log_comment %s saw %s, %d", comment, got, n)
				}
			}
		}()
	}
	wg.Wait()
	if n := db.Stats().MaxOpenConnections; n != 8 {
		t.Errorf("%d connections", n)
	}
}

func TestCancel(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	busy := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "SELECT sleep(2)")
		busy <- err
	}()
	time.Sleep(300 * time.Millisecond) // the sleep holds chDB
	start := time.Now()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := db.ExecContext(short, "SELECT 1"); err == nil || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("a statement waiting for chDB, cancelled after 300 ms: %v after %s", err, time.Since(start))
	}
	if err := <-busy; err != nil {
		t.Errorf("the sleep: %v", err)
	}
	if got := one(t, ctx, db, "SELECT 1"); fmt.Sprint(got) != "1" {
		t.Errorf("after a cancellation: %v", got)
	}
}

func TestQueryParameters(t *testing.T) {
	conn := openNative(t, "default")
	ctx := clickhouse.Context(context.Background(), clickhouse.WithParameters(clickhouse.Parameters{"p": "it's", "n": "42"}))
	var s string
	var n uint32
	if err := conn.QueryRow(ctx, "SELECT {p:String}, {n:UInt32}").Scan(&s, &n); err != nil || s != "it's" || n != 42 {
		t.Errorf("parameters: %q, %d, %v", s, n, err)
	}
}

func TestClientRowsRefused(t *testing.T) {
	db := openDB(t)
	q := "`" + database(t, db) + "`"
	mustExec(t, context.Background(), db, "CREATE TABLE "+q+".t (v Int64) ENGINE = MergeTree ORDER BY v")
	conn := openNative(t, "default")
	ctx := context.Background()
	_, err := conn.PrepareBatch(ctx, "INSERT INTO "+q+".t")
	if code := exceptionCode(err); code != 48 || !strings.Contains(err.Error(), "INSERT ... SELECT") {
		t.Errorf("a batch INSERT: %v, want NOT_IMPLEMENTED (48) advising INSERT ... SELECT", err)
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+q+".t").Scan(&n); err != nil || n != 0 {
		t.Errorf("after a refused batch: %d, %v", n, err)
	}
}

func TestFormatClauseIsIgnored(t *testing.T) {
	db := openDB(t)
	if got := fmt.Sprint(queryRows(t, context.Background(), db, "SELECT 1 AS x FORMAT JSONEachRow")); got != "[[1]]" {
		t.Errorf("SELECT ... FORMAT JSONEachRow over the native protocol: %s", got)
	}
}
