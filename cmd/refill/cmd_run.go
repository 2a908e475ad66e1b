package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

type runFlags struct {
	selectionFlags
	dryRun        bool
	yes           bool
	retries       int
	retryDelay    time.Duration
	concurrency   int
	batch         int
	splitFailed   bool
	failFast      bool
	wait          time.Duration
	resume        string
	publish       string
	maxPartitions int
	allowBlocked  bool
	review        bool
	maxChanged    string
	examples      int
}

// confirmAbove is how many partitions make run ask before starting, on a
// terminal.
const confirmAbove = 100

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [MODEL...]",
		Short: "Compute, verify and atomically swap in the planned partitions",
		Long: `Run executes the plan (see refill plan): for each partition, or batch of
consecutive partitions, it renders the model, computes it into a staging table,
verifies that every row lies inside the window, runs the model's audits, and then
swaps the window into the target table and records it in the ledger, in one
transaction where the warehouse allows (see the guarantee pl prints).

A partition whose upstream partitions are done starts at once; a failed partition
does not stop the others, but the partitions that read it are skipped. At the
end a summary lists every failure, and the exit code is 1 if any partition failed.
A partition that reads upstream partitions that are not there (never built,
failed, or outside the run's range) is blocked, not run: the summary names what
each blocked model waits for and the command that builds it, and the exit code
is 5 unless --allow-blocked.

Without --from, --to or --partitions this is the scheduled form: it fills every
missing partition up to the last complete one and reruns each model's lookback
window. Run it from cron; overlapping invocations are refused (exit 3).

The first SIGINT or SIGTERM stops launching work and lets in-flight swaps finish;
a second aborts them (transactions roll back). Exit code 130.

` + selectorHelp,
		Example: `  refill run --from 2024-01-01 --to 2024-01-31
  refill run staging.orders+ --from 2024-01 --yes
  refill run --mode failed
  refill run --resume 20240105T101500Z-1a2b3c
  refill run tag:finance --batch 31 --concurrency 4
  refill run --publish together --from 2024-02-01 --to 2024-02-07
  refill run marts.daily_revenue --full-refresh
  refill run staging.orders+ --from 2024-01 --review
  refill run --review --max-changed 5% --yes`,
		RunE: func(c *cobra.Command, args []string) error { return a.runRun(c, args, &f) },
	}
	f.register(c, true)
	f.registerState(c)
	f.registerDefer(c)
	a.completeSelection(c)
	fl := c.Flags()
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and stop")
	fl.BoolVarP(&f.yes, "yes", "y", false, "do not ask before running many partitions")
	fl.IntVar(&f.retries, "retries", 2, "retries of a partition or batch after a transient error (lost connection, conflict, overload)")
	fl.DurationVar(&f.retryDelay, "retry-delay", time.Second, "first retry delay; doubles each attempt, with jitter")
	fl.IntVarP(&f.concurrency, "concurrency", "j", 0, "partitions to compute at once (default: the adapter's; capped by the target's concurrency:)")
	fl.IntVar(&f.batch, "batch", 0, "render N consecutive partitions as one statement (overrides batch: in the models)")
	fl.BoolVar(&f.splitFailed, "split-failed", true, "when a batch fails, retry its partitions one by one")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop launching work after the first failed partition")
	fl.DurationVar(&f.wait, "wait", 0, "wait up to this long for tables another run holds (default: fail at once, exit 3)")
	fl.StringVar(&f.resume, "resume", "", "repeat the exact selection of run `RUN_ID`, skipping what it finished")
	fl.StringVar(&f.publish, "publish", "partition", "partition: swap each partition when ready; together: swap all in one transaction at the end")
	fl.IntVar(&f.maxPartitions, "max-partitions", 0, "refuse to run more than N partitions without --yes")
	fl.BoolVar(&f.allowBlocked, "allow-blocked", false, "exit 0 when nothing failed but selected partitions are blocked (default: exit 5)")
	fl.BoolVar(&f.review, "review", false, "stage every partition, show each one's data diff against its table (as refill diff), then publish all together on confirmation or --yes")
	fl.StringVar(&f.maxChanged, "max-changed", "", "with --review: publish nothing if more rows differ than this, a count (500) or a share of the rows replaced (5%)")
	fl.IntVar(&f.examples, "examples", 3, "with --review: example rows of each kind per partition")
	fl.StringVarP(&f.output, "output", "o", "text", "text or json (a summary of the run)")
	return c
}

