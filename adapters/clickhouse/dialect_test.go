package clickhouse_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	chadapter "github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// TestRenderShop pins the ClickHouse SQL of every model of the example
// project.
func TestRenderShop(t *testing.T) {
	adaptertest.Golden(t, "testdata/shop.sql", adaptertest.RenderShop(t, chadapter.Engine()))
}

func TestLiterals(t *testing.T) {
	d := chadapter.Dialect{}
	for _, tc := range []struct{ got, want string }{
		{d.QuoteIdent("order_date"), "`order_date`"},
		{d.QuoteIdent("we`ird\\name"), "`we\\`ird\\\\name`"},
		{d.QuoteString(`it's a \ backslash`), `'it\'s a \\ backslash'`},
		{d.QuoteString("two\nlines\x00"), `'two\nlines\0'`},
		{d.Date(time.Date(2024, 1, 2, 23, 0, 0, 0, time.FixedZone("x", -3600))), "toDate('2024-01-02')"},
		{d.Timestamp(time.Date(2024, 1, 2, 13, 0, 0, 0, time.FixedZone("x", 3600))), "toDateTime('2024-01-02 12:00:00', 'UTC')"},
		{d.Timestamp(time.Date(2024, 1, 2, 13, 0, 0, 5e8, time.UTC)), "toDateTime64('2024-01-02 13:00:00.500', 3, 'UTC')"},
		{d.Timestamp(time.Date(2024, 1, 2, 13, 0, 0, 1000, time.UTC)), "toDateTime64('2024-01-02 13:00:00.000001', 6, 'UTC')"},
		{d.Bool(true) + d.Bool(false), "10"},
		{d.DateTrunc(models.Hour, "ts"), "toStartOfHour(ts)"},
		{d.DateTrunc(models.Day, "ts"), "toDate(ts)"},
		{d.DateTrunc(models.Week, "d"), "toMonday(d)"},
		{d.DateTrunc(models.Month, "d"), "toStartOfMonth(d)"},
		{d.DateTrunc(models.Year, "d"), "toStartOfYear(d)"},
		{d.DateAdd("d", -6, models.Day), "addDays(d, -6)"},
		{d.DateAdd("ts", 2, models.Hour), "addHours(ts, 2)"},
		{d.DateAdd("d", 1, models.Week) + d.DateAdd("d", 1, models.Month) + d.DateAdd("d", 1, models.Year), "addWeeks(d, 1)addMonths(d, 1)addYears(d, 1)"},
		{d.CastDate("x") + d.CastString("y"), "toDate(x)toString(y)"},
		{d.ColumnType(models.TypeBool) + d.ColumnType(models.TypeInt) + d.ColumnType(models.TypeFloat), "UInt8Int64Float64"},
		{d.ColumnType(models.TypeDate) + d.ColumnType(models.TypeTimestamp) + d.ColumnType(models.TypeString), "DateDateTime('UTC')String"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	w := adapters.Window{Column: "region", Values: []any{"eu", "it's", true}}
	if got := w.Predicate(d); got != "`region` IN ('eu', 'it\\'s', 1)" {
		t.Errorf("list predicate %s", got)
	}
}

// TestSeedChunks checks that large seeds are split below max_query_size.
func TestSeedChunks(t *testing.T) {
	seed := &models.Seed{Columns: []models.Column{{Name: "id", Type: models.TypeInt}, {Name: "name", Type: models.TypeString}}}
	for i := 0; i < 20000; i++ {
		seed.Rows = append(seed.Rows, []any{int64(i), strings.Repeat("x", 40)})
	}
	stmts := chadapter.SeedStatements(chadapter.Dialect{}, seed, models.Relation{Schema: "raw", Name: "t"})
	rows := 0
	for _, s := range stmts[1:] {
		if len(s) > 192<<10 {
			t.Errorf("a %d-byte INSERT", len(s))
		}
		rows += strings.Count(s, "SELECT ")
	}
	if len(stmts) < 3 || rows != 20000 {
		t.Errorf("%d statements with %d rows", len(stmts), rows)
	}
}

func TestCapabilities(t *testing.T) {
	info := chadapter.Capabilities()
	if info.Name != "clickhouse" || info.MultiTable || info.DefaultConcurrency != 4 || !strings.Contains(info.Guarantee, "REPLACE PARTITION") {
		t.Errorf("Capabilities() = %+v", info)
	}
}

// TestTransient classifies errors without a server.
func TestTransient(t *testing.T) {
	ex := func(code int32) error {
		return fmt.Errorf("staging x: %w", &clickhouse.Exception{Code: code, Name: "DB::Exception", Message: "m"})
	}
	var a *chadapter.Adapter // Transient needs no connection
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"timeout exceeded", ex(159), true},
		{"too many simultaneous queries", ex(202), true},
		{"socket timeout", ex(209), true},
		{"network error", ex(210), true},
		{"memory limit", ex(241), true},
		{"table is read only", ex(242), true},
		{"too many parts", ex(252), true},
		{"unknown status of insert", ex(319), true},
		{"keeper", ex(999), true},
		{"syntax error", ex(62), false},
		{"unknown identifier", ex(47), false},
		{"unknown table", ex(60), false},
		{"type mismatch", ex(53), false},
		{"throwIf", ex(395), false},
		{"EOF", fmt.Errorf("read: %w", io.EOF), true},
		{"bad conn", driver.ErrBadConn, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"acquire timeout", clickhouse.ErrAcquireConnTimeout, true},
		{"marked", &adapters.TransientError{Err: errors.New("injected")}, true},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"deadline", context.DeadlineExceeded, false},
		{"plain", errors.New("the query of x lacks columns"), false},
	} {
		if got := a.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestDSNIsNotDisclosed checks that errors never contain the DSN's
// password.
func TestDSNIsNotDisclosed(t *testing.T) {
	for _, dsn := range []string{
		"clickhouse://user:s3cr3t@127.0.0.1:notaport/default",
		"clickhouse://user:s3cr3t@127.0.0.1:1/default?dial_timeout=1s",
		"http://user:s3cr3t@127.0.0.1:8123/default",
		"clickhouse://user:s3/cr3t@127.0.0.1:9000/default",
	} {
		_, err := chadapter.Open(context.Background(), chadapter.Config{DSN: dsn})
		if err == nil {
			t.Errorf("Open(%s) succeeded", dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "cr3t") {
			t.Errorf("the error discloses the password: %v", err)
		}
	}
	if _, err := chadapter.Open(context.Background(), chadapter.Config{DSN: "http://127.0.0.1:8123/default"}); err == nil || !strings.Contains(err.Error(), "native protocol") {
		t.Errorf("an HTTP DSN: %v", err)
	}
}
