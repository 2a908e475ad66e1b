package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// The oracle test. It generates small projects and random sequences of
// refill commands (runs with random selections, ranges, modes, batches,
// publish modes and concurrency; runs of the real binary killed or
// interrupted at random moments; resumes; late and poisoned source rows;
// logic changes; tables changed behind refill's back), then checks the
// promise against a recomputation the test does itself:
//
//   - after every run that exits 0, no partition it published read an
//     upstream partition that was missing, failed, or rewritten after it
//     (by the test's own account of what each model reads);
//   - after every command, every published ledger record's row count is
//     the rows of its window in the table;
//   - after a final plain scheduled run, every table equals the model's SQL
//     run partition by partition, in dependency order, over the whole
//     range (rows as a multiset, column names and types), and a plan has
//     nothing to do.
//
// The same cases run on DuckDB (TestOracle), on a ClickHouse server
// (TestOracleClickHouse: 18.16, or 26 through chDB) and on the cluster in
// both layouts (TestOracleCluster): see oracle_warehouse_test.go. The
// models are portable, written with the template helpers and
// target.adapter where the engines differ.
//
// go test -run TestOracle -oracle.cases 200 runs more cases (make oracle
// ENGINE=...); -oracle.seed N replays one, and -oracle.keep DIR keeps its
// project (refill.yml, models, the DuckDB file) to look into.
//
// The cases' seeds are new on every run, from the clock, unless
// REFILL_ORACLE_BASE sets the first: CI sets it from the commit, so that a
// commit's CI runs the same cases wherever it runs (the timing of kills
// aside), and a failure there replays here.

var (
	oracleCases = flag.Int("oracle.cases", 10, "random cases TestOracle runs")
	oracleSeed  = flag.Uint64("oracle.seed", 0, "run only the case with this seed")
	oracleSteps = flag.Int("oracle.steps", 9, "commands per case")
	oracleKeep  = flag.String("oracle.keep", "", "keep each case's project in a directory of its own under this one")
)

// The generated project's calendar: events from 26 February to 12 March
// 2024 (a month end, and the United States' change to summer time on the
// 10th), and a clock just after.
var (
	oracleFirst = time.Date(2024, 2, 26, 0, 0, 0, 0, time.UTC)
	oracleLast  = time.Date(2024, 3, 12, 23, 0, 0, 0, time.UTC)
	oracleNow   = "--now=2024-03-13T00:30:00Z"
	newYork, _  = time.LoadLocation("America/New_York")
)

// genModel is one model of a generated project, with what the test knows
// of it independently of refill: which partitions of which models each of
// its partitions reads, and how to find a partition's rows.
type genModel struct {
	name  string
	sql   func(k int) string // the model file, with logic constant k
	k     int
	kind  models.Kind
	reads func(key string) map[string][]string // upstream model -> keys ("*": all it has)
	// keyOf is the SQL expression giving a row's partition key.
	keyOf string
	// source: a whole table over the source, which only scheduled runs
	// refresh; horizon cases, which have none, leave it out.
	source bool
	// v is what its file says now (see modelVariant).
	v modelVariant
	// src is the database of the source table events (raw in the file).
	src string
	// tracked: the case declares the source's time column (tracked
	// sources find late rows anywhere), and the model has no lookback or
	// watermark.
	tracked bool
}

// scalar returns, for a model's SQL, a value computed from another model
// up: a WITH clause to put before the SELECT and the value's name on
// ClickHouse, a scalar subquery elsewhere. On a sharded ClickHouse 18.16
// cluster a scalar subquery over a Distributed table fails inside the
// INSERT that stages it ("Not found column ... in block"), and a CROSS
// JOIN there loses the other shards' rows without an error; a WITH scalar
// is computed once and right.
func scalar(expr, up, name string) (with, value string) {
	on := func(clickhouse, other string) string {
		return `{{ target.adapter == "clickhouse" ? ` + clickhouse + ` : ` + other + ` }}`
	}
	with = on(`raw("WITH (SELECT `+expr+` FROM")`, `raw("")`) + " " + on(`ref("`+up+`")`, `raw("")`) + on(`raw(") AS `+name+`")`, `raw("")`)
	value = on(`raw("`+name+`")`, `raw("(SELECT `+expr+` FROM")`) + " " + on(`raw("")`, `ref("`+up+`")`) + on(`raw("")`, `raw(")")`)
	return with, value
}