func (a *app) runRun(c *cobra.Command, args []string, f *runFlags) error {
	if f.publish != "partition" && f.publish != "together" {
		return usagef("--publish %q: want partition or together", f.publish)
	}
	if f.output != "text" && f.output != "json" {
		return usagef("--output %q: want text or json", f.output)
	}
	if err := checkRunNumbers(c.Flags(), f); err != nil {
		return err
	}
	limit, err := parseMaxChanged(f.maxChanged)
	if err != nil {
		return err
	}
	if !f.review && (f.maxChanged != "" || c.Flags().Changed("examples")) {
		return usagef("--max-changed and --examples apply to --review")
	}
	if f.review && !f.yes && (!isTerminal(a.stdin) || !isTerminal(a.stdout)) {
		return usagef("--review asks before publishing: pass --yes to publish what it shows (bounded by --max-changed), or run it on a terminal")
	}
	if f.review && c.Flags().Changed("publish") && f.publish != "together" {
		return usagef("--review publishes together: every partition is staged and shown before any is published")
	}
	sel, unchanged, err := a.selectionOf(&f.selectionFlags, args)
	if err != nil {
		return err
	}
	if unchanged {
		if f.output == "json" {
			return writeJSON(a.stdout, nothingRun)
		}
		fmt.Fprintln(a.stdout, nothingChanged)
		return nil
	}
	if f.resume != "" && (len(args) > 0 || f.from != "" || f.to != "" || len(f.partitions) > 0 || f.mode != "" || len(f.selects) > 0) {
		return usagef("--resume repeats a run's own selection; it cannot be combined with models, --from, --to, --partitions or --mode")
	}
	var check *plan.Selection // a resumed run's selection is checked once read
	if f.resume == "" {
		check = &sel
	}
	s, err := a.openForRun(f.wait, check)
	if err != nil {
		return err
	}
	defer s.close()
	if f.deferTo != "" && f.resume != "" {
		return usagef("--resume repeats a run's own selection; --defer cannot be added to it")
	}
	if err := a.deferTo(s, f.deferTo, sel); err != nil {
		return err
	}
	opts := runner.RunOptions{Retries: f.retries, RetryDelay: f.retryDelay, Batch: f.batch, SplitFailed: f.splitFailed,
		FailFast: f.failFast, Together: f.publish == "together", Concurrency: f.concurrency, Redact: a.redact}
	if f.resume != "" {
		if sel, err = s.resumeSelection(f.resume); err != nil {
			return err
		}
		if err := s.leaveOutBroken(sel); err != nil {
			return err
		}
		// The resumed run's shape, unless a flag says otherwise.
		if sel.Shape != nil {
			given := opts
			opts.ApplyShape(*sel.Shape)
			fl := c.Flags()
			if fl.Changed("retries") {
				opts.Retries = given.Retries
			}
			if fl.Changed("concurrency") {
				opts.Concurrency = given.Concurrency
			}
			if fl.Changed("fail-fast") {
				opts.FailFast = given.FailFast
			}
			if fl.Changed("split-failed") {
				opts.SplitFailed = given.SplitFailed
			}
			if fl.Changed("batch") || fl.Changed("publish") {
				return usagef("--resume repeats the run's --batch and --publish; they cannot be changed")
			}
			sel.Shape = nil
		}
		if c.Flags().Changed("allow-missing-upstream") {
			sel.AllowMissingUpstream = f.allowMissing
		}
	}
	if f.review {
		opts.Together, opts.ReviewExamples = true, f.examples
		w := a.stdout
		if f.output == "json" {
			w = a.stderr // stdout holds the summary's JSON alone
		}
		opts.Review = func(diffs []runner.PartitionDiff) error { return a.review(w, diffs, limit, f.yes) }
	}
	if err := opts.Validate(s.info); err != nil {
		return usageError{err}
	}
	pl, err := s.plan(sel)
	if err != nil {
		return err
	}
	text := f.output == "text"
	if text && !a.quiet {
		a.printPlan(a.stdout, s, pl, false)
		if opts.Batch > 0 {
			if skipped := unbatched(pl, opts.Batch); len(skipped) > 0 {
				fmt.Fprintf(a.stdout, "note: --batch %d does not batch %s: a model must declare batch: to be batched (its SQL must be batch-safe)\n",
					opts.Batch, strings.Join(skipped, ", "))
			}
		}
	}
	if f.dryRun {
		if !text {
			return writeJSON(a.stdout, nothingRun)
		}
		return nil
	}
	// With nothing to build the runner still runs: it drops the staging
	// tables dead runs left (on a node that was down, say), and waits for
	// a run writing the selected tables, planning again after it.
	nothing := pl.Len() == 0 && pl.LenBlocked() == 0
	if !nothing {
		// Steps that run only if a refresh changes something are not counted.
		n := pl.Len() - conditionalSteps(pl)
		if f.maxPartitions > 0 && n > f.maxPartitions && !f.yes {
			return exitf(exitUsage, "the plan has %d partitions, more than --max-partitions %d: narrow the selection or pass --yes", n, f.maxPartitions)
		}
		if n > confirmAbove && !f.yes && isTerminal(a.stdin) && isTerminal(a.stdout) {
			if !a.confirm(fmt.Sprintf("Run %d partitions on %s?", n, s.target.Name)) {
				return exitf(exitUsage, "cancelled")
			}
		}
	}
	prog := newProgress(a, text && !a.quiet)
	opts.MaxConcurrency, opts.Wait, opts.Observe, opts.Stop = s.target.Concurrency, f.wait, prog.observe, a.stop
	summary, err := s.runner.Run(a.ctx, pl, opts)
	prog.close()
	if err != nil {
		var held *adapters.LeaseHeldError
		if errors.As(err, &held) {
			return fmt.Errorf("%w\nNothing was run. Wait for that run to finish, or pass --wait DURATION", err)
		}
		return err
	}
	pl = summary.Plan // planned again if it waited for another run
	if nothing && pl.Len() == 0 && pl.LenBlocked() == 0 {
		if !text {
			return writeJSON(a.stdout, nothingRun)
		}
		return nil
	}
	if text {
		a.printSummary(a.stdout, s, summary, pl)
	} else if err := writeJSON(a.stdout, runJSON(summary, pl)); err != nil {
		return err
	}
	switch {
	case summary.Interrupted:
		a.silent = true
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	case summary.Failed > 0 || summary.Skipped > 0 || summary.LostLease != nil || summary.Unrecorded != nil:
		// (A skipped partition without a failure or an interrupt did not
		// run for a reason the summary gives: not done, so not success.)
		a.silent = true
		return &exitError{code: exitFailed, err: errors.New("some partitions failed or were not run")}
	case summary.Blocked > 0 && !f.allowBlocked:
		a.silent = true
		return &exitError{code: exitIncomplete, err: errors.New("some partitions are blocked")}
	}
	return nil
}

