package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// The oracle's operations on models that change, beyond logic edits: full
// refreshes, column changes rebuilt by on_schema_change: rebuild, edits of
// start: and end:, and refill accept; and its check that status tells the
// truth after every command.

// modelVariant is what a generated model's file says: its constant, whether it
// has the extra column (and on_schema_change: rebuild), and its start and
// end when edited ("" for the generated ones).
type modelVariant struct {
	k     int
	extra bool
	// rebuild: on_schema_change: rebuild, set with the first extra column
	// and kept, so that taking the column away rebuilds the table too.
	rebuild    bool
	start, end string
}

// text renders m's file for v.
func (m *genModel) text(v modelVariant) string {
	src := m.sql(v.k)
	if m.src != "" {
		src = strings.ReplaceAll(src, `source("raw.events")`, `source("`+m.src+`.events")`)
	}
	if m.tracked {
		src = regexp.MustCompile(`(?m)^(lookback|watermark): .*\n`).ReplaceAllString(src, "")
	}
	header, body := "", src
	if rest, ok := strings.CutPrefix(src, "/* refill\n"); ok {
		i := strings.Index(rest, "*/\n")
		header, body = rest[:i], rest[i+3:]
	}
	if v.start != "" {
		header = strings.Replace(header, "start: 2024-02-26\n", "start: "+v.start+"\n", 1)
	}
	if v.end != "" {
		header += "end: " + v.end + "\n"
	}
	if v.rebuild {
		header += "on_schema_change: rebuild\n"
	}
	if v.extra {
		header = strings.Replace(header, "s: bigint}", "s: bigint, extra: integer}", 1)
		body = fmt.Sprintf("SELECT *, %d AS extra FROM (\n%s\n) AS refill_extra", v.k, body)
	}
	if header == "" {
		return body
	}
	return "/* refill\n" + header + "*/\n" + body
}

// writeModel writes m's file for its current modelVariant, and notes the
// modelVariant's fingerprints: on the target the oracle runs, and on the
// one it runs elsewhere from, if any (a model reading target is another
// version on another target).
func (o *oracle) writeModel(m *genModel) {
	m.v.k = m.k
	o.write("models/"+m.name+".sql", m.text(m.v))
	p := o.project()
	pm := p.ModelByName(m.name)
	if o.variants == nil {
		o.variants = map[string]modelVariant{}
	}
	scope := o.wh.scope(p)
	o.variants[m.name+" "+pm.Version(scope).Fingerprint] = m.v
	if other, _ := o.wh.elsewhere(); other != "" {
		elsewhere := *scope
		elsewhere.Target = other
		o.variants[m.name+" "+pm.Version(&elsewhere).Fingerprint] = m.v
	}
}

// fullRefresh rebuilds a model's whole table, in-process or with the real
// binary interrupted or killed on the way.
func (o *oracle) fullRefresh() {
	m := o.pick()
	args := []string{"run", m.name, "--full-refresh", oracleNow, "--yes", "--retries", "0", "--concurrency", fmt.Sprint(1 + o.rng.IntN(3)), "--output", "json"}
	if o.bin != "" && o.rng.IntN(2) == 0 {
		o.runProcess(args, false)
		return
	}
	r := o.refill(args...)
	o.logf("refill %s -> exit %d", strings.Join(args, " "), r.code)
	o.ran(r.code, r.stdout, false)
}

// changeColumns gives a model an extra column, or takes it away, with
// on_schema_change: rebuild: the next run rebuilds its table.
func (o *oracle) changeColumns() {
	m := o.pick()
	m.v.extra, m.v.rebuild = !m.v.extra, true
	o.writeModel(m)
	o.logf("edit %s: extra column %v", m.name, m.v.extra)
}

// editRange moves a time model's start: later or back, or sets its end:
// earlier or removes it.
func (o *oracle) editRange() {
	var cands []*genModel
	for _, m := range o.models {
		if strings.Contains(m.sql(m.k), "start: 2024-02-26\n") {
			cands = append(cands, m)
		}
	}
	m := cands[o.rng.IntN(len(cands))]
	switch o.rng.IntN(4) {
	case 0:
		days := 6
		if !o.through.IsZero() {
			// Before the horizon case's end: a model with no partition in
			// its range has no table, nor its readers anything to read.
			days = min(days, int(o.through.Sub(oracleFirst).Hours()/24)-2)
		}
		m.v.start = oracleFirst.AddDate(0, 0, 1+o.rng.IntN(max(days, 1))).Format("2006-01-02")
	case 1:
		m.v.start = ""
	case 2:
		m.v.end = oracleLast.AddDate(0, 0, -1-o.rng.IntN(6)).Format("2006-01-02")
	default:
		m.v.end = ""
	}
	o.writeModel(m)
	o.logf("edit %s: start %q, end %q", m.name, m.v.start, m.v.end)
}