// oracleModels returns the models a case may use. hourly reads the source
// and is always there; the others are picked at random.
func oracleModels() []*genModel {
	hoursOf := func(from, to time.Time) []string {
		var out []string
		for t := from; t.Before(to); t = t.Add(time.Hour) {
			if !t.Before(oracleFirst) {
				out = append(out, t.Format("2006-01-02T15"))
			}
		}
		return out
	}
	day := func(key string) time.Time { t, _ := time.Parse("2006-01-02", key); return t }
	daysOf := func(from, to time.Time) []string {
		var out []string
		for t := from; t.Before(to); t = t.AddDate(0, 0, 1) {
			if !t.Before(oracleFirst) {
				out = append(out, t.Format("2006-01-02"))
			}
		}
		return out
	}
	nyDay := func(key string) (time.Time, time.Time) {
		d := day(key)
		s := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, newYork)
		return s.UTC(), s.AddDate(0, 0, 1).UTC()
	}
	totalWith, totalDays := scalar("coalesce(max(days), 0)", "total", "total_days")
	regionsWith, regionEvents := scalar("sum(n)", "regions", "region_events")
	// The New York date of hour h, on each engine.
	nyDate := `{{ target.adapter == "clickhouse" ? raw("toDate(h, 'America/New_York')") : raw("CAST(timezone('America/New_York', CAST(h AS TIMESTAMPTZ)) AS DATE)") }}`
	return []*genModel{
		{name: "hourly", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: h
grain: hour
start: 2024-02-26
batch: 24
lookback: 30
watermark: SELECT concat(CAST(count(*) AS VARCHAR), ':', CAST(coalesce(sum(v), 0) AS VARCHAR)) FROM {{ source("raw.events") }} WHERE ts >= {{ cast_timestamp(start) }} AND ts < {{ cast_timestamp(end) }}
tags: [core]
*/
SELECT {{ date_trunc("hour", ident("ts")) }} AS h, region, CAST(count(*) AS BIGINT) AS n, sum(v) * %d AS s
FROM {{ source("raw.events") }}
WHERE ts >= {{ cast_timestamp(start) }} AND ts < {{ cast_timestamp(end) }}
  AND {{ target.adapter == "clickhouse" ? raw("throwIf(v < 0) = 0") : raw("CASE WHEN v < 0 THEN error('poisoned event') ELSE TRUE END") }}
GROUP BY {{ date_trunc("hour", ident("ts")) }}, region`, k)
		}, reads: func(string) map[string][]string { return nil },
			keyOf: "strftime(h, '%Y-%m-%dT%H')"},
		{name: "daily", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-02-26
batch: 1
*/
SELECT {{ cast_date(ident("h")) }} AS d, sum(n) AS n, sum(s) * %d AS s
FROM {{ ref("hourly") }} WHERE h >= {{ cast_timestamp(start) }} AND h < {{ cast_timestamp(end) }}
GROUP BY {{ cast_date(ident("h")) }}`, k)
		}, reads: func(key string) map[string][]string {
			return map[string][]string{"hourly": hoursOf(day(key), day(key).AddDate(0, 0, 1))}
		}, keyOf: "strftime(d, '%Y-%m-%d')"},
		// Each day and the two after it, as a union of shifted days: a
		// join with a range of offsets has no portable form, and on
		// ClickHouse 18.16 an alias d over x.d would shadow x.d in WHERE.
		{name: "rolling", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-02-26
depends_on_past: 2
batch: 1
*/
SELECT on_day AS d, sum(s) + %d AS s3
FROM (
  SELECT d AS on_day, s FROM {{ ref("daily") }} WHERE d >= {{ date_add(start, -2, "day") }} AND d < {{ end }}
  UNION ALL
  SELECT {{ cast_date(date_add(ident("d"), 1, "day")) }} AS on_day, s FROM {{ ref("daily") }} WHERE d >= {{ date_add(start, -2, "day") }} AND d < {{ end }}
  UNION ALL
  SELECT {{ cast_date(date_add(ident("d"), 2, "day")) }} AS on_day, s FROM {{ ref("daily") }} WHERE d >= {{ date_add(start, -2, "day") }} AND d < {{ end }}
) AS x
WHERE on_day >= {{ start }} AND on_day < {{ end }}
GROUP BY on_day`, k)
		}, reads: func(key string) map[string][]string {
			return map[string][]string{"daily": daysOf(day(key).AddDate(0, 0, -2), day(key).AddDate(0, 0, 1))}
		}, keyOf: "strftime(d, '%Y-%m-%d')"},
		{name: "ny_daily", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: day_start
grain: day
start: 2024-02-26
timezone: America/New_York
*/
SELECT {{ start }} AS day_start, CAST(count(*) AS BIGINT) AS hours, coalesce(sum(s), 0) * %d AS s
FROM {{ ref("hourly") }} WHERE h >= {{ cast_timestamp(start) }} AND h < {{ cast_timestamp(end) }}`, k)
		}, reads: func(key string) map[string][]string {
			s, e := nyDay(key)
			return map[string][]string{"hourly": hoursOf(s, e)}
		}, keyOf: "strftime(timezone('America/New_York', CAST(day_start AS TIMESTAMPTZ)), '%Y-%m-%d')"},
		{name: "ny_local", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: local_date
grain: day
start: 2024-02-26
timezone: America/New_York
partition_type: date
batch: 1
*/
SELECT %[2]s AS local_date, sum(s) * %[1]d AS s
FROM {{ ref("hourly") }}
WHERE h >= {{ cast_timestamp(start) }} AND h < {{ cast_timestamp(end) }}
GROUP BY %[2]s`, k, nyDate)
		}, reads: func(key string) map[string][]string {
			s, e := nyDay(key)
			return map[string][]string{"hourly": hoursOf(s, e)}
		}, keyOf: "strftime(local_date, '%Y-%m-%d')"},
		{name: "weekly", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: week_start
grain: week
start: 2024-02-26
*/
SELECT {{ start }} AS week_start, CAST(count(*) AS BIGINT) AS days, coalesce(sum(s), 0) + %d AS s
FROM {{ ref("daily") }} WHERE d >= {{ start }} AND d < {{ end }}`, k)
		}, reads: func(key string) map[string][]string {
			var y, w int
			fmt.Sscanf(key, "%d-W%d", &y, &w)
			p, _ := models.ParsePeriod(key, time.UTC)
			return map[string][]string{"daily": daysOf(p.Start, p.End)}
		}, keyOf: "strftime(week_start, '%G-W%V')"},
		{name: "sunday_weekly", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: week_start
grain: week
week_start: sunday
start: 2024-02-25
*/
SELECT {{ start }} AS week_start, CAST(count(*) AS BIGINT) AS days, coalesce(sum(s), 0) + %d AS s
FROM {{ ref("daily") }} WHERE d >= {{ start }} AND d < {{ end }}`, k)
		}, reads: func(key string) map[string][]string {
			start, _ := time.Parse(time.DateOnly, key)
			return map[string][]string{"daily": daysOf(start, start.AddDate(0, 0, 7))}
		}, keyOf: "strftime(week_start, '%Y-%m-%d')"},
		{name: "monthly", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: month_start
grain: month
start: 2024-02
*/
SELECT {{ start }} AS month_start, CAST(count(*) AS BIGINT) AS days, coalesce(sum(s), 0) + %d AS s
FROM {{ ref("daily") }} WHERE d >= {{ start }} AND d < {{ end }}`, k)
		}, reads: func(key string) map[string][]string {
			p, _ := models.ParsePeriod(key, time.UTC)
			return map[string][]string{"daily": daysOf(p.Start, p.End)}
		}, keyOf: "strftime(month_start, '%Y-%m')"},
		{name: "by_region", kind: models.ListPartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: region
values: [eu, us, apac]
tags: [regions]
*/
SELECT region, sum(n) AS n, sum(s) + %d AS s FROM {{ ref("hourly") }} WHERE region = {{ partition }} GROUP BY region`, k)
		}, reads: func(string) map[string][]string { return map[string][]string{"hourly": {"*"}} },
			keyOf: "region"},
		{name: "cumulative", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-02-26
depends_on_past: self
columns: {d: date, n: bigint, s: bigint}
*/
SELECT {{ start }} AS d, CAST(coalesce(sum(n), 0) AS BIGINT) AS n, CAST(coalesce(sum(s), 0) + %d AS BIGINT) AS s
FROM (SELECT n, s FROM {{ ref("daily") }} WHERE d >= {{ start }} AND d < {{ end }}
      UNION ALL
      SELECT n, s FROM {{ this }} WHERE d = {{ date_add(start, -1, "day") }}) AS t`, k)
		}, reads: func(key string) map[string][]string {
			reads := map[string][]string{"daily": {key}}
			if prev := day(key).AddDate(0, 0, -1); !prev.Before(oracleFirst) {
				reads["cumulative"] = []string{prev.Format("2006-01-02")}
			}
			return reads
		}, keyOf: "strftime(d, '%Y-%m-%d')"},
		{name: "total", kind: models.WholeTable, sql: func(k int) string {
			return fmt.Sprintf(`SELECT CAST(count(*) AS BIGINT) AS days, coalesce(sum(s), 0) + %d AS s FROM {{ ref("daily") }}`, k)
		}, reads: func(string) map[string][]string { return map[string][]string{"daily": {"*"}} },
			keyOf: "'all'"},
		// A chain through a whole table: days that read it, and a whole
		// table over those days.
		{name: "share", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-02-26
*/
%[2]s
SELECT x.d, x.s + %[1]d * %[3]s AS s
FROM {{ ref("daily") }} AS x WHERE x.d >= {{ start }} AND x.d < {{ end }}`, k, totalWith, totalDays)
		}, reads: func(key string) map[string][]string {
			return map[string][]string{"daily": {key}, "total": {"all"}}
		}, keyOf: "strftime(d, '%Y-%m-%d')"},
		{name: "share_total", kind: models.WholeTable, sql: func(k int) string {
			return fmt.Sprintf(`SELECT CAST(count(*) AS BIGINT) AS days, coalesce(sum(s), 0) + %d AS s FROM {{ ref("share") }}`, k)
		}, reads: func(string) map[string][]string { return map[string][]string{"share": {"*"}} },
			keyOf: "'all'"},
		// A whole table over the source, which scheduled runs refresh, and
		// days that read it: they run only when a refresh changes it.
		{name: "regions", kind: models.WholeTable, sql: func(k int) string {
			return fmt.Sprintf(`SELECT region, CAST(count(*) AS BIGINT) + %d AS n FROM {{ source("raw.events") }} GROUP BY region`, k)
		}, reads: func(string) map[string][]string { return nil }, keyOf: "'all'", source: true},
		{name: "weighted", kind: models.TimePartitioned, sql: func(k int) string {
			return fmt.Sprintf(`/* refill
partition_by: d
grain: day
start: 2024-02-26
*/
%[2]s
SELECT x.d, x.n * %[3]s + %[1]d AS w
FROM {{ ref("daily") }} AS x WHERE x.d >= {{ start }} AND x.d < {{ end }}`, k, regionsWith, regionEvents)
		}, reads: func(key string) map[string][]string {
			return map[string][]string{"daily": {key}, "regions": {"all"}}
		}, keyOf: "strftime(d, '%Y-%m-%d')", source: true},
	}
}

// oracle is one generated case.
type oracle struct {
	t       *testing.T
	tracked bool // the case tracks the source (see lateRows)
	content bool // the case's models record their content (content_hash:)
	seed    uint64
	rng     *rand.Rand
	dir     string
	bin     string
	models  []*genModel
	byName  map[string]*genModel
	log     []string // what was done, for the failure report
	// allowed are runs made with --allow-missing-upstream, which may read
	// missing upstream partitions by request.
	allowed map[string]bool
	lastRun string // the latest run that did not finish, for --resume
	// drifted are the partitions whose rows the test changed behind
	// refill's back, until a run repairs them.
	drifted map[string]bool
	// errorf reports a broken promise (t.Errorf, unless a test of the
	// checks collects them).
	errorf func(format string, args ...any)
	// through, when set, is the end of a horizon case: every range ends by
	// it, as if the data ended there (see newOracle).
	through time.Time
	// variants are the variants the oracle wrote, by "model fingerprint";
	// frozen, the partitions refill accept left holding an earlier
	// variant's rows (see accept).
	variants map[string]modelVariant
	frozen   map[string]frozenPartition
	started  time.Time
	// checking is the time the checks after the steps took; waited, the
	// time the steps waited for a cluster's nodes (shareNodes).
	checking, waited time.Duration
	// wh is the warehouse the case runs on.
	wh warehouse
}

func TestOracle(t *testing.T) {
	t.Parallel()
	runOracle(t, 10, func(o *oracle) warehouse { return &duckWarehouse{t: o.t, dir: o.dir} })
}

// TestOracleClickHouse runs the oracle's cases on the ClickHouse server
// CLICKHOUSE_DSN names (18.16, or 26 through chDB's front end), each in
// databases of its own, and checks them against DuckDB's recomputation
// from the rows the server holds.
func TestOracleClickHouse(t *testing.T) {
	t.Parallel()
	adaptertest.ClickHouseServer.Env(t)
	runOracle(t, 3, func(o *oracle) warehouse {
		return newClickHouseWarehouse(o.t, o.dir, adaptertest.ClickHouseServer, "", o.names)
	})
}

// TestOracleCluster runs the oracle's cases on the ClickHouse cluster
// (CLICKHOUSE_CLUSTER_DSN), in both layouts.
func TestOracleCluster(t *testing.T) {
	t.Parallel()
	adaptertest.ClusterServer.Env(t)
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			runOracle(t, 2, func(o *oracle) warehouse {
				return newClickHouseWarehouse(o.t, o.dir, adaptertest.ClusterServer, layout, o.names)
			})
		})
	}
}

// runOracle runs the cases: -oracle.cases of them, or cases; under -short
// at most two, every command in-process (the binary is not built, so
// nothing is killed).
func runOracle(t *testing.T, cases int, open func(o *oracle) warehouse) {
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "oracle.cases" {
			cases = *oracleCases
		}
	})
	bin := ""
	if testing.Short() {
		cases = min(cases, 2)
	} else {
		bin = binary(t)
	}
	seeds := []uint64{*oracleSeed}
	if *oracleSeed == 0 {
		seeds = nil
		base := uint64(time.Now().UnixNano())
		if v, ok := os.LookupEnv("REFILL_ORACLE_BASE"); ok {
			b, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("REFILL_ORACLE_BASE=%q: want a number: %v", v, err)
			}
			base = b
		}
		for i := 0; i < cases; i++ {
			seeds = append(seeds, base+uint64(i)*7919)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			// (Setting a case up uses the cluster too: its databases and
			// source are made on every node.)
			var o *oracle
			shareNodes(func() { o = newOracleOn(t, bin, seed, open) })
			defer func() {
				if t.Failed() || testing.Verbose() {
					parent := strings.Split(t.Name(), "/")
					parent = parent[:len(parent)-1]
					t.Logf("on %s; replay: go test ./cmd/refill -run '^%s$' -oracle.seed %d\n%.0fs: checks after the steps %.0fs, waiting for the nodes %.0fs\nsteps:\n  %s",
						o.wh, strings.Join(parent, "$/^"), seed, time.Since(o.started).Seconds(), o.checking.Seconds(), o.waited.Seconds(), strings.Join(o.log, "\n  "))
				}
			}()
			for i := 0; i < *oracleSteps && !t.Failed(); i++ {
				if node, dir := o.wh.stoppable(); node != "" && o.rng.IntN(10) == 0 {
					o.replicaDown(node, dir)
					continue
				}
				asked := time.Now()
				shareNodes(func() {
					o.waited += time.Since(asked)
					o.step()
				})
			}
			if !t.Failed() {
				shareNodes(o.finish)
			}
		})
	}
}

// newOracle generates case seed on DuckDB. With want, the case has exactly
// the models it names (hourly always).
func newOracle(t *testing.T, bin string, seed uint64, want ...string) *oracle {
	return newOracleOn(t, bin, seed, func(o *oracle) warehouse { return &duckWarehouse{t: o.t, dir: o.dir} }, want...)
}

// newOracleOn generates case seed on the warehouse open returns.
func newOracleOn(t *testing.T, bin string, seed uint64, open func(o *oracle) warehouse, want ...string) *oracle {
	dir := t.TempDir()
	if *oracleKeep != "" {
		dir = filepath.Join(*oracleKeep, fmt.Sprint(seed))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := &oracle{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), dir: dir, bin: bin,
		byName: map[string]*genModel{}, allowed: map[string]bool{}, errorf: t.Errorf}
	o.wh = open(o)
	all := oracleModels()
	// A third of the cases are horizon cases: as if the data ended before
	// the clock, every range ends by o.through, and no scheduled run
	// happens (see finish).
	if want == nil && o.rng.IntN(3) == 0 {
		o.through = oracleFirst.AddDate(0, 0, 4+o.rng.IntN(11))
	}
	byName := map[string]*genModel{}
	for _, m := range all {
		byName[m.name] = m
	}
	o.models = append(o.models, all[0])
	for _, m := range all[1:] {
		if m.source && !o.through.IsZero() {
			continue
		}
		if want != nil && slices.Contains(want, m.name) || want == nil && o.rng.IntN(3) > 0 {
			o.models = append(o.models, m)
		}
	}
	// Keep what the chosen models read, transitively.
	for i := 0; i < len(o.models); i++ {
		for up := range o.models[i].reads("2024-03-01") {
			if !slices.ContainsFunc(o.models, func(m *genModel) bool { return m.name == up }) {
				o.models = append(o.models, byName[up])
			}
		}
	}
	// Most cases track the source: late rows may land anywhere in its
	// history. The others find them with hourly's lookback and watermark.
	o.tracked = o.rng.IntN(4) > 0
	yml := o.wh.targets()
	if o.tracked {
		yml += fmt.Sprintf("sources:\n  %s.events: {time_column: ts}\n", o.wh.source())
	}
	// Half record their partitions' content, for refill verify.
	if o.content = o.rng.IntN(2) == 0; o.content {
		yml += "content_hash: true\n"
	}
	o.write("refill.yml", yml)
	for _, m := range o.models {
		m.k, m.src, m.tracked = 1+o.rng.IntN(3), o.wh.source(), o.tracked
		o.byName[m.name] = m
		o.write("models/"+m.name+".sql", m.text(modelVariant{k: m.k}))
	}
	for _, m := range o.models {
		o.writeModel(m) // with every model there, to know its fingerprint
	}
	var b strings.Builder
	b.WriteString("ts,region,v\n")
	regions := []string{"eu", "us", "apac"}
	for h := oracleFirst; !h.After(oracleLast); h = h.Add(time.Hour) {
		for n := o.rng.IntN(3); n > 0; n-- {
			ts := h.Add(time.Duration(o.rng.IntN(3600)) * time.Second)
			fmt.Fprintf(&b, "%s,%s,%d\n", ts.Format("2006-01-02 15:04:05"), regions[o.rng.IntN(3)], 1+o.rng.IntN(100))
		}
	}
	o.write("seeds/"+o.wh.source()+"/events.csv", b.String())
	// (A horizon case's source ends at its end, as if the data did.)
	o.started = time.Now()
	o.must("seed")
	if o.tracked && o.rng.IntN(2) == 0 && o.wh.partitionSource() {
		o.logf("the source partitioned by day")
	}
	if !o.through.IsZero() {
		o.wh.deleteEvents("ts >= " + o.wh.timestamp(o.through))
	}
	o.logf("models %v, constants %v, horizon %v", o.names(), o.constants(), o.through)
	return o
}

func (o *oracle) names() []string {
	var out []string
	for _, m := range o.models {
		out = append(out, m.name)
	}
	return out
}

func (o *oracle) constants() map[string]int {
	out := map[string]int{}
	for _, m := range o.models {
		out[m.name] = m.k
	}
	return out
}

func (o *oracle) write(rel, text string) { write(o.t, o.dir, rel, text) }

func (o *oracle) logf(format string, args ...any) {
	o.log = append(o.log, fmt.Sprintf("%6.2fs ", time.Since(o.started).Seconds())+fmt.Sprintf(format, args...))
}

// refill runs the CLI in-process.
func (o *oracle) refill(args ...string) result {
	o.t.Helper()
	defer o.wh.changed()
	return refill(o.t, o.dir, o.waiting(args)...)
}

// waiting adds --wait to the commands that take leases, but on DuckDB: a
// run the oracle killed holds its tables until its leases expire (on
// DuckDB the file's lock shows it is gone).
func (o *oracle) waiting(args []string) []string {
	if _, duck := o.wh.(*duckWarehouse); duck || args[0] != "run" && args[0] != "accept" {
		return args
	}
	return append(slices.Clip(args), "--wait", "90s")
}

func (o *oracle) must(args ...string) result {
	o.t.Helper()
	r := o.refill(args...)
	if r.code != 0 {
		o.t.Fatalf("refill %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// step does one random command and checks what can be checked after it.
func (o *oracle) step() {
	switch n := o.rng.IntN(24); {
	case n < 9:
		o.run(false)
	case n < 11:
		o.run(o.bin != "") // with the real binary, killed or interrupted
	case n < 12 && o.lastRun != "":
		o.resume()
	case n < 15 && o.through.IsZero():
		// (Not in horizon cases: only a scheduled run finds late rows,
		// and they have none.)
		o.lateRows()
	case n < 15:
		o.changeLogic()
	case n < 17:
		o.changeLogic()
	case n < 18:
		o.drift()
	case n < 19:
		o.fullRefresh()
	case n < 20:
		o.changeColumns()
	case n < 21:
		o.editRange()
	case n < 22:
		o.accept()
	default:
		o.run(false)
	}
	if o.rng.IntN(5) == 0 {
		o.deferred()
	}
	if o.rng.IntN(6) == 0 {
		o.wh.merge()
		o.logf("merge the ledger")
	}
	if other, env := o.wh.elsewhere(); other != "" && o.rng.IntN(4) == 0 {
		o.twoRuns(other, env)
	}
	start := time.Now()
	o.checkRowCounts()
	o.checkPlans()
	o.checkStatus()
	o.checking += time.Since(start)
}

// runArgs returns random run flags.
func (o *oracle) runArgs() []string {
	args := []string{"run", oracleNow, "--yes", "--retries", "0"}
	switch o.rng.IntN(6) {
	case 0, 1: // everything
	case 2:
		args = append(args, o.pick().name)
	case 3:
		args = append(args, "+"+o.pick().name)
	case 4:
		args = append(args, o.pick().name+"+")
	default:
		args = append(args, "tag:core+")
	}
	first := oracleFirst.AddDate(0, 0, o.rng.IntN(16))
	last := first.AddDate(0, 0, o.rng.IntN(6))
	shape := o.rng.IntN(4)
	if !o.through.IsZero() {
		// Ranges that end by the horizon case's end; never scheduled.
		days := int(o.through.Sub(oracleFirst).Hours() / 24)
		first = oracleFirst.AddDate(0, 0, o.rng.IntN(days))
		if last = first.AddDate(0, 0, o.rng.IntN(6)); !last.Before(o.through) {
			last = o.through.AddDate(0, 0, -1)
		}
		shape = max(shape, 1)
	}
	switch shape {
	case 0: // scheduled: lookback applies
	case 1:
		args = append(args, "--partitions", first.Format("2006-01-02")+","+last.Format("2006-01-02"))
	default:
		args = append(args, "--from", first.Format("2006-01-02"), "--to", last.Format("2006-01-02"))
	}
	switch o.rng.IntN(8) {
	case 0:
		args = append(args, "--mode", "all")
	case 1:
		args = append(args, "--mode", "missing")
	case 2:
		args = append(args, "--mode", "failed")
	}
	if o.rng.IntN(4) == 0 {
		args = append(args, "--batch", fmt.Sprint(2+o.rng.IntN(6)))
	}
	if o.rng.IntN(5) == 0 {
		args = append(args, "--publish", "together")
		if o.rng.IntN(2) == 0 {
			// Reviewed: every stage diffed against its table, then
			// published, or, past --max-changed, nothing published and
			// every partition skipped.
			args = append(args, "--review")
			if limit := []string{"", "0", "3", "20%"}[o.rng.IntN(4)]; limit != "" {
				args = append(args, "--max-changed", limit)
			}
		}
	}
	args = append(args, "--concurrency", fmt.Sprint(1+o.rng.IntN(4)))
	// (Not in horizon cases: a partition reaching past their end, run
	// from what there is, is never rebuilt by a run that ends there.)
	if o.rng.IntN(10) == 0 && o.through.IsZero() {
		args = append(args, "--allow-missing-upstream")
	}
	return append(args, "--output", "json")
}

func (o *oracle) pick() *genModel { return o.models[o.rng.IntN(len(o.models))] }

// run runs refill: in-process, or as the real binary that is killed or
// interrupted after a random delay.
func (o *oracle) run(process bool) {
	args := o.runArgs()
	allow := slices.Contains(args, "--allow-missing-upstream")
	if !process {
		r := o.refill(args...)
		o.logf("refill %s -> exit %d", strings.Join(args, " "), r.code)
		if r.code == exitUsage && refused(r.stderr) {
			return
		}
		if r.code != exitOK && r.code != exitFailed && r.code != exitIncomplete {
			o.t.Fatalf("refill %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		o.ran(r.code, r.stdout, allow)
		return
	}
	o.runProcess(args, allow)
}

// runProcess runs the real binary with args, killed or interrupted after a
// random delay, or killed as it is about to run a statement of a kind
// (see killPoint): the nth it prints with --verbose.
func (o *oracle) runProcess(args []string, allow bool) {
	sig := syscall.SIGKILL
	if o.rng.IntN(2) == 0 {
		sig = syscall.SIGINT
	}
	delay := time.Duration(5+o.rng.IntN(600)) * time.Millisecond
	var at *killPoint
	nth := 1 + o.rng.IntN(4)
	if points := o.wh.killPoints(); len(points) > 0 && o.rng.IntN(2) == 0 {
		at, sig = &points[o.rng.IntN(len(points))], syscall.SIGKILL
		args = append(slices.Clip(args), "--verbose")
	}
	cmd := exec.Command(o.bin, append([]string{"--project", o.dir}, o.waiting(args)...)...)
	var stdout bytes.Buffer
	var stderr tail
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		o.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		o.t.Fatal(err)
	}
	timer := time.AfterFunc(delay, func() { cmd.Process.Signal(sig) })
	if at != nil {
		timer.Stop()
	}
	lines := bufio.NewScanner(errPipe)
	lines.Buffer(nil, 1<<24)
	seen := 0
	for lines.Scan() {
		stderr.add(lines.Text())
		if at != nil && at.re.MatchString(lines.Text()) {
			if seen++; seen == nth {
				cmd.Process.Kill()
			}
		}
	}
	cmd.Wait()
	timer.Stop()
	o.wh.changed()
	how := fmt.Sprintf("%s after %s", sig, delay)
	if at != nil {
		how = fmt.Sprintf("SIGKILL at %s statement %d (%d seen)", at.name, nth, seen)
	}
	out := stdout.String() + stderr.String()
	code := cmd.ProcessState.ExitCode()
	o.logf("refill %s, %s -> exit %d", strings.Join(args, " "), how, code)
	if code == 0 || code == exitIncomplete {
		o.ran(code, jsonPart(stdout.String()), allow)
	}
	if code == exitUsage && refused(out) {
		return
	}
	if code != 0 && code != 1 && code != exitIncomplete && code != exitInterrupted && code != -1 {
		o.t.Fatalf("exit %d\n%s", code, out)
	}
	if id := o.unfinishedRun(); id != "" {
		o.lastRun = id
		if allow {
			o.allowed[id] = true
		}
	}
}

// nodesInUse: the cases on a cluster share its nodes, step by step,
// except while one of them has stopped a node (replicaDown).
var nodesInUse sync.RWMutex

// shareNodes runs fn, sharing the cluster's nodes with the other cases
// when a case may stop one (CLICKHOUSE_CLUSTER_DIR is set: see
// warehouse.stoppable).
func shareNodes(fn func()) {
	if os.Getenv("CLICKHOUSE_CLUSTER_DIR") != "" {
		nodesInUse.RLock()
		defer nodesInUse.RUnlock()
	}
	fn()
}

// replicaDown stops (SIGTERM) or kills (SIGKILL) a replica of the cluster
// during a run, after a random delay, and starts it again a few seconds
// later, the cluster to itself; then waits until the replica has caught
// up. (Its downtime is short: while a node is down, every statement ON
// CLUSTER waits for it, up to distributed_ddl_task_timeout.) The run may
// fail what it could not write; nothing it leaves may be wrong.
func (o *oracle) replicaDown(node, dir string) {
	nodesInUse.Lock()
	defer nodesInUse.Unlock()
	how := []string{"stop", "kill"}[o.rng.IntN(2)]
	delay := time.Duration(o.rng.IntN(1500)) * time.Millisecond
	down := time.Duration(1+o.rng.IntN(8)) * time.Second
	nodeCmd := func(action string) error {
		out, err := exec.Command("../../.ci/cluster/node", dir, node, action).CombinedOutput()
		if err != nil {
			return fmt.Errorf(".ci/cluster/node %s %s: %v\n%s", node, action, err, out)
		}
		return nil
	}
	restarted := make(chan error, 1)
	time.AfterFunc(delay, func() {
		err := nodeCmd(how)
		time.Sleep(down)
		restarted <- errors.Join(err, nodeCmd("start"))
	})
	o.logf("%s %s after %s for %s, during the next run", how, node, delay, down)
	defer func() {
		if err := <-restarted; err != nil {
			o.t.Fatal(err)
		}
		o.wh.caughtUp(node)
		o.logf("%s started again, caught up", node)
	}()
	o.run(false)
}

// twoRuns runs two runs at once, one through the target's server, the
// other through target other, a server of the same tables: each waits for
// the tables the other holds.
func (o *oracle) twoRuns(other string, env map[string]string) {
	args := [2][]string{o.waiting(o.runArgs()), append(o.waiting(o.runArgs()), "--target", other)}
	var rs [2]result
	var wg sync.WaitGroup
	for i := range args {
		wg.Go(func() { rs[i] = refillEnv(o.t, o.dir, env, args[i]...) })
	}
	wg.Wait()
	o.wh.changed()
	for i, r := range rs {
		o.logf("at once: refill %s -> exit %d", strings.Join(args[i], " "), r.code)
		if r.code == exitUsage && refused(r.stderr) {
			continue
		}
		if r.code != exitOK && r.code != exitFailed && r.code != exitIncomplete {
			o.t.Fatalf("refill %s: exit %d\n%s%s", strings.Join(args[i], " "), r.code, r.stdout, r.stderr)
		}
		// (Leases hold the tables a run writes, not those it reads: one
		// run may read an upstream partition the other rewrites after, so
		// what it published is stale, not wrong, and status must say so.
		// checkReads, which holds one run to reading what stays, is left
		// out.)
		o.ran(r.code, r.stdout, true)
	}
}

// refused reports whether a run's usage error is one the oracle's random
// flags may meet: --partitions naming days of list or whole-table models
// only, --publish together with a model rebuilt (on_schema_change:
// rebuild), which replaces its table on its own, or on an engine that
// cannot publish tables together (ClickHouse).
func refused(stderr string) bool {
	return strings.Contains(stderr, "matches no partition") || strings.Contains(stderr, "run it without --publish together") ||
		strings.Contains(stderr, "--publish together is not supported")
}

// tail keeps the last lines written to it, for failure reports.
type tail struct{ lines []string }

func (t *tail) add(line string) {
	if t.lines = append(t.lines, line); len(t.lines) > 40 {
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string { return strings.Join(t.lines, "\n") }

// jsonPart returns the JSON object at the end of output.
func jsonPart(s string) string {
	if i := strings.Index(s, "{\n"); i >= 0 {
		return s[i:]
	}
	return s
}

// ran checks a finished run: exit 0, 1 (failed partitions) or 5 (blocked
// partitions, and none failed), as the run's summary says; and for each
// partition it published, that it read only upstream partitions that were
// there.
func (o *oracle) ran(code int, stdout string, allow bool) {
	o.t.Helper()
	if code != 0 && code != exitFailed && code != exitIncomplete {
		o.t.Fatalf("run exited %d\n%s", code, stdout)
	}
	if stdout == "" {
		return
	}
	var out runOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		o.t.Fatalf("run output: %v\n%s", err, stdout)
	}
	seen := map[string]bool{}
	for _, p := range out.Partitions {
		if p.Error != nil && !seen[*p.Error] && len(seen) < 3 {
			seen[*p.Error] = true
			o.logf("  %s %s failed: %.300s", p.Model, p.Partition, *p.Error)
		}
	}
	want := exitOK
	switch {
	case out.Failed > 0 || out.Skipped > 0:
		want = exitFailed
	case out.Blocked > 0:
		want = exitIncomplete
	}
	if code != want {
		o.errorf("the run exited %d, but its summary (%d failed, %d blocked) says %d\n%s", code, out.Failed, out.Blocked, want, stdout)
	}
	if out.RunID == "" {
		return // nothing to do
	}
	if allow {
		o.allowed[out.RunID] = true
	}
	if code == 0 && !allow {
		o.checkReads(out.RunID)
	}
	if out.Failed > 0 || out.Interrupted {
		o.lastRun = out.RunID
	}
}

// ledgerRecord is what the checks need of a ledger row.
type ledgerRecord struct {
	model, key, state, run, fingerprint string
	rows                                int64
	started, published                  time.Time
	// end is the window's end; for a whole-table or list partition, its
	// horizon (zero when it reads no time-partitioned model).
	end time.Time
}

func (o *oracle) ledger() map[string]ledgerRecord {
	db := o.open()
	defer db.Close()
	return o.ledgerOf(db)
}

func (o *oracle) ledgerOf(db *sql.DB) map[string]ledgerRecord {
	out := map[string]ledgerRecord{}
	if !o.hasLedger(db) {
		return out
	}
	for _, r := range dbRows(o.t, db, `SELECT model, partition_key, state, run_id, coalesce(row_count, 0), started_at, coalesce(published_at, TIMESTAMP '1970-01-01'), window_end, fingerprint FROM refill.partitions`) {
		rec := ledgerRecord{model: r[0].(string), key: r[1].(string), state: r[2].(string), run: r[3].(string), rows: toInt(r[4]),
			started: r[5].(time.Time), published: r[6].(time.Time), fingerprint: r[8].(string)}
		if end, ok := r[7].(time.Time); ok {
			rec.end = end
		}
		out[rec.model+" "+rec.key] = rec
	}
	return out
}

// checkReads checks that every partition run published read upstream
// partitions that were built, and not rewritten after it read them.
func (o *oracle) checkReads(run string) {
	o.t.Helper()
	led := o.ledger()
	p := o.project()
	all := map[string][]string{}
	for _, rec := range led {
		if rec.run != run || (rec.state != "done" && rec.state != "partial") {
			continue
		}
		m := o.byName[rec.model]
		for upName, keys := range m.reads(rec.key) {
			if len(keys) == 1 && keys[0] == "*" {
				if all[upName] == nil {
					all[upName] = o.allKeys(upName)
				}
				// Through the partition's horizon.
				keys = nil
				for _, k := range all[upName] {
					if p, _ := models.ParsePeriod(k, time.UTC); rec.end.IsZero() || p.Start.Before(rec.end) {
						keys = append(keys, k)
					}
				}
			}
			upModel := p.ModelByName(upName)
			for _, k := range keys {
				if part, err := upModel.Partition(k); err == nil && upModel.Kind() == models.TimePartitioned &&
					(part.Start.Before(upModel.Config.Start) || !upModel.Config.End.IsZero() && !part.Start.Before(upModel.Config.End)) {
					continue // outside its range (start: or end: edited): not read
				}
				up, ok := led[upName+" "+k]
				switch {
				case !ok:
					o.errorf("run %s published %s %s, which reads %s %s, which was never built", run, rec.model, rec.key, upName, k)
				case up.state != "done" && up.state != "partial":
					o.errorf("run %s published %s %s, which reads %s %s, which is %s", run, rec.model, rec.key, upName, k, up.state)
				case up.published.After(rec.started) && !up.published.Equal(rec.published):
					o.errorf("run %s published %s %s (started %s), which reads %s %s, republished after it at %s",
						run, rec.model, rec.key, rec.started, upName, k, up.published)
				}
			}
		}
	}
}

// allKeys returns every partition key of a time model that is complete
// at the test's clock.
func (o *oracle) allKeys(name string) []string {
	m, err := o.project().Model(name)
	if err != nil {
		o.t.Fatal(err)
	}
	last, _ := m.LastComplete(mustParse(oracleNow))
	var out []string
	for _, p := range m.Partitions(m.Config.Start, last) {
		out = append(out, p.Key)
	}
	return out
}

func mustParse(flag string) time.Time {
	t, err := time.Parse(time.RFC3339, strings.TrimPrefix(flag, "--now="))
	if err != nil {
		panic(err)
	}
	return t
}

func (o *oracle) project() *models.Project {
	o.t.Helper()
	p, err := models.Load(os.DirFS(o.dir), withAdapters(models.LoadOptions{}))
	if err != nil {
		o.t.Fatal(err)
	}
	return p
}

// checkRowCounts checks that every published record's row count is the
// rows its window holds in the table.
func (o *oracle) checkRowCounts() {
	o.t.Helper()
	db := o.open()
	defer db.Close()
	if !o.hasLedger(db) {
		return
	}
	counts := map[string]int64{} // "model key" -> rows
	for _, m := range o.models {
		if !o.tableExists(db, m.name) {
			continue // dropped by the test: the next plan finds the drift
		}
		for _, r := range dbRows(o.t, db, fmt.Sprintf("SELECT %s, count(*) FROM main.%s GROUP BY 1", m.keyOf, m.name)) {
			counts[m.name+" "+fmt.Sprint(r[0])] = toInt(r[1])
		}
	}
	for k, rec := range o.ledgerOf(db) {
		if rec.state != "done" && rec.state != "partial" || o.drifted[k] {
			continue
		}
		if n := counts[k]; n != rec.rows {
			o.errorf("%s %s: the ledger records %d rows, the table holds %d", rec.model, rec.key, rec.rows, n)
		}
	}
}

// open opens a DuckDB file holding what the warehouse holds (on DuckDB the
// project's own, which no refill may hold then).
func (o *oracle) open() *sql.DB {
	o.t.Helper()
	db, err := sql.Open("duckdb", o.wh.snapshot())
	if err != nil {
		o.t.Fatal(err)
	}
	return db
}

func (o *oracle) hasLedger(db *sql.DB) bool {
	return dbRows(o.t, db, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'refill' AND table_name = 'partitions'`)[0][0] == int64(1)
}

