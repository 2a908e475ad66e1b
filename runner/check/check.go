// Package check is refill test and refill validate --connect: Run
// validates a project, renders every model, runs a sample of each model's
// partitions and every unit test in a sandbox the caller opens (an empty
// DuckDB), and reports each as a Result; ParseModels and DescribeModels
// check every model's SQL with a parser or a warehouse, without running
// it. It stands on the runner and nothing stands on it but the CLI.
package check

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// Result is one result of Run: a line of refill test's report and a
// JUnit test case.
type Result struct {
	Suite    string // validate, render, run, audit, unit
	Name     string
	Status   Status
	Message  string // what passed; why it failed or was skipped
	Detail   string // more on a failure: the audit failures, the unit test's SQL
	Duration time.Duration
}

// Status is how a check ended; its value is the report's word for it.
type Status string

const (
	Passed  Status = "ok"
	Failed  Status = "FAIL"
	Skipped Status = "skip"
	// NotRun is a selected model of which the sample ran no partition:
	// nothing was checked. It fails refill test unless the caller allows it.
	NotRun Status = "not run"
)

// Fails reports whether a check of status s fails refill test, given
// whether models left out of the sample are allowed.
func (s Status) Fails(allowUnsampled bool) bool {
	return s == Failed || s == NotRun && !allowUnsampled
}

// Sandbox is the empty warehouse Run runs models and unit tests on
// (refill test uses an in-memory DuckDB).
type Sandbox struct {
	// Open opens a new, empty sandbox: one for the sample run and one for
	// each unit test. Run closes it.
	Open func(ctx context.Context) (adapters.Adapter, error)
	// Adapter is the adapter name a target gives the sandbox's warehouse
	// (duckdb). A model that fails in the sandbox while no target uses it
	// is reported as not portable (skipped), not failed.
	Adapter string
	// Name is the warehouse as the report names it (DuckDB).
	Name string
	// Schema is the sandbox's default schema.
	Schema string
}

// Options say what Run checks and how.
type Options struct {
	// Load loads the project and returns the folder that holds its unit
	// tests and seeds. Run reports its error as failed validate
	// checks.
	Load func() (*models.Project, fs.FS, error)
	// Select picks the models to check, as models.Project.Select takes
	// selectors; every model when empty.
	Select []string
	// Exclude removes models from the selection, as models.Project.Select
	// takes excludes.
	Exclude []string
	// From and To bound the sample partitions: by default the three days
	// from the earliest model start; To defaults to From when only From is
	// set.
	From, To string
	// Now is the clock that decides which partitions are complete; the
	// time of the call when zero.
	Now time.Time
	// Dialect returns a target's dialect and default schema without
	// connecting, or why the target's settings are invalid.
	Dialect func(t *models.Target) (models.Dialect, string, error)
	Sandbox Sandbox
}

// Run runs refill test's checks and returns them in report order:
// it validates the project and its targets, renders each selected model
// for a sample partition in every target's dialect, runs the selected
// models with their upstreams for the sample partitions in a sandbox
// loaded with the seeds (stage, verify, audit, swap), and runs the unit
// tests of the selected models, each in a sandbox of its own. Failures
// are checks, never errors.
func Run(ctx context.Context, opts Options) []Result {
	var checks []Result
	add := func(c Result) { checks = append(checks, c) }
	start := time.Now()
	p, fsys, err := opts.Load()
	if err != nil {
		return loadChecks(err)
	}
	unitTests, utErr := p.LoadUnitTests(fsys)
	seeds, seedErr := p.LoadSeeds(fsys)
	for _, e := range []error{utErr, seedErr, p.Unset()} {
		var list models.ErrorList
		if errors.As(e, &list) {
			for _, le := range list {
				add(Result{Suite: "validate", Name: le.File, Status: Failed, Message: le.Error()})
			}
		} else if e != nil {
			add(Result{Suite: "validate", Name: "project", Status: Failed, Message: e.Error()})
		}
	}
	var targetErrs []string
	for _, name := range p.TargetNames() {
		if _, _, err := opts.Dialect(p.Targets[name]); err != nil {
			targetErrs = append(targetErrs, err.Error())
		}
	}
	if len(targetErrs) > 0 {
		add(Result{Suite: "validate", Name: models.ProjectFile, Status: Failed, Message: strings.Join(targetErrs, "\n")})
	}
	add(Result{Suite: "validate", Name: "project", Status: Passed, Duration: time.Since(start),
		Message: strings.Join([]string{plan.Plural(len(p.Models), "model"), plan.Plural(len(p.Targets), "target"), plan.Plural(len(unitTests), "unit test"), plan.Plural(len(seeds), "seed")}, ", ")})

	selected, err := p.Select(opts.Select, opts.Exclude)
	if err != nil {
		add(Result{Suite: "validate", Name: "selection", Status: Failed, Message: err.Error()})
		return checks
	}
	from, to := samplePeriod(p, opts.From, opts.To)
	checks = append(checks, renderChecks(p, selected, from, opts.Dialect)...)

	native := false
	for _, t := range p.Targets {
		native = native || t.Adapter == opts.Sandbox.Adapter
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now().UTC()
	}
	runChecks, notPortable := sampleRunChecks(ctx, p, selected, seeds, from, to, now, opts.Sandbox, native)
	checks = append(checks, runChecks...)
	checks = append(checks, unitTestChecks(ctx, p, selected, unitTests, notPortable, opts.Sandbox)...)
	return checks
}

