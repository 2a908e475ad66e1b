package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// fakeEngine records requests and answers them with run.
type fakeEngine struct {
	mu   sync.Mutex
	reqs []Request
	run  func(ctx context.Context, req Request) (Output, error)
}

func (f *fakeEngine) Run(ctx context.Context, req Request) (Output, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.run == nil {
		return Output{}, nil
	}
	return f.run(ctx, req)
}

// requests returns the requests with a statement.
func (f *fakeEngine) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Request
	for _, r := range f.reqs {
		if r.SQL != "" {
			out = append(out, r)
		}
	}
	return out
}

// serve starts a Server on engine and returns a connection to it with
// clickhouse-go's native API.
func serve(t *testing.T, engine Engine, opts ...func(*clickhouse.Options)) driver.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := &Server{Engine: engine, Info: Info{Name: "ClickHouse", DisplayName: "test", Major: 26, Minor: 5, Patch: 1, Timezone: "UTC"}}
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	o := &clickhouse.Options{Addr: []string{ln.Addr().String()}}
	for _, f := range opts {
		f(o)
	}
	conn, err := clickhouse.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// nativeOutput encodes columns of rows values as FORMAT Native output.
func nativeOutput(t *testing.T, rows int, cols ...proto.InputColumn) Output {
	t.Helper()
	var b proto.Buffer
	if err := (proto.Block{Columns: len(cols), Rows: rows}).EncodeRawBlock(&b, 0, cols); err != nil {
		t.Fatal(err)
	}
	return Output{Data: b.Buf}
}

func TestHelloAndPing(t *testing.T) {
	conn := serve(t, &fakeEngine{})
	if err := conn.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	v, err := conn.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(v.Name, " ", v.DisplayName, " ", v.Version, " ", v.Revision, " ", v.Timezone); got != "ClickHouse test 26.5.1 54460 UTC" {
		t.Errorf("server: %s", got)
	}
}