// nothingRun is the JSON of a run with nothing to build.
var nothingRun = runOutput{Partitions: []partitionJSON{}, BlockedReasons: map[string]int{}, BlockedModels: []blockedModelJSON{}}

// openForRun connects for writing, waiting up to wait for a DuckDB file
// that another process holds.
func (a *app) openForRun(wait time.Duration, sel *plan.Selection) (*session, error) {
	deadline := time.Now().Add(wait)
	for {
		s, err := a.session(readWrite, false, "refill run", sel)
		var locked *adapters.LockedError
		if err == nil || !errors.As(err, &locked) {
			return s, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w\nNothing was run. Wait for it to finish, or pass --wait DURATION", err)
		}
		select {
		case <-a.ctx.Done():
			return nil, a.ctx.Err()
		case <-a.stop:
			return nil, &exitError{code: exitInterrupted, err: errors.New("interrupted while waiting")}
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// resumeSelection returns the selection of run id, set to skip what that
// run (or the run it resumed) already finished.
func (s *session) resumeSelection(id string) (plan.Selection, error) {
	run, err := s.adapter.LoadRun(s.app.ctx, id)
	if err != nil {
		if errors.Is(err, adapters.ErrRunNotFound) {
			return plan.Selection{}, usagef("--resume: no run %s in the ledger of target %s", id, s.target.Name)
		}
		return plan.Selection{}, exitf(exitWarehouse, "reading run %s: %v", id, err)
	}
	sel, err := plan.ParseSelection(run.Selection)
	if err != nil {
		return plan.Selection{}, exitf(exitWarehouse, "run %s: %v", id, err)
	}
	if sel.Since.IsZero() {
		sel.Since = run.StartedAt
	}
	sel.ResumeOf = id
	return sel, nil
}

// unbatched returns the time-partitioned models of plan that --batch n
// does not batch.
func unbatched(pl *plan.Plan, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, st := range pl.Runs() {
		m := st.Model
		if !seen[m.Name] && m.Kind() == models.TimePartitioned && runner.BatchSize(m, n) == 1 && n > 1 {
			out = append(out, m.Name)
		}
		seen[m.Name] = true
	}
	return out
}

func (a *app) confirm(question string) bool {
	fmt.Fprintf(a.stdout, "%s [y/N] ", question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes"
}

type partitionJSON struct {
	Model     string  `json:"model"`
	Partition string  `json:"partition"`
	Status    string  `json:"status"`
	Rows      int64   `json:"rows"`
	Error     *string `json:"error"`
	Attempts  int     `json:"attempts"`
	Seconds   float64 `json:"seconds"`
	// Unchanged: a refresh that found the rows its table holds, or a
	// partition reading only such refreshes, left as it was.
	Unchanged bool `json:"unchanged,omitempty"`
}

type runOutput struct {
	RunID       string   `json:"run_id"`
	Succeeded   int      `json:"succeeded"`
	Failed      int      `json:"failed"`
	Skipped     int      `json:"skipped"`
	Blocked     int      `json:"blocked"`
	Unchanged   int      `json:"unchanged"`
	Interrupted bool     `json:"interrupted"`
	Warnings    []string `json:"warnings"`
	// Error is why the run as a whole failed (it lost its leases, or could
	// not record what it published), or null.
	Error *string `json:"error"`
	// BlockedReasons counts the blocked partitions by what the first
	// upstream partition each waits for, followed to its root, is:
	// missing, failed, pending or drift.
	BlockedReasons map[string]int `json:"blocked_reasons"`
	// BlockedModels says, per model with blocked partitions, what the
	// first of them waits for and the command that builds it.
	BlockedModels []blockedModelJSON `json:"blocked_models"`
	Partitions    []partitionJSON    `json:"partitions"`
}

type blockedModelJSON struct {
	Model      string `json:"model"`
	Partitions int    `json:"partitions"`
	WaitsFor   string `json:"waits_for"` // "staging.orders 2024-01-02"
	// WaitsThrough, when they wait for several partitions of that model
	// in that state, is the key of the last of them.
	WaitsThrough string `json:"waits_through,omitempty"`
	State        string `json:"state"`   // missing, failed, pending or drift
	Command      string `json:"command"` // what builds it
}

func runJSON(s *runner.Summary, pl *plan.Plan) runOutput {
	out := runOutput{RunID: s.RunID, Succeeded: s.Succeeded, Failed: s.Failed, Skipped: s.Skipped, Blocked: s.Blocked, Unchanged: s.Unchanged,
		Interrupted: s.Interrupted, Warnings: s.Warnings, Partitions: []partitionJSON{},
		BlockedReasons: map[string]int{}, BlockedModels: []blockedModelJSON{}}
	for _, b := range blockedModels(pl) {
		out.BlockedModels = append(out.BlockedModels, blockedModelJSON{Model: b.model, Partitions: b.n,
			WaitsFor: b.root.Model + " " + b.root.Partition, WaitsThrough: b.root.Through, State: string(b.root.State), Command: b.command})
		for state, n := range b.byState {
			out.BlockedReasons[state] += n
		}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, err := range []error{s.LostLease, s.Unrecorded} {
		if err != nil && out.Error == nil {
			msg := err.Error()
			out.Error = &msg
		}
	}
	for _, p := range s.Partitions {
		pj := partitionJSON{Model: p.Model, Partition: p.Partition, Status: string(p.Status), Rows: p.Rows,
			Attempts: p.Attempts, Seconds: p.Duration.Seconds(), Unchanged: p.Unchanged}
		if p.Err != nil {
			msg := p.Err.Error()
			pj.Error = &msg
		}
		out.Partitions = append(out.Partitions, pj)
	}
	return out
}

func (a *app) printSummary(w io.Writer, s *session, sum *runner.Summary, pl *plan.Plan) {
	elapsed := sum.Finished.Sub(sum.Started).Round(10 * time.Millisecond)
	blocked := ""
	if sum.Blocked > 0 {
		blocked = fmt.Sprintf(", %d blocked", sum.Blocked)
	}
	unchanged := ""
	if sum.Unchanged > 0 {
		unchanged = fmt.Sprintf(" (%d unchanged: a refresh found the rows its table holds)", sum.Unchanged)
	}
	fmt.Fprintf(w, "\nRun %s on %s: %d succeeded%s, %d failed, %d skipped%s in %s.\n",
		sum.RunID, s.target.Name, sum.Succeeded, unchanged, sum.Failed, sum.Skipped, blocked, elapsed)
	if sum.LostLease != nil {
		fmt.Fprintf(w, "Stopped: %v\n", sum.LostLease)
	}
	if sum.Unrecorded != nil {
		fmt.Fprintf(w, "Not recorded: %v\n", sum.Unrecorded)
	}
	switch {
	case sum.Interrupted:
		fmt.Fprintln(w, "Interrupted: in-flight partitions finished; nothing else was started.")
	case sum.Signalled:
		fmt.Fprintln(w, "An interrupt arrived after the last partition had started: the run finished its work.")
	}
	var failed, skipped, blockedParts []runner.PartitionResult
	for _, p := range sum.Partitions {
		switch p.Status {
		case runner.Failed:
			failed = append(failed, p)
		case runner.Skipped:
			skipped = append(skipped, p)
		case runner.Blocked:
			blockedParts = append(blockedParts, p)
		}
	}
	if len(blockedParts) > 0 {
		fmt.Fprintf(w, "Incomplete: %s of the selection not built; they read upstream partitions that are not there:\n", plan.Plural(len(blockedParts), "partition"))
		printBlockedModels(w, pl)
		if a.verbose {
			for _, p := range blockedParts {
				fmt.Fprintf(w, "  %s %s: %v\n", p.Model, p.Partition, p.Err)
			}
		}
		fmt.Fprintln(w, "Nothing wrong was written. --allow-missing-upstream runs them from what the upstream tables hold; --allow-blocked exits 0.")
	}
	if len(failed) > 0 {
		a.printFailures(w, failed)
	}
	if len(skipped) > 0 && !a.quiet {
		fmt.Fprintln(w, "Skipped partitions:")
		for i, p := range skipped {
			if i == 20 && !a.verbose {
				fmt.Fprintf(w, "  ... and %d more (see --verbose)\n", len(skipped)-i)
				break
			}
			fmt.Fprintf(w, "  %s %s: %v\n", p.Model, p.Partition, p.Err)
		}
	}
	for _, warn := range sum.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if len(failed) > 0 || sum.Interrupted {
		fmt.Fprintf(w, "Rerun what is left with: refill run --resume %s (or refill run --mode failed for failures only)\n", sum.RunID)
	}
}

// checkRunNumbers refuses numeric flags whose values mean nothing: a
// count of partitions, statements or attempts below what it counts, or a
// negative duration. A flag left out keeps its default (the adapter's
// concurrency, the models' batch:, no limit).
func checkRunNumbers(fl *pflag.FlagSet, f *runFlags) error {
	for _, n := range []struct {
		name  string
		value int
		least int
		hint  string
	}{
		{"concurrency", f.concurrency, 1, "leave it out for the adapter's default"},
		{"batch", f.batch, 1, "1 runs each partition alone; leave it out for the models' batch:"},
		{"max-partitions", f.maxPartitions, 1, "leave it out for no limit"},
		{"retries", f.retries, 0, "0 tries each partition once"},
	} {
		if fl.Changed(n.name) && n.value < n.least {
			return usagef("--%s %d: want %d or more (%s)", n.name, n.value, n.least, n.hint)
		}
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"retry-delay", f.retryDelay}, {"wait", f.wait}} {
		if d.value < 0 {
			return usagef("--%s %s: want a duration of 0 or more", d.name, d.value)
		}
	}
	return nil
}

// failureGroup is the failed partitions of one model that failed with one
// error.
type failureGroup struct {
	model, err string
	keys       []string
}

// printFailures lists failures grouped by model and error, most frequent
// first: a thousand partitions failing alike are one line, with where to
// see them all. At most maxFailureGroups groups are printed unless
// --verbose.
func (a *app) printFailures(w io.Writer, failed []runner.PartitionResult) {
	var groups []*failureGroup
	index := map[[2]string]*failureGroup{}
	for _, p := range failed {
		text := a.redact(p.Err.Error())
		k := [2]string{p.Model, text}
		g := index[k]
		if g == nil {
			g = &failureGroup{model: p.Model, err: text}
			index[k] = g
			groups = append(groups, g)
		}
		g.keys = append(g.keys, p.Partition)
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].keys) > len(groups[j].keys) })
	fmt.Fprintf(w, "Failed partitions (%d):\n", len(failed))
	for i, g := range groups {
		if i == maxFailureGroups && !a.verbose {
			fmt.Fprintf(w, "  ... and %d more errors (see --verbose, refill status --list, or the ledger's partitions table)\n", len(groups)-i)
			break
		}
		fmt.Fprintf(w, "  %s %s: %s\n", g.model, keysSummary(g.keys), indentAfterFirst(g.err))
		if hint := failureHint(g.err); hint != "" {
			fmt.Fprintf(w, "    hint: %s\n", hint)
		}
	}
}

// maxFailureGroups is how many groups of failures a run's summary lists.
const maxFailureGroups = 10

// keysSummary names a group's partitions: all of them when few, else how
// many and the first and last.
func keysSummary(keys []string) string {
	if len(keys) <= 3 {
		return strings.Join(keys, ", ")
	}
	sorted := slices.Sorted(slices.Values(keys))
	return fmt.Sprintf("%s, from %s to %s", plan.Plural(len(keys), "partition"), sorted[0], sorted[len(sorted)-1])
}

// failureHint says what usually causes an error, when it can tell.
func failureHint(err string) string {
	lower := strings.ToLower(err)
	switch {
	case strings.Contains(lower, "does not exist") && strings.Contains(lower, "table"),
		strings.Contains(lower, "doesn't exist") && strings.Contains(lower, "table"):
		return "a table it reads does not exist: a source loaded from seeds/ needs refill seed first; a model's table, a refill run of that model"
	}
	return ""
}

// blockedModel is what the blocked partitions of one model wait for.
type blockedModel struct {
	model string
	n     int
	// root is the upstream partition the first of them waits for, followed
	// through blocked partitions to one that is missing, failed, pending
	// or drifted.
	root    plan.Blocker
	byState map[string]int // its partitions, by their root's state
	command string         // what builds root
}

// blockedModels groups the plan's blocked steps by model, in plan order.
func blockedModels(pl *plan.Plan) []*blockedModel {
	if pl == nil {
		return nil
	}
	blocked := pl.Blocked()
	index := map[string]*plan.Step{}
	for i := range blocked {
		st := &blocked[i]
		index[st.Model.Name+" "+st.Partition.Key] = st
	}
	rootOf := func(st *plan.Step) plan.Blocker {
		b := plan.Blocker{Model: st.Model.Name, Partition: st.Partition.Key, State: plan.ReasonMissing}
		for seen := 0; st != nil && st.BlockedBy != nil && seen < len(index)+1; seen++ {
			b = *st.BlockedBy
			if b.State != plan.ReasonBlocked {
				break
			}
			st = index[b.Model+" "+b.Partition]
		}
		return b
	}
	var out []*blockedModel
	byModel := map[string]*blockedModel{}
	for i := range blocked {
		st := &blocked[i]
		root := rootOf(st)
		bm := byModel[st.Model.Name]
		if bm == nil {
			bm = &blockedModel{model: st.Model.Name, root: root, byState: map[string]int{}, command: buildCommand(st.Model, root, pl.Selection)}
			byModel[st.Model.Name] = bm
			out = append(out, bm)
		}
		bm.n++
		bm.byState[string(root.State)]++
	}
	return out
}

// printBlockedModels prints, per model with blocked partitions, what they
// wait for and the command that builds it.
func printBlockedModels(w io.Writer, pl *plan.Plan) {
	for _, b := range blockedModels(pl) {
		waits := b.root.Model + " " + b.root.Partition
		if b.root.Through != "" {
			waits += " through " + b.root.Through
		}
		fmt.Fprintf(w, "  %s (%s): waits for %s (%s)\n    to build it: %s\n", b.model, plan.Plural(b.n, "partition"),
			waits, blockerState(b.root.State, b.root.Through != ""), b.command)
	}
}

// blockerState says what is wrong with a blocking upstream partition, or
// with several of them.
func blockerState(r plan.Reason, several bool) string {
	switch {
	case r == plan.ReasonFailed && several:
		return "their last attempts failed"
	case r == plan.ReasonPending && several:
		return "their last publications may not have finished"
	}
	switch r {
	case plan.ReasonMissing:
		return "never built"
	case plan.ReasonFailed:
		return "its last attempt failed"
	case plan.ReasonPending:
		return "its last publication may not have finished"
	case plan.ReasonDrift:
		return "its rows are not what the ledger recorded"
	}
	return string(r)
}

// buildCommand is the command that builds root, the partition m's blocked
// partitions wait for, over the run's range.
func buildCommand(m *models.Model, root plan.Blocker, sel plan.Selection) string {
	rng := ""
	switch {
	case len(sel.Partitions) > 0:
		rng = " --partitions " + strings.Join(sel.Partitions, ",")
	case sel.From != "" || sel.To != "":
		if sel.From != "" {
			rng += " --from " + sel.From
		}
		if sel.To != "" {
			rng += " --to " + sel.To
		}
	}
	// The upstream partitions themselves: one, or the stretch from the
	// first to the last of those it reads.
	those := " --partitions " + root.Partition
	if root.Through != "" {
		those = " --from " + root.Partition + " --to " + root.Through
	}
	switch root.State {
	case plan.ReasonFailed:
		return fmt.Sprintf("fix %s, then refill run %s%s (refill status %s --list shows the error)", root.Model, root.Model, those, root.Model)
	case plan.ReasonPending, plan.ReasonDrift:
		return "refill run " + root.Model + those
	}
	if root.PastRange && root.Model != m.Name {
		// Past the range, which does not build it: those partitions
		// and what they read.
		return "refill run +" + root.Model + those
	}
	if root.Model == m.Name && m.Kind() == models.TimePartitioned {
		// Its own past: the chain from its first partition.
		to := ""
		if sel.To != "" {
			to = " --to " + sel.To
		}
		return fmt.Sprintf("refill run %s --from %s%s", m.Name, m.PartitionAt(m.Config.Start).Key, to)
	}
	return "refill run +" + m.Name + rng
}