// loadChecks reports a project that did not load: a failed validate check
// per file with errors.
func loadChecks(err error) []Result {
	var list models.ErrorList
	if !errors.As(err, &list) {
		var me *models.Error
		if !errors.As(err, &me) {
			return []Result{{Suite: "validate", Name: "project", Status: Failed, Message: err.Error()}}
		}
		list = models.ErrorList{me}
	}
	checks := make([]Result, len(list))
	for i, e := range list {
		checks[i] = Result{Suite: "validate", Name: e.File, Status: Failed, Message: e.Error()}
	}
	return checks
}

// samplePeriod returns the range of sample partitions: from and to as
// given, the three days from the earliest model start when from is empty,
// and from alone when to is.
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
func renderChecks(p *models.Project, selected []*models.Model, from string, dialect func(*models.Target) (models.Dialect, string, error)) []Result {
	var out []Result
	for _, m := range selected {
		part, err := samplePartition(m, from)
		if err != nil {
			out = append(out, Result{Suite: "render", Name: m.Name, Status: Failed, Message: err.Error()})
			continue
		}
		var failed []string
		var dialects []string
		start := time.Now()
		for _, name := range p.TargetNames() {
			d, schema, err := dialect(p.Targets[name])
			if err != nil {
				continue // reported by validate
			}
			dialects = append(dialects, fmt.Sprintf("%s (%s)", name, d.Name()))
			if _, err := m.Render(&models.Scope{Dialect: d, Schema: schema, Vars: p.Vars, Target: name}, part); err != nil {
				failed = append(failed, fmt.Sprintf("on %s (%s): %v", name, d.Name(), err))
			}
		}
		c := Result{Suite: "render", Name: m.Name, Status: Passed, Duration: time.Since(start),
			Message: fmt.Sprintf("partition %s on %s", part.Key, strings.Join(dialects, ", "))}
		if len(failed) > 0 {
			c.Status, c.Message = Failed, strings.Join(failed, "\n")
		}
		out = append(out, c)
	}
	return out
}

