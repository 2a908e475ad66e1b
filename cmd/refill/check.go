package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
)

// check is one line of the refill test report and one JUnit test case.
type check struct {
	suite   string // validate, render, run, audit, unit
	name    string
	status  checkStatus
	message string // why it failed or was skipped
	detail  string
	dur     time.Duration
}

type checkStatus string

const (
	checkPassed  checkStatus = "ok"
	checkFailed  checkStatus = "FAIL"
	checkSkipped checkStatus = "skip"
)

func (a *app) testCommand() *cobra.Command {
	var junit, from, to string
	c := &cobra.Command{
		Use:   "test [MODEL...]",
		Short: "Check models in seconds on an embedded DuckDB: validate, render, run, audit, unit-test",
		Long: `Test is the check to run on every pull request. It needs no warehouse and no
credentials. In order it:

  1. parses and validates every model and refill.yml, and builds the graph;
  2. renders each selected model for a sample partition in the dialect of every
     target in refill.yml, catching template errors;
  3. loads the seeds into an in-memory DuckDB and runs the selected models (with
     their upstream models) for the sample partitions through the real runner:
     stage, verify the windows, run the audits, swap;
  4. runs the unit tests in models/**/*.test.yml.

A model that fails on DuckDB while no target in refill.yml uses DuckDB is reported
as not portable (skipped), not failed: its SQL may be warehouse-specific.

The sample partitions are those overlapping --from..--to, by default the first
three days from the earliest model start. It exits 1 when any check fails.`,
		Example: `  refill test
  refill test marts.daily_revenue --junit report.xml
  refill test --from 2024-01-01 --to 2024-01-31`,
		RunE: func(c *cobra.Command, args []string) error {
			started := time.Now()
			checks := a.runChecks(args, from, to)
			a.printChecks(a.stdout, checks, time.Since(started))
			if junit != "" {
				if err := writeJUnit(junit, checks, time.Since(started)); err != nil {
					return err
				}
			}
			for _, ch := range checks {
				if ch.status == checkFailed {
					a.silent = true
					return &exitError{code: exitFailed, err: errors.New("tests failed")}
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&junit, "junit", "", "also write the results as JUnit XML to `FILE`")
	c.Flags().StringVar(&from, "from", "", "first sample partition (default: the earliest model start)")
	c.Flags().StringVar(&to, "to", "", "last sample partition (default: two days after --from)")
	return c
}

// runChecks runs every check and returns them in report order.
func (a *app) runChecks(selectors []string, from, to string) []check {
	var checks []check
	add := func(c check) { checks = append(checks, c) }
	start := time.Now()
	p, dir, err := a.loadProject()
	if err != nil {
		var list models.ErrorList
		if !errors.As(err, &list) {
			var me *models.Error
			if errors.As(err, &me) {
				list = models.ErrorList{me}
			} else {
				return []check{{suite: "validate", name: "project", status: checkFailed, message: err.Error()}}
			}
		}
		for _, e := range list {
			add(check{suite: "validate", name: e.File, status: checkFailed, message: e.Error()})
		}
		return checks
	}
	fsys := os.DirFS(dir)
	unitTests, utErr := p.LoadUnitTests(fsys)
	seeds, seedErr := p.LoadSeeds(fsys)
	for _, e := range []error{utErr, seedErr} {
		var list models.ErrorList
		if errors.As(e, &list) {
			for _, le := range list {
				add(check{suite: "validate", name: le.File, status: checkFailed, message: le.Error()})
			}
		} else if e != nil {
			add(check{suite: "validate", name: "project", status: checkFailed, message: e.Error()})
		}
	}
	var targetErrs []string
	for _, name := range p.TargetNames() {
		if _, err := checkTarget(p.Targets[name]); err != nil {
			targetErrs = append(targetErrs, err.Error())
		}
	}
	if len(targetErrs) > 0 {
		add(check{suite: "validate", name: models.ProjectFile, status: checkFailed, message: strings.Join(targetErrs, "\n")})
	}
	add(check{suite: "validate", name: "project", status: checkPassed, dur: time.Since(start),
		message: fmt.Sprintf("%d models, %d targets, %d unit tests, %d seeds", len(p.Models), len(p.Targets), len(unitTests), len(seeds))})

	selected, err := p.Select(selectors, nil)
	if err != nil {
		add(check{suite: "validate", name: "selection", status: checkFailed, message: err.Error()})
		return checks
	}
	sampleFrom, sampleTo := samplePeriod(p, from, to)
	checks = append(checks, renderChecks(p, selected, sampleFrom)...)

	hasDuckDB := false
	for _, t := range p.Targets {
		hasDuckDB = hasDuckDB || t.Adapter == "duckdb"
	}
	runChecks, notPortable := a.duckdbChecks(p, selected, seeds, sampleFrom, sampleTo, hasDuckDB)
	checks = append(checks, runChecks...)
	checks = append(checks, a.unitTestChecks(p, selected, unitTests, notPortable)...)
	return checks
}

// samplePeriod returns the sample range: the flags, or three days from the
// earliest model start.
func samplePeriod(p *models.Project, from, to string) (string, string) {
	if from == "" {
		var earliest time.Time
		for _, m := range p.Models {
			if m.Kind() == models.TimePartitioned && (earliest.IsZero() || m.Config.Start.Before(earliest)) {
				earliest = m.Config.Start
			}
		}
		if earliest.IsZero() {
			earliest = time.Now().UTC().AddDate(0, 0, -3)
		}
		from = earliest.UTC().Format("2006-01-02")
		if to == "" {
			to = earliest.UTC().AddDate(0, 0, 2).Format("2006-01-02")
		}
	}
	if to == "" {
		to = from
	}
	return from, to
}

// renderChecks renders every selected model in every target's dialect.
func renderChecks(p *models.Project, selected []*models.Model, from string) []check {
	var out []check
	for _, m := range selected {
		part, err := samplePartition(m, from)
		if err != nil {
			out = append(out, check{suite: "render", name: m.Name, status: checkFailed, message: err.Error()})
			continue
		}
		var failed []string
		var dialects []string
		start := time.Now()
		for _, name := range p.TargetNames() {
			t := p.Targets[name]
			d, schema, err := dialectFor(t)
			if err != nil {
				continue // reported by validate
			}
			dialects = append(dialects, fmt.Sprintf("%s (%s)", name, d.Name()))
			if _, err := m.Render(&models.Scope{Dialect: d, Schema: schema, Vars: p.Vars}, part); err != nil {
				failed = append(failed, fmt.Sprintf("on %s (%s): %v", name, d.Name(), err))
			}
		}
		c := check{suite: "render", name: m.Name, status: checkPassed, dur: time.Since(start),
			message: fmt.Sprintf("partition %s on %s", part.Key, strings.Join(dialects, ", "))}
		if len(failed) > 0 {
			c.status, c.message = checkFailed, strings.Join(failed, "\n")
		}
		out = append(out, c)
	}
	return out
}

func samplePartition(m *models.Model, from string) (models.Partition, error) {
	switch m.Kind() {
	case models.TimePartitioned:
		per, err := models.ParsePeriod(from, m.Config.Location)
		if err != nil {
			return models.Partition{}, usagef("--from: %v", err)
		}
		t := per.Start
		if t.Before(m.Config.Start) {
			t = m.Config.Start
		}
		return m.PartitionAt(t), nil
	case models.ListPartitioned:
		return m.Partitions(time.Time{}, time.Time{})[0], nil
	}
	return models.Partition{Key: models.WholeTableKey}, nil
}

// duckdbChecks runs the selected models and their upstreams for the sample
// on an in-memory DuckDB loaded with the seeds.
func (a *app) duckdbChecks(p *models.Project, selected []*models.Model, seeds []*models.Seed, from, to string, hasDuckDB bool) ([]check, map[string]string) {
	ctx := a.ctx
	notPortable := map[string]string{}
	db, err := duckdb.Open(ctx, duckdb.Config{})
	if err != nil {
		return []check{{suite: "run", name: "duckdb", status: checkFailed, message: err.Error()}}, notPortable
	}
	defer db.Close()
	var out []check
	for _, s := range seeds {
		if err := db.LoadSeed(ctx, s, s.Relation); err != nil {
			out = append(out, check{suite: "run", name: "seed " + s.Relation.String(), status: checkFailed, message: err.Error()})
		}
	}
	scope := &models.Scope{Dialect: db.Dialect(), Schema: "main", Vars: p.Vars}
	r := &runner.Runner{Project: p, Target: "test", Adapter: db, Scope: scope}
	names := make([]string, len(selected))
	for i, m := range selected {
		names[i] = "+" + m.Name // upstream models supply the rows they read
	}
	plan, err := r.Plan(ctx, runner.Selection{Select: names, From: from, To: to, Mode: runner.ModeAll, Now: time.Now().UTC()})
	if err != nil {
		return append(out, check{suite: "run", name: "plan", status: checkFailed, message: err.Error()}), notPortable
	}
	audits := map[string]*check{}
	var auditOrder []string
	observe := func(ev runner.Event) {
		if ev.Kind != runner.EventAudit {
			return
		}
		key := ev.Model + " " + ev.Audit.Name
		c, ok := audits[key]
		if !ok {
			c = &check{suite: "audit", name: key, status: checkPassed}
			audits[key] = c
			auditOrder = append(auditOrder, key)
		}
		if !ev.Audit.Passed {
			msg := fmt.Sprintf("%s:%d: %s on %s: %s", ev.Audit.File, ev.Audit.Line, ev.Audit.Name, strings.Join(ev.Partitions, ", "), ev.Audit.Message)
			if ev.Audit.Severity == models.SeverityWarn {
				msg = "warning: " + msg
			} else {
				c.status = checkFailed
			}
			c.detail = strings.TrimSpace(c.detail + "\n" + msg)
		}
	}
	start := time.Now()
	sum, err := r.Run(ctx, plan, runner.RunOptions{Concurrency: 2, Observe: observe, RunID: "refill-test"})
	if err != nil {
		return append(out, check{suite: "run", name: "run", status: checkFailed, message: err.Error()}), notPortable
	}
	elapsed := time.Since(start)
	byModel := map[string][]runner.PartitionResult{}
	for _, pr := range sum.Partitions {
		byModel[pr.Model] = append(byModel[pr.Model], pr)
	}
	for _, m := range plan.Models {
		results := byModel[m.Name]
		c := check{suite: "run", name: m.Name, status: checkPassed, dur: elapsed / time.Duration(max(len(plan.Models), 1))}
		var problems []string
		for _, pr := range results {
			if pr.Status == runner.Failed {
				problems = append(problems, fmt.Sprintf("%s: %v", pr.Partition, pr.Err))
			}
		}
		switch {
		case len(results) == 0:
			c.message = "no partition in the sample range"
		case len(problems) > 0:
			var aerr *runner.AuditError
			auditOnly := true
			for _, pr := range results {
				if pr.Status == runner.Failed && !errors.As(pr.Err, &aerr) {
					auditOnly = false
				}
			}
			c.message = fmt.Sprintf("%s (%s): %s", m.Name, m.Path, strings.Join(problems, "\n"))
			switch {
			case auditOnly:
				c.status, c.message = checkPassed, fmt.Sprintf("%d partitions ran; audits failed (see below)", len(results))
			case hasDuckDB:
				c.status = checkFailed
			default:
				c.status = checkSkipped
				c.message = "not portable to DuckDB: " + c.message
				notPortable[m.Name] = firstLine(problems[0])
			}
		default:
			skipped := 0
			for _, pr := range results {
				if pr.Status == runner.Skipped {
					skipped++
				}
			}
			c.message = fmt.Sprintf("%d partitions ran (%s)", len(results)-skipped, partitionSpan(results))
			if skipped > 0 {
				c.status = checkSkipped
				c.message = fmt.Sprintf("%d of %d partitions skipped: an upstream model failed", skipped, len(results))
			}
		}
		out = append(out, c)
	}
	sort.SliceStable(auditOrder, func(i, j int) bool { return auditOrder[i] < auditOrder[j] })
	for _, k := range auditOrder {
		c := *audits[k]
		if c.detail != "" {
			c.message = c.detail // the failures, or the warnings
		}
		out = append(out, c)
	}
	return out, notPortable
}

func partitionSpan(rs []runner.PartitionResult) string {
	if len(rs) == 1 {
		return rs[0].Partition
	}
	return rs[0].Partition + " .. " + rs[len(rs)-1].Partition
}

// unitTestChecks runs each unit test on its own in-memory DuckDB.
func (a *app) unitTestChecks(p *models.Project, selected []*models.Model, tests []*models.UnitTest, notPortable map[string]string) []check {
	chosen := map[*models.Model]bool{}
	for _, m := range selected {
		chosen[m] = true
	}
	var out []check
	for _, ut := range tests {
		if !chosen[ut.Model] {
			continue
		}
		name := fmt.Sprintf("%s %q", ut.Model.Name, ut.Name)
		if why, ok := notPortable[ut.Model.Name]; ok {
			out = append(out, check{suite: "unit", name: name, status: checkSkipped, message: "the model does not run on DuckDB: " + why})
			continue
		}
		start := time.Now()
		c := check{suite: "unit", name: name, status: checkPassed}
		res, err := runUnitTest(a.ctx, p, ut)
		switch {
		case err != nil:
			c.status, c.message = checkFailed, fmt.Sprintf("%s:%d: %v", ut.File, ut.Line, err)
		case !res.Passed:
			c.status, c.message = checkFailed, fmt.Sprintf("%s:%d: %s", ut.File, ut.Line, res.Message)
			c.detail = res.SQL
		default:
			c.message = fmt.Sprintf("%s:%d, partition %s", ut.File, ut.Line, ut.Partition)
		}
		c.dur = time.Since(start)
		out = append(out, c)
	}
	return out
}

func runUnitTest(ctx context.Context, p *models.Project, ut *models.UnitTest) (*runner.UnitTestResult, error) {
	db, err := duckdb.Open(ctx, duckdb.Config{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return runner.RunUnitTest(ctx, db, &models.Scope{Dialect: db.Dialect(), Schema: "main", Vars: p.Vars}, ut)
}

func (a *app) printChecks(w io.Writer, checks []check, elapsed time.Duration) {
	color := a.color()
	paint := func(s checkStatus) string {
		code := map[checkStatus]string{checkPassed: "32", checkFailed: "31", checkSkipped: "33"}[s]
		text := fmt.Sprintf("%-4s", s)
		if !color {
			return text
		}
		return "\x1b[" + code + "m" + text + "\x1b[0m"
	}
	counts := map[checkStatus]int{}
	for _, c := range checks {
		counts[c.status]++
		if c.status == checkPassed && a.quiet {
			continue
		}
		msg := c.message
		fmt.Fprintf(w, "%s  %-8s  %s", paint(c.status), c.suite, c.name)
		if msg != "" && !strings.Contains(msg, "\n") && len(msg) < 100 && c.status == checkPassed {
			fmt.Fprintf(w, "  (%s)", msg)
		} else if msg != "" {
			fmt.Fprintf(w, "\n        %s", strings.ReplaceAll(a.redact(msg), "\n", "\n        "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%d checks: %d passed, %d failed, %d skipped in %s\n", len(checks), counts[checkPassed], counts[checkFailed],
		counts[checkSkipped], elapsed.Round(10*time.Millisecond))
}
