package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/recorder"
)

// TestRunStatements records what `refill run` issues for the example
// project on each engine, from planning to the last ledger write:
// testdata/statements/<engine>.sql is the log of the real runner and
// adapter, the runner's verification and audit queries included, and
// every statement in it ran without an error on that engine. The run
// covers every kind of model: batched and cumulative days, a lookback,
// list values and a whole table; a second run publishes a day of every
// daily model together, through overlays.
func TestRunStatements(t *testing.T) {
	t.Run("duckdb", func(t *testing.T) {
		dir := shop(t, nil)
		mustRefill(t, dir, "seed")
		got := recordRun(t, dir, nil, "run", "--from", "2024-01-01", "--to", "2024-01-03", janNow, "--concurrency", "1")
		got += recordRun(t, dir, nil, "run", "--from", "2024-01-03", "--to", "2024-01-03", janNow, "--mode", "all", "--publish", "together", "--concurrency", "1")
		adaptertest.Golden(t, "testdata/statements/duckdb.sql", got)
	})
	t.Run("clickhouse", func(t *testing.T) {
		dir, prefix := clickhouseShop(t)
		// A ledger of its own: the server's shared one holds other tests' runs.
		yml, err := os.ReadFile(filepath.Join(dir, "refill.yml"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, "refill.yml", strings.Replace(string(yml), "adapter: clickhouse\n",
			"adapter: clickhouse\n    ledger_schema: "+prefix+"refill\n    stage_schema: "+prefix+"refill_stage\n", 1))
		dropClickHouseDatabases(t, prefix+"refill", prefix+"refill_stage")
		mustRefill(t, dir, "seed", "--target", "clickhouse")
		got := recordRun(t, dir, []string{prefix, "p_"}, "run", "--target", "clickhouse", "--from", "2024-01-01", "--to", "2024-01-03", janNow, "--concurrency", "1")
		// Fingerprints hash the models' table names, which carry the prefix.
		got = regexp.MustCompile(`'[0-9a-f]{16}'`).ReplaceAllString(got, "'FINGERPRINT'")
		ch := adaptertest.ClickHouseServer.Open(t, clickhouse.Engine(), adaptertest.Schemas{}).(*clickhouse.Adapter)
		major, _, _ := strings.Cut(ch.Server().Version, ".")
		adaptertest.Golden(t, "testdata/statements/clickhouse-"+major+".sql", got)
	})
}

// recordRun runs refill with args in dir, its statements recorded, and
// returns the log, masked of what differs between runs (run IDs, the
// clock, the host and process, random names; replace are more pairs of
// old and new text).
func recordRun(t *testing.T, dir string, replace []string, args ...string) string {
	t.Helper()
	rec := recorder.New()
	rec.Note("refill %s", strings.Join(args, " "))
	var out, errb bytes.Buffer
	a := &app{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.LookupEnv,
		configure: func(cfg any) {
			switch cfg := cfg.(type) {
			case *duckdb.Config:
				cfg.Connector = rec.Wrap
			case *clickhouse.Config:
				// Records are written at the end of the run, never by a
				// timer whose moment would vary.
				cfg.Connector, cfg.FlushAfter = rec.Wrap, time.Hour
			}
		}}
	if code := a.do(append([]string{"--project", dir}, args...)); code != 0 {
		t.Fatalf("refill %s: exit %d\n%s%s\n%s", strings.Join(args, " "), code, out.String(), errb.String(), rec)
	}
	host, _ := os.Hostname()
	names := strings.NewReplacer(append([]string{"'" + host + "'", "'HOST'"}, replace...)...)
	pid := strconv.Itoa(os.Getpid())
	masks := []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}`), "RUN-ID"},
		{regexp.MustCompile(`(__[swv]_)[0-9]{8}t[0-9]{6}z[0-9a-f]{6}_[0-9a-f]{6}`), "${1}RUN_XXXXXX"},
		// The pid follows the host: in a VALUES list, after `host` in
		// Snowflake's SELECT, and as ClickHouse's ledger constants (the
		// leases' c3, the runs' c5).
		{regexp.MustCompile(`('HOST'(?: AS \S+)?, )` + pid + `\b`), "${1}PID"},
	}
	var b strings.Builder
	rec.Write(&b, func(line string) string {
		line = names.Replace(line)
		for _, m := range masks {
			line = m.re.ReplaceAllString(line, m.with)
		}
		return adaptertest.MaskVolatile(line)
	})
	return b.String() + "\n"
}