// accept accepts a model's current version for the partitions an earlier
// one built; they keep the rows that version computed, which the oracle
// notes (frozen) to recompute them so.
func (o *oracle) accept() {
	m := o.pick()
	before := o.ledger()
	args := []string{"accept", m.name, oracleNow, "--yes"}
	r := o.refill(args...)
	o.logf("refill %s -> exit %d", strings.Join(args, " "), r.code)
	if r.code != 0 {
		o.t.Fatalf("accept: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for k, rec := range o.ledger() {
		b, ok := before[k]
		if !ok || rec.model != m.name || b.fingerprint == rec.fingerprint || !b.started.Equal(rec.started) {
			continue
		}
		v, known := o.variants[m.name+" "+b.fingerprint]
		if !known {
			o.t.Fatalf("%s was built by a version the oracle did not write (%s)", k, b.fingerprint)
		}
		if o.frozen == nil {
			o.frozen = map[string]frozenPartition{}
		}
		o.frozen[k] = frozenPartition{v: v, started: rec.started}
	}
}

// frozenPartition is a partition refill accept left holding rows of an
// earlier version, while its record's start says so.
type frozenPartition struct {
	v       modelVariant
	started time.Time
}

// versionOf returns the model to recompute partition part of m with: the
// version that computed the rows it holds when refill accept froze them,
// else m.
func (o *oracle) versionOf(led map[string]ledgerRecord) func(m *models.Model, part models.Partition) *models.Model {
	cache := map[modelVariant]*models.Model{}
	return func(m *models.Model, part models.Partition) *models.Model {
		k := m.Name + " " + part.Key
		f, ok := o.frozen[k]
		if !ok {
			return m
		}
		if rec, ok := led[k]; !ok || !rec.started.Equal(f.started) {
			return m // rebuilt since
		}
		if pm, ok := cache[f.v]; ok {
			return pm
		}
		files := fstest.MapFS{}
		for _, name := range []string{"refill.yml", "seeds/" + o.wh.source() + "/events.csv"} {
			b, err := os.ReadFile(path.Join(o.dir, name))
			if err != nil {
				o.t.Fatal(err)
			}
			files[name] = &fstest.MapFile{Data: b}
		}
		for _, gm := range o.models {
			v := gm.v
			if gm.name == m.Name {
				v = f.v
			}
			files["models/"+gm.name+".sql"] = &fstest.MapFile{Data: []byte(gm.text(v))}
		}
		p, err := models.Load(files, withAdapters(models.LoadOptions{}))
		if err != nil {
			o.t.Fatal(err)
		}
		cache[f.v] = p.ModelByName(m.Name)
		return cache[f.v]
	}
}

// checkStatus checks that status tells the truth: every partition it says
// is done holds exactly what its model's SQL (the version that built it,
// accept aside) computes over the tables it reads as they are now. Models
// reading the source are left out: refill cannot see late rows but through
// lookback; so are models whose table, or a table they read, the test
// spoiled behind refill's back until a run repairs it.
func (o *oracle) checkStatus() {
	o.t.Helper()
	r := o.refill("status", oracleNow, "--output", "json")
	if r.code != 0 {
		o.t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var st struct {
		Models []struct {
			Model      string
			Partitions []struct{ Partition, State string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		o.t.Fatal(err)
	}
	p := o.project()
	db := o.open()
	defer db.Close()
	led := o.ledgerOf(db)
	version := o.versionOf(led)
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main", Vars: p.Vars, Target: "dev"}
	for _, sm := range st.Models {
		gm, m := o.byName[sm.Model], p.ModelByName(sm.Model)
		if gm == nil || m == nil || m.ReadsSources() || o.drifted != nil && o.anyDrifted(sm.Model) {
			continue
		}
		// A partition reading a table the test spoiled is done by what it
		// read then, which cannot be recomputed now (a dropped table).
		if o.drifted != nil && slices.ContainsFunc(m.Upstream, func(up *models.Model) bool { return o.anyDrifted(up.Name) }) {
			continue
		}
		for _, ps := range sm.Partitions {
			if ps.State != "done" {
				continue
			}
			part, err := m.Partition(ps.Partition)
			if err != nil {
				o.t.Fatal(err)
			}
			o.checkPartition(db, version(m, part), scope, gm, part)
		}
	}
}

// anyDrifted reports whether the test changed model's table behind
// refill's back and no run repaired it since.
func (o *oracle) anyDrifted(model string) bool {
	for k := range o.drifted {
		if strings.HasPrefix(k, model+" ") {
			return true
		}
	}
	return false
}

// checkPartition compares the rows partition part of m holds with what
// its SQL computes now.
func (o *oracle) checkPartition(db *sql.DB, m *models.Model, scope *models.Scope, gm *genModel, part models.Partition) {
	if diff := o.partitionDiff(db, db, m, scope, gm, part); diff != "" {
		o.errorf("status says %s %s is done, but it differs from what its model computes now:\n%s", m.Name, part.Key, diff)
	}
}

// partitionDiff compares the rows partition part of m holds in table's
// database with what its SQL computes in from's, and describes how they
// differ ("" when they do not).
func (o *oracle) partitionDiff(from, table *sql.DB, m *models.Model, scope *models.Scope, gm *genModel, part models.Partition) string {
	q, err := m.Render(scope, part)
	if err != nil {
		o.t.Fatal(err)
	}
	var want, got []string
	for _, row := range dbRows(o.t, from, fmt.Sprintf("SELECT * FROM (%s) AS x ORDER BY ALL", q)) {
		want = append(want, fmt.Sprint(row))
	}
	for _, row := range dbRows(o.t, table, fmt.Sprintf("SELECT * FROM main.%s WHERE %s = '%s' ORDER BY ALL", m.Name, gm.keyOf, part.Key)) {
		got = append(got, fmt.Sprint(row))
	}
	if slices.Equal(got, want) {
		return ""
	}
	return rowDiff(want, got)
}

// deferred builds one model in a second target, dev2 (another DuckDB file,
// or the same ClickHouse server's databases of another prefix, with a
// ledger of their own), with --defer dev: what it reads comes from the
// case's own tables, and each partition
// the run built must hold exactly what the model computes from them now.
// Models reading the source (dev2 has none) or their own past (which is
// dev2's) are left out; partitions reading one of dev's partitions that
// dev's ledger does not hold built are blocked by the run, not checked.
func (o *oracle) deferred() {
	p := o.project()
	var names []string
	for _, gm := range o.models {
		if m := p.ModelByName(gm.name); m != nil && !m.ReadsSources() && !m.Config.Self && len(m.Upstream) > 0 {
			names = append(names, gm.name)
		}
	}
	if len(names) == 0 {
		return
	}
	name := names[o.rng.IntN(len(names))]
	args := []string{"run", oracleNow, "--yes", "--retries", "0", name, "--target", "dev2", "--defer", "dev"}
	if o.rng.IntN(2) == 0 {
		first := oracleFirst.AddDate(0, 0, o.rng.IntN(16))
		args = append(args, "--from", first.Format(time.DateOnly), "--to", first.AddDate(0, 0, o.rng.IntN(6)).Format(time.DateOnly))
	}
	if o.rng.IntN(3) == 0 {
		args = append(args, "--batch", fmt.Sprint(2+o.rng.IntN(4)))
	}
	args = append(args, "--output", "json")
	r := o.refill(args...)
	o.logf("refill %s -> exit %d", strings.Join(args, " "), r.code)
	if r.code != exitOK && r.code != exitFailed && r.code != exitIncomplete {
		o.t.Fatalf("refill %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	var out runOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		o.t.Fatalf("deferred run output: %v\n%s", err, r.stdout)
	}
	o.logf("  %d built, %d blocked", out.Succeeded, out.Blocked)
	if out.Failed > 0 {
		o.errorf("a deferred run of %s failed %d partitions\n%s", name, out.Failed, r.stdout)
	}
	prod := o.open()
	defer prod.Close()
	dev2 := o.wh.dev2(name)
	defer dev2.Close()
	m, gm := p.ModelByName(name), o.byName[name]
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main", Vars: p.Vars, Target: "dev"}
	for _, pr := range out.Partitions {
		if pr.Status != "succeeded" {
			continue
		}
		part, err := m.Partition(pr.Partition)
		if err != nil {
			o.t.Fatal(err)
		}
		if diff := o.partitionDiff(prod, dev2, m, scope, gm, part); diff != "" {
			o.errorf("%s %s, built in dev2 with --defer dev, differs from what it computes from dev's tables:\n%s", name, part.Key, diff)
		}
	}
}