func TestQueryResult(t *testing.T) {
	f := &fakeEngine{}
	f.run = func(ctx context.Context, req Request) (Output, error) {
		s := &proto.ColStr{}
		s.AppendArr([]string{"a", "b"})
		return nativeOutput(t, 2, proto.InputColumn{Name: "n", Data: &proto.ColUInt64{1, 2}}, proto.InputColumn{Name: "s", Data: s}), nil
	}
	conn := serve(t, f)
	ctx := clickhouse.Context(context.Background(), clickhouse.WithQueryID("q1"),
		clickhouse.WithSettings(clickhouse.Settings{"log_comment": `it's {"json"}`, "max_partitions_per_insert_block": 0}))
	rows, err := conn.Query(ctx, "SELECT n, s FROM t")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var n uint64
		var s string
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(n, s))
	}
	if err := rows.Err(); err != nil || fmt.Sprint(got) != "[1a 2b]" {
		t.Errorf("rows %v, %v", got, err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	settings := map[string]string{}
	for _, s := range r.Settings {
		settings[s.Name] = s.Value
	}
	if r.Database != "default" || r.SQL != "SELECT n, s FROM t" || r.Format != "Native" || r.IfEmpty != "RowBinaryWithNamesAndTypes" ||
		settings["log_comment"] != `'it\'s {"json"}'` || settings["max_partitions_per_insert_block"] != "'0'" {
		t.Errorf("request %+v", r)
	}
}

func TestColumnsOfAnEmptyResult(t *testing.T) {
	f := &fakeEngine{run: func(ctx context.Context, req Request) (Output, error) {
		var b proto.Buffer // RowBinaryWithNamesAndTypes: the header only
		b.PutUVarInt(2)
		b.PutString("d")
		b.PutString("x")
		b.PutString("Date")
		b.PutString("Nullable(UInt8)")
		return Output{Data: b.Buf, Fallback: true}, nil
	}}
	conn := serve(t, f)
	rows, err := conn.Query(context.Background(), "SELECT d, x FROM t WHERE 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for _, ct := range rows.ColumnTypes() {
		cols = append(cols, ct.Name()+" "+ct.DatabaseTypeName())
	}
	if fmt.Sprint(cols) != "[d Date x Nullable(UInt8)]" || rows.Next() {
		t.Errorf("columns %v", cols)
	}
}

func TestExceptionsKeepTheConnection(t *testing.T) {
	f := &fakeEngine{run: func(ctx context.Context, req Request) (Output, error) {
		if strings.Contains(req.SQL, "missing") {
			return Output{}, errors.New("Code: 60. DB::Exception: Table default.missing does not exist. (UNKNOWN_TABLE)")
		}
		return Output{}, nil
	}}
	conn := serve(t, f)
	ctx := context.Background()
	for i := range 3 {
		err := conn.Exec(ctx, "SELECT * FROM missing")
		var ex *clickhouse.Exception
		if !errors.As(err, &ex) || ex.Code != 60 || ex.Message != "Table default.missing does not exist. (UNKNOWN_TABLE)" {
			t.Errorf("%d: %#v", i, err)
		}
		if err := conn.Exec(ctx, "SELECT 1; SELECT 2"); !errors.As(err, &ex) || ex.Code != 62 {
			t.Errorf("multi-statement: %v", err)
		}
		if err := conn.Exec(ctx, "CREATE TABLE t (a UInt8) ENGINE = Memory"); err != nil {
			t.Errorf("%d: after an exception: %v", i, err)
		}
	}
}

func TestSessionState(t *testing.T) {
	f := &fakeEngine{}
	conn := serve(t, f, func(o *clickhouse.Options) { o.MaxOpenConns = 1 })
	ctx := context.Background()
	for _, s := range []string{"SET max_threads = 3, log_comment = 'x'", "USE other", "SELECT 1"} {
		if err := conn.Exec(clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"log_comment": "y"})), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %+v", f.reqs)
	}
	if got := fmt.Sprint(reqs[0].Database, reqs[0].Settings); got != "other[{max_threads 3} {log_comment 'x'} {log_comment 'y'}]" {
		t.Errorf("the statement after SET and USE ran with %s", got)
	}
	for _, s := range []string{"SET readonly = 1", "USE missing"} {
		f.run = func(ctx context.Context, req Request) (Output, error) {
			return Output{}, errors.New("Code: 81. DB::Exception: Database missing does not exist. (UNKNOWN_DATABASE)")
		}
		if err := conn.Exec(ctx, s); err == nil {
			t.Errorf("%s succeeded", s)
		}
	}
}

func TestClientDataIsRefused(t *testing.T) {
	f := &fakeEngine{}
	conn := serve(t, f)
	ctx := context.Background()
	_, err := conn.PrepareBatch(ctx, "INSERT INTO t")
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) || ex.Code != 48 {
		t.Errorf("batch: %v", err)
	}
	table, err := ext.NewTable("ext", ext.Column("id", "UInt8"), ext.Column("name", "Array(LowCardinality(String))"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := table.Append(uint8(i), []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Exec(clickhouse.Context(ctx, clickhouse.WithExternalTable(table)), "SELECT * FROM ext"); !errors.As(err, &ex) || ex.Code != 48 {
		t.Errorf("an external table: %v", err)
	}
	if len(f.requests()) != 0 {
		t.Errorf("the engine ran %+v", f.requests())
	}
}

func TestCompressionIsRefused(t *testing.T) {
	conn := serve(t, &fakeEngine{}, func(o *clickhouse.Options) {
		o.Compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
	})
	err := conn.Exec(context.Background(), "SELECT 1")
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) || ex.Code != 48 || !strings.Contains(ex.Message, "compression") {
		t.Errorf("a compressed query: %v", err)
	}
}

// TestCancelWhileWaiting cancels a statement that waits for the engine:
// the engine sees the cancellation.
func TestCancelWhileWaiting(t *testing.T) {
	cancelled := make(chan error, 1)
	f := &fakeEngine{run: func(ctx context.Context, req Request) (Output, error) {
		<-ctx.Done()
		cancelled <- ctx.Err()
		return Output{}, ctx.Err()
	}}
	conn := serve(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// clickhouse-go reports the deadline or the read timeout it set from it.
	if err := conn.Exec(ctx, "SELECT sleep(3)"); err == nil {
		t.Error("Exec past its deadline succeeded")
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the engine saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the engine's statement was not cancelled")
	}
}
