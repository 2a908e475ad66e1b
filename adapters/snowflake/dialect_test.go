package snowflake_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/snowflake"
	"github.com/refill/refill/models"
)

// TestRenderShop pins the Snowflake SQL of every model of the example
// project (refill render --target prod).
func TestRenderShop(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, "testdata/shop.sql", adaptertest.RenderShop(t, snowflake.Engine()))
}

func TestQuoteIdent(t *testing.T) {
	t.Parallel()
	d := snowflake.Dialect{}
	for name, want := range map[string]string{
		"daily_revenue":  `"DAILY_REVENUE"`, // what unquoted daily_revenue resolves to
		"OrderDate":      `"ORDERDATE"`,
		"_tmp$1":         `"_TMP$1"`,
		"ORDER":          `"ORDER"`, // a reserved word is fine once quoted
		"Order Date":     `"Order Date"`,
		"my-table":       `"my-table"`,
		"3rd_party":      `"3rd_party"`, // cannot be written unquoted: kept as is
		"straße":         `"straße"`,
		`say "hi"`:       `"say ""hi"""`,
		"marts__daily__": `"MARTS__DAILY__"`,
	} {
		if got := d.QuoteIdent(name); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", name, got, want)
		}
	}
	if got := d.QuoteExact("orderDate"); got != `"orderDate"` {
		t.Errorf("QuoteExact keeps a stored name's case: got %s", got)
	}
	rel := models.Relation{Schema: "marts", Name: "daily_revenue"}
	if got := rel.Quote(d); got != `"MARTS"."DAILY_REVENUE"` {
		t.Errorf("marts.daily_revenue quotes as %s", got)
	}
}

func TestLiterals(t *testing.T) {
	t.Parallel()
	d := snowflake.Dialect{}
	paris, _ := time.LoadLocation("Europe/Paris")
	at := time.Date(2024, 1, 2, 13, 0, 0, 0, paris)
	for _, c := range []struct{ got, want string }{
		{d.QuoteString(`it's \ fine`), `'it''s \\ fine'`},
		{d.QuoteString("two\nlines"), "'two\nlines'"},
		{d.Date(at), "'2024-01-02'::DATE"},
		{d.Timestamp(at), "'2024-01-02 12:00:00'::TIMESTAMP_NTZ"},
		{d.Timestamp(at.Add(1500 * time.Microsecond)), "'2024-01-02 12:00:00.0015'::TIMESTAMP_NTZ"},
		{d.Bool(true) + d.Bool(false), "TRUEFALSE"},
		{d.DateTrunc(models.Month, `"D"`), `DATE_TRUNC('MONTH', "D")`},
		{d.DateAdd(`"D"`, -7, models.Day), `DATEADD(day, -7, "D")`},
		{d.CastDate("x"), "TO_DATE(x)"},
		{d.CastString("x"), "TO_VARCHAR(x)"},
		{d.ColumnType(models.TypeInt), "NUMBER(38,0)"},
		{d.ColumnType(models.TypeTimestamp), "TIMESTAMP_NTZ"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestTargetTypeWidens(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind  string
		scale int64
		want  string
	}{
		{"FIXED", 0, "NUMBER(38,0)"}, {"FIXED", 2, "NUMBER(38,2)"}, {"TEXT", 0, "VARCHAR"},
		{"REAL", 0, "FLOAT"}, {"DATE", 0, "DATE"}, {"timestamp_ntz", 0, "TIMESTAMP_NTZ"}, {"BOOLEAN", 0, "BOOLEAN"},
	} {
		if got := snowflake.TargetType(c.kind, c.scale); got != c.want {
			t.Errorf("TargetType(%s, %d) = %s, want %s", c.kind, c.scale, got, c.want)
		}
	}
}

func TestValueNormalizes(t *testing.T) {
	t.Parallel()
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.FixedZone("x", 3600))
	for _, c := range []struct {
		kind  string
		scale int64
		in    any
		want  any
	}{
		{"FIXED", 0, "42", int64(42)},
		{"FIXED", 0, "-9223372036854775808", int64(-9223372036854775808)},
		{"FIXED", 0, "18446744073709551615", uint64(18446744073709551615)},
		{"FIXED", 0, "123456789012345678901234567890", 1.2345678901234568e29},
		{"FIXED", 2, "1.50", 1.5},
		{"FIXED", 0, int64(7), int64(7)},
		{"REAL", 0, "1.5", 1.5},
		{"REAL", 0, 2.25, 2.25},
		{"BOOLEAN", 0, "1", true},
		{"BOOLEAN", 0, "false", false},
		{"BOOLEAN", 0, true, true},
		{"TEXT", 0, "42", "42"},
		{"DATE", 0, day, day.UTC()},
		{"TIMESTAMP_LTZ", 0, day, day.UTC()},
		{"TEXT", 0, nil, nil},
	} {
		got := snowflake.ColumnValue(c.kind, c.scale, c.in)
		if got != c.want {
			t.Errorf("columnValue(%s, %d, %#v) = %#v, want %#v", c.kind, c.scale, c.in, got, c.want)
		}
	}
}

func TestCapabilitiesNeedNoConnection(t *testing.T) {
	t.Parallel()
	info := snowflake.Capabilities()
	if info.Name != "snowflake" || !info.MultiTable || info.DefaultConcurrency != 8 || info.Guarantee == "" {
		t.Errorf("Capabilities() = %+v", info)
	}
}

func TestOpenChecksCredentialsBeforeConnecting(t *testing.T) {
	t.Parallel()
	_, err := snowflake.Open(context.Background(), snowflake.Config{DSN: "alice@acct/DB", LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), snowflake.EnvPassword) {
		t.Errorf("Open without a password: %v, want an error naming %s", err, snowflake.EnvPassword)
	}
}

func TestQueryTagIsBoundedJSON(t *testing.T) {
	long := strings.Repeat(`"x"`, 3000)
	for _, tag := range []adapters.Tag{
		{RunID: "r", Model: "m", Partition: "2024-01-01..2024-12-31", Step: "stage"},
		{RunID: long, Model: long, Partition: long, Step: long},
	} {
		got := snowflake.QueryTag(tag)
		var v map[string]string
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Errorf("QueryTag is not JSON: %v\n%s", err, got)
		}
		if n := utf8.RuneCountInString(got); n > 2000 {
			t.Errorf("QueryTag has %d characters, over Snowflake's 2000", n)
		}
		if v["app"] != "refill" || v["step"] == "" {
			t.Errorf("QueryTag = %s, want app and step", got)
		}
	}
}