// samplePartition returns the partition of m that renderChecks renders:
// the one holding from (or m's start), the first of a list, or the whole
// table.
func samplePartition(m *models.Model, from string) (models.Partition, error) {
	switch m.Kind() {
	case models.TimePartitioned:
		if from == "" {
			return m.PartitionAt(m.Config.Start), nil
		}
		per, err := models.ParsePeriod(from, m.Config.Location)
		if err != nil {
			return models.Partition{}, fmt.Errorf("--from: %w", err)
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

// ParseModels renders every model of p for its first partition in scope
// (its dialect, schema and target) and parses the statement with parse,
// a parser of that dialect that needs no connection. It returns what
// does not parse: each error is at the line of the model's file that the
// parser points at (a *models.WarehouseError) when it says where, else
// a *models.Error naming the file.
func ParseModels(ctx context.Context, p *models.Project, scope *models.Scope, parse func(ctx context.Context, sql string) error) []error {
	var errs []error
	for _, m := range p.Models {
		if err := checkSample(ctx, m, scope, func(sql string, _ models.Partition) error { return parse(ctx, sql) }); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// DescribeModels asks the warehouse of a for the columns of every model's
// query, rendered for its sample partition under scope, without running
// it: what the warehouse cannot bind (an unknown column, function or
// table, a type error) is returned, at the model file's line where the
// warehouse says where (a *models.WarehouseError), else as a
// *models.Error naming the file. A model that reads another the
// warehouse does not hold yet cannot be described: unchecked says which
// it reads, by model.
func DescribeModels(ctx context.Context, a adapters.Adapter, p *models.Project, scope *models.Scope) (errs []error, unchecked map[string]string) {
	unchecked = map[string]string{}
	held := map[*models.Model]bool{}
	for _, m := range p.Models {
		var missing []string
		for _, up := range m.Upstream {
			if _, ok := held[up]; !ok {
				cols, err := a.Columns(ctx, scope.Relation(up))
				if err != nil {
					return append(errs, fmt.Errorf("reading the columns of %s: %w", scope.Relation(up), err)), unchecked
				}
				held[up] = cols != nil
			}
			if !held[up] {
				missing = append(missing, up.Name)
			}
		}
		if len(missing) > 0 {
			unchecked[m.Name] = strings.Join(missing, ", ")
			continue
		}
		err := checkSample(ctx, m, scope, func(sql string, part models.Partition) error {
			_, err := a.Describe(ctx, sql, adapters.Tag{Model: m.Name, Partition: part.Key, Step: "validate"})
			return err
		})
		if ctx.Err() != nil {
			return append(errs, ctx.Err()), unchecked
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs, unchecked
}

// checkSample renders m for its sample partition under scope and checks
// the statement with check. What check returns is located at the line of
// the model's file it points at (a *models.WarehouseError) when it says
// where, else is a *models.Error naming the file. A model that cannot be
// rendered is left to validate's template checks.
func checkSample(ctx context.Context, m *models.Model, scope *models.Scope, check func(sql string, part models.Partition) error) error {
	part, err := samplePartition(m, "")
	if err != nil {
		return nil
	}
	parts := []models.Partition{part}
	sql, err := m.Render(scope, parts...)
	if err != nil {
		return nil // a template error, which validate reports
	}
	err = check(sql, part)
	if err == nil {
		return nil
	}
	if located := adapters.AtModelLine(m, scope, parts, sql, err); located != err {
		return located
	}
	return &models.Error{File: m.Path, Msg: err.Error()}
}

// sampleRunChecks runs the selected models and their upstreams for the
// sample in a sandbox loaded with the seeds. It returns the checks and the
// models that do not run in the sandbox, with why, when no target uses
// the sandbox's warehouse (native is false).
func sampleRunChecks(ctx context.Context, p *models.Project, selected []*models.Model, seeds []*models.Seed, from, to string, now time.Time, sb Sandbox, native bool) ([]Result, map[string]string) {
	notPortable := map[string]string{}
	db, err := sb.Open(ctx)
	if err != nil {
		return []Result{{Suite: "run", Name: sb.Adapter, Status: Failed, Message: err.Error()}}, notPortable
	}
	defer db.Close()
	var out []Result
	for _, s := range seeds {
		if err := adapters.LoadSeed(ctx, db, s, s.Relation); err != nil {
			out = append(out, Result{Suite: "run", Name: "seed " + s.Relation.String(), Status: Failed, Message: err.Error()})
		}
	}
	scope := &models.Scope{Dialect: db.Dialect(), Schema: sb.Schema, Vars: p.Vars, Target: "test"}
	r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: db, Scope: scope}, Target: "test"}
	names := make([]string, len(selected))
	for i, m := range selected {
		names[i] = "+" + m.Name // upstream models supply the rows they read
	}
	pl, err := r.Plan(ctx, plan.Selection{Select: names, From: from, To: to, Mode: plan.ModeAll, Now: now})
	if err != nil {
		return append(out, Result{Suite: "run", Name: "plan", Status: Failed, Message: err.Error()}), notPortable
	}
	audits := &auditChecks{byKey: map[string]*Result{}}
	start := time.Now()
	sum, err := r.Run(ctx, pl, runner.RunOptions{Concurrency: 2, Observe: audits.observe, RunID: "refill-test"})
	if err != nil {
		return append(out, Result{Suite: "run", Name: "run", Status: Failed, Message: err.Error()}), notPortable
	}
	elapsed := time.Since(start)
	byModel := map[string][]runner.PartitionResult{}
	for _, pr := range sum.Partitions {
		byModel[pr.Model] = append(byModel[pr.Model], pr)
	}
	chosen := map[*models.Model]bool{}
	for _, m := range selected {
		chosen[m] = true
	}
	for _, m := range pl.Models {
		c := modelCheck(m, byModel[m.Name], sb, native, notPortable)
		if len(byModel[m.Name]) == 0 && chosen[m] {
			// Nothing of a selected model ran: say so, never ok.
			c.Status, c.Message = NotRun, "no partition in the sample "+unsampledWhy(m, from, to, now, pl)
		}
		c.Duration = elapsed / time.Duration(max(len(pl.Models), 1))
		out = append(out, c)
	}
	return append(out, audits.checks()...), notPortable
}

// modelCheck is the run check of model m, whose sample partitions ended
// as results. A model that failed in the sandbox for a reason other than
// its audits is added to notPortable unless native.
func modelCheck(m *models.Model, results []runner.PartitionResult, sb Sandbox, native bool, notPortable map[string]string) Result {
	c := Result{Suite: "run", Name: m.Name, Status: Passed}
	var problems []string
	for _, pr := range results {
		if pr.Status == runner.Failed {
			problems = append(problems, fmt.Sprintf("%s: %v", pr.Partition, pr.Err))
		}
	}
	switch {
	case len(results) == 0:
		c.Message = "no partition in the sample range"
	case len(problems) > 0:
		var aerr *runner.AuditError
		auditOnly := true
		for _, pr := range results {
			if pr.Status == runner.Failed && !errors.As(pr.Err, &aerr) {
				auditOnly = false
			}
		}
		c.Message = fmt.Sprintf("%s (%s): %s", m.Name, m.Path, strings.Join(problems, "\n"))
		switch {
		case auditOnly:
			c.Status, c.Message = Failed, plan.Plural(len(results), "partition")+" ran; audits failed (see below)"
		case native:
			c.Status = Failed
		default:
			c.Status = Skipped
			c.Message = "not portable to " + sb.Name + ": " + c.Message
			notPortable[m.Name], _, _ = strings.Cut(problems[0], "\n")
		}
	default:
		skipped := 0
		for _, pr := range results {
			if pr.Status == runner.Skipped {
				skipped++
			}
		}
		c.Message = fmt.Sprintf("%s ran (%s)", plan.Plural(len(results)-skipped, "partition"), partitionSpan(results))
		if skipped > 0 {
			c.Status = Skipped
			c.Message = fmt.Sprintf("%d of %d partitions skipped: an upstream model failed", skipped, len(results))
		}
	}
	return c
}

// unsampledWhy says why the sample from..to ran no partition of m, and how
// to sample it.
func unsampledWhy(m *models.Model, from, to string, now time.Time, pl *plan.Plan) string {
	for _, note := range pl.Notes {
		if rest, ok := strings.CutPrefix(note, m.Name+": "); ok {
			return fmt.Sprintf("%s..%s: %s", from, to, rest)
		}
	}
	for _, st := range pl.Blocked() {
		if st.Model == m {
			return fmt.Sprintf("%s..%s: %s %s", from, to, st.Partition.Key, st.Detail)
		}
	}
	if m.Kind() != models.TimePartitioned {
		return fmt.Sprintf("%s..%s (--allow-unsampled accepts it)", from, to)
	}
	first := m.PartitionAt(m.Config.Start)
	last, ok := m.LastComplete(now)
	if !ok {
		return fmt.Sprintf("%s..%s: no partition of it is complete at %s (--now pins the clock)", from, to, now.UTC().Format(time.RFC3339))
	}
	if per, err := models.ParsePeriod(from, m.Config.Location); err == nil && per.Start.After(last) {
		return fmt.Sprintf("%s..%s: its last partition complete at %s is %s (--now pins the clock)", from, to,
			now.UTC().Format(time.RFC3339), m.PartitionAt(last).Key)
	}
	return fmt.Sprintf("%s..%s: its first partition is %s (refill test --from %s samples it; --allow-unsampled accepts it)",
		from, to, first.Key, first.Key)
}

func partitionSpan(rs []runner.PartitionResult) string {
	if len(rs) == 1 {
		return rs[0].Partition
	}
	return rs[0].Partition + " .. " + rs[len(rs)-1].Partition
}

// auditChecks gathers a check per model and audit from a run's audit
// events.
type auditChecks struct {
	mu    sync.Mutex // observe is called from every unit running at once
	byKey map[string]*Result
	order []string
}

func (a *auditChecks) observe(ev runner.Event) {
	if ev.Kind != runner.EventAudit {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := ev.Model + " " + ev.Audit.Name
	c, ok := a.byKey[key]
	if !ok {
		c = &Result{Suite: "audit", Name: key, Status: Passed}
		a.byKey[key] = c
		a.order = append(a.order, key)
	}
	if !ev.Audit.Passed {
		msg := fmt.Sprintf("%s:%d: %s on %s: %s", ev.Audit.File, ev.Audit.Line, ev.Audit.Name, strings.Join(ev.Partitions, ", "), ev.Audit.Message)
		if ev.Audit.Severity == models.SeverityWarn {
			msg = "warning: " + msg
		} else {
			c.Status = Failed
		}
		c.Detail = strings.TrimSpace(c.Detail + "\n" + msg)
	}
}

// checks returns the audit checks sorted by model and audit, each with
// its failures or warnings as its message.
func (a *auditChecks) checks() []Result {
	sort.SliceStable(a.order, func(i, j int) bool { return a.order[i] < a.order[j] })
	out := make([]Result, 0, len(a.order))
	for _, k := range a.order {
		c := *a.byKey[k]
		if c.Detail != "" {
			c.Message = c.Detail // the failures, or the warnings
		}
		out = append(out, c)
	}
	return out
}

// unitTestChecks runs each unit test of the selected models in a sandbox
// of its own, skipping those of models in notPortable.
func unitTestChecks(ctx context.Context, p *models.Project, selected []*models.Model, tests []*models.UnitTest, notPortable map[string]string, sb Sandbox) []Result {
	chosen := map[*models.Model]bool{}
	for _, m := range selected {
		chosen[m] = true
	}
	var out []Result
	for _, ut := range tests {
		if !chosen[ut.Model] {
			continue
		}
		name := fmt.Sprintf("%s %q", ut.Model.Name, ut.Name)
		if why, ok := notPortable[ut.Model.Name]; ok {
			out = append(out, Result{Suite: "unit", Name: name, Status: Skipped, Message: "the model does not run on " + sb.Name + ": " + why})
			continue
		}
		start := time.Now()
		c := Result{Suite: "unit", Name: name, Status: Passed}
		res, err := runUnitTestIn(ctx, sb, p, ut)
		switch {
		case err != nil:
			c.Status, c.Message = Failed, fmt.Sprintf("%s:%d: %v", ut.File, ut.Line, err)
		case !res.Passed:
			c.Status, c.Message = Failed, fmt.Sprintf("%s:%d: %s", ut.File, ut.Line, res.Message)
			c.Detail = res.SQL
		default:
			c.Message = fmt.Sprintf("%s:%d, partition %s", ut.File, ut.Line, ut.Partition)
		}
		c.Duration = time.Since(start)
		out = append(out, c)
	}
	return out
}

func runUnitTestIn(ctx context.Context, sb Sandbox, p *models.Project, ut *models.UnitTest) (*UnitTestResult, error) {
	db, err := sb.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return RunUnitTest(ctx, db, &models.Scope{Dialect: db.Dialect(), Schema: sb.Schema, Vars: p.Vars, Target: "test"}, ut)
}