func (o *oracle) tableExists(db *sql.DB, name string) bool {
	return dbRows(o.t, db, fmt.Sprintf(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = '%s'`, name))[0][0] == int64(1)
}

// unfinishedRun returns the latest run that did not finish, if any.
func (o *oracle) unfinishedRun() string {
	db := o.open()
	defer db.Close()
	if !o.hasLedger(db) {
		return ""
	}
	rows := dbRows(o.t, db, `SELECT run_id FROM refill.runs WHERE status IN ('running', 'interrupted', 'failed') ORDER BY started_at DESC LIMIT 1`)
	if len(rows) == 0 {
		return ""
	}
	return rows[0][0].(string)
}

func (o *oracle) resume() {
	args := []string{"run", "--resume", o.lastRun, "--yes", "--output", "json"}
	r := o.refill(args...)
	o.logf("refill %s -> exit %d", strings.Join(args, " "), r.code)
	// A resumed run repeats the selection, --allow-missing-upstream too.
	allow := o.allowed[o.lastRun]
	o.lastRun = ""
	o.ran(r.code, r.stdout, allow)
}

// lateRows adds, changes or deletes source rows where refill promises to
// notice them: anywhere in the source's history when the case tracks it,
// else in the hourly model's lookback window; or poisons an hour so that
// its partition fails.
func (o *oracle) lateRows() {
	end := oracleLast
	if !o.through.IsZero() {
		end = o.through.Add(-time.Hour)
	}
	h := end.Add(-time.Duration(o.rng.IntN(30)) * time.Hour)
	if o.tracked {
		h = oracleFirst.Add(time.Duration(o.rng.IntN(int(end.Sub(oracleFirst).Hours())+1)) * time.Hour)
	}
	ts := h.Add(time.Duration(o.rng.IntN(3600)) * time.Second)
	cond := fmt.Sprintf("ts >= %s AND ts < %s", o.wh.timestamp(h), o.wh.timestamp(h.Add(time.Hour)))
	switch o.rng.IntN(6) {
	case 0:
		o.wh.deleteEvents(cond)
		o.logf("delete events where %s", cond)
	case 5:
		// In place: the hour's count stays, its values change.
		o.wh.updateEvents(cond)
		o.logf("update events set v = v + 1 where %s", cond)
	case 1:
		o.wh.insertEvent(ts, "us", -1) // poison: the hour fails
		o.logf("insert event (%s, us, -1)", ts)
	default:
		region, v := []string{"eu", "us", "apac"}[o.rng.IntN(3)], 1+o.rng.IntN(100)
		o.wh.insertEvent(ts, region, v)
		o.logf("insert event (%s, %s, %d)", ts, region, v)
	}
}

// changeLogic edits a model's constant: its partitions are stale.
func (o *oracle) changeLogic() {
	m := o.pick()
	m.k++
	o.writeModel(m)
	o.logf("edit %s: constant %d", m.name, m.k)
}

// drift deletes rows of, or drops, a model's table behind refill's back.
func (o *oracle) drift() {
	m := o.pick()
	before := o.ledger()
	stmt := o.wh.spoil(m.name, o.rng.IntN(2) == 1)
	if stmt == "" {
		return
	}
	o.logf("sql: %s", stmt)
	// The row counts no longer match until a run repairs them.
	if o.drifted == nil {
		o.drifted = map[string]bool{}
	}
	for k, rec := range before {
		if rec.model == m.name {
			o.drifted[k] = true
		}
	}
}

// finish removes poisoned rows, runs the scheduled form once, and compares
// every table with the oracle's recomputation.
func (o *oracle) finish() {
	t := o.t
	o.wh.deleteEvents("v < 0")
	if !o.through.IsZero() {
		o.finishRange()
		return
	}
	r := o.refill("run", oracleNow, "--yes", "--output", "json")
	o.logf("final: refill run %s -> exit %d", oracleNow, r.code)
	if r.code != 0 {
		t.Fatalf("the final run exits %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	o.drifted = nil
	o.ran(r.code, r.stdout, false)
	o.checkRowCounts()
	plan := o.must("plan", oracleNow, "--output", "json")
	var p planOutput
	if err := json.Unmarshal([]byte(plan.stdout), &p); err != nil {
		t.Fatal(err)
	}
	// Refreshes of whole tables over the source, and what runs only if
	// they change, are planned by every scheduled run.
	p.Steps = slices.DeleteFunc(p.Steps, func(st planStepJSON) bool { return st.Reason == "refresh" || st.Conditional })
	if len(p.Steps)+len(p.Blocked) != 0 {
		t.Errorf("after the final run the plan still has %d steps and %d blocked, e.g. %+v\nthe final run printed:\n%.4000s", len(p.Steps), len(p.Blocked), append(p.Steps, p.Blocked...)[0], r.stdout)
	}
	for _, diff := range o.compare() {
		o.errorf("%s", diff)
	}
	o.checkContent()
}

// checkContent: in a case whose models record their content, refill
// verify finds every built partition as refill published it, whatever
// runs, batches, rebuilds and schema changes built it.
func (o *oracle) checkContent() {
	if !o.content {
		return
	}
	r := o.refill("verify", oracleNow)
	o.logf("refill verify -> exit %d", r.code)
	if r.code != 0 || strings.Contains(r.stdout, "changed outside refill") {
		o.errorf("refill verify after the final run exits %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// finishRange ends a horizon case: a plain run over the whole range must
// exit 0, build every partition of every model that ends by the horizon
// and every whole-table and list partition, leave nothing to plan over the
// range, and leave every table equal to its recomputation through the
// horizon.
func (o *oracle) finishRange() {
	t := o.t
	rng := []string{"--from", oracleFirst.Format("2006-01-02"), "--to", o.through.AddDate(0, 0, -1).Format("2006-01-02"), oracleNow}
	r := o.refill(append(append([]string{"run"}, rng...), "--yes", "--output", "json")...)
	o.logf("final: refill run %s -> exit %d", strings.Join(rng, " "), r.code)
	for i := 0; i < 3 && r.code == exitIncomplete && o.unblockPastRange(r.stdout); i++ {
		r = o.refill(append(append([]string{"run"}, rng...), "--yes", "--output", "json")...)
		o.logf("final, again: refill run %s -> exit %d", strings.Join(rng, " "), r.code)
	}
	if r.code != 0 {
		t.Fatalf("the final run over the range exits %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	o.drifted = nil
	o.ran(r.code, r.stdout, false)
	o.checkRowCounts()
	led := o.ledger()
	p := o.project()
	now := mustParse(oracleNow)
	for _, m := range p.Models {
		var want []models.Partition
		if m.Kind() == models.TimePartitioned {
			last, _ := m.LastComplete(now)
			for _, part := range m.Partitions(m.Config.Start, last) {
				if !part.End.After(o.through) {
					want = append(want, part)
				}
			}
		} else {
			want = m.Partitions(time.Time{}, time.Time{})
		}
		for _, part := range want {
			if rec, ok := led[m.Name+" "+part.Key]; !ok || rec.state != "done" {
				o.errorf("after the final run over the range, %s %s is %q, not done", m.Name, part.Key, rec.state)
			}
		}
	}
	plan := o.must(append(append([]string{"plan"}, rng...), "--output", "json")...)
	var pl planOutput
	if err := json.Unmarshal([]byte(plan.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps)+len(pl.Blocked) != 0 {
		t.Errorf("after the final run the plan over the range still has %d steps and %d blocked, e.g. %+v", len(pl.Steps), len(pl.Blocked), append(pl.Steps, pl.Blocked...)[0])
	}
	for _, diff := range o.recompute(p, now) {
		o.errorf("%s", diff)
	}
	o.checkContent()
}

// unblockPastRange handles the one way the final run over the range may
// rightly stop short: a whole-table or list model reads the whole of an
// upstream table, which holds partitions past the range (an earlier run
// built them, or a killed one left them unfinished); those that are not
// done, or whose rows the test deleted behind refill's back (drift), or not
// there before them, the range does not build, so the model must wait
// (exit 5). It reports whether every blocked model of the run's
// output waits only for such partitions, as the ledger says, and then runs
// the command the output gives for each, as a user would; each must exit 0.
func (o *oracle) unblockPastRange(stdout string) bool {
	var out runOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.BlockedModels) == 0 {
		return false
	}
	led, proj := o.ledger(), o.project()
	var commands [][]string
	for _, b := range out.BlockedModels {
		model, key, _ := strings.Cut(b.WaitsFor, " ")
		if m := proj.ModelByName(model); m == nil || m.Kind() != models.TimePartitioned {
			return false
		}
		// The ledger must agree: no record of a missing partition, a
		// record in that state of a pending or failed one.
		rec, recorded := led[b.WaitsFor]
		switch b.State {
		case "missing":
			if recorded {
				return false
			}
		case "pending", "failed":
			if !recorded || rec.state != b.State {
				return false
			}
		case "drift":
			// Built, and its rows then deleted or its table dropped by
			// this test, behind refill's back.
			if !recorded || rec.state != "done" && rec.state != "partial" || !o.drifted[b.WaitsFor] {
				return false
			}
		default:
			return false
		}
		p, err := models.ParsePeriod(key, time.UTC)
		if err != nil || p.Start.Before(o.through) || !o.holdsFrom(led, model, p.Start) {
			return false
		}
		cmd := b.Command[strings.Index(b.Command, "refill run ")+len("refill "):]
		cmd, _, _ = strings.Cut(cmd, " (")
		commands = append(commands, strings.Fields(cmd))
	}
	for _, args := range commands {
		r := o.refill(append(args, oracleNow, "--yes", "--output", "json")...)
		o.logf("  as the blocked run says: refill %s -> exit %d", strings.Join(args, " "), r.code)
		if r.code != 0 {
			o.t.Fatalf("refill %s, which the blocked final run gave, exits %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		o.ran(r.code, r.stdout, false)
	}
	return true
}

// holdsFrom reports whether, by the ledger led, the table of model may
// hold rows of a partition starting at or after start: a whole-table read
// of it then reads there.
func (o *oracle) holdsFrom(led map[string]ledgerRecord, model string, start time.Time) bool {
	for _, rec := range led {
		if rec.model != model || rec.state != "done" && rec.state != "partial" && rec.state != "pending" {
			continue
		}
		if p, err := models.ParsePeriod(rec.key, time.UTC); err == nil && !p.Start.Before(start) {
			return true
		}
	}
	return false
}

// held returns the partitions ("model key") whose rows the tables hold, by
// the ledger.
func (o *oracle) held() map[string]bool {
	out := map[string]bool{}
	for k, rec := range o.ledger() {
		if rec.state == "done" || rec.state == "partial" {
			out[k] = true
		}
	}
	return out
}

// compare recomputes every model from the current source (recompute) and
// returns how the tables differ from it.
func (o *oracle) compare() []string {
	return o.recompute(o.project(), mustParse(oracleNow))
}

// recompute recomputes project p at now in the DuckDB file open reads.
func (o *oracle) recompute(p *models.Project, now time.Time) []string {
	held, version := o.held(), o.versionOf(o.ledger())
	_, duck := o.wh.(*duckWarehouse)
	return recomputeIn(o.t, o.wh.snapshot(), !duck, p, now, o.through, held, version)
}

func dbRows(t *testing.T, db *sql.DB, q string) [][]any {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	return out
}

// rowDiff lists the rows of want missing from got and the rows of got not
// in want (as multisets), at most five of each.
func rowDiff(want, got []string) string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for r, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, r)
		}
		for ; n < 0; n++ {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("  missing %v\n  unexpected %v", missing[:min(5, len(missing))], extra[:min(5, len(extra))])
}

// TestOracleCatchesCorruption checks the checks: each kind of wrong data
// the oracle looks for, made by hand, is reported.
func TestOracleCatchesCorruption(t *testing.T) {
	t.Parallel()
	o := newOracle(t, "", 42, "daily", "weekly")
	o.must("run", oracleNow, "--yes")
	if diffs := o.compare(); len(diffs) != 0 {
		t.Fatalf("a clean run differs: %v", diffs)
	}
	var reported []string
	o.errorf = func(format string, args ...any) { reported = append(reported, fmt.Sprintf(format, args...)) }
	for _, tc := range []struct {
		name  string
		spoil string
		check func()
	}{
		{"a changed row", "UPDATE main.hourly SET n = n + 1 WHERE rowid = (SELECT min(rowid) FROM main.hourly)",
			func() {
				for _, d := range o.compare() {
					o.errorf("%s", d)
				}
			}},
		{"a lost row", "DELETE FROM main.hourly WHERE rowid = (SELECT max(rowid) FROM main.hourly)", o.checkRowCounts},
		{"a partition computed from an upstream partition never built",
			"DELETE FROM refill.partitions WHERE model = 'hourly' AND partition_key = '2024-03-02T07'",
			func() { o.checkReads(o.ledger()["daily 2024-03-02"].run) }},
	} {
		reported = nil
		execSQL(t, o.dir, tc.spoil)
		tc.check()
		if len(reported) == 0 {
			t.Errorf("the oracle does not notice %s", tc.name)
		}
		o.must("run", oracleNow, "--mode", "all", "--yes")
	}
}
