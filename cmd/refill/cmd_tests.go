// refill test: the project's checks (validation, rendering, a sample run
// with audits, unit tests) in a sandbox; named cmd_tests.go because a
// file named cmd_test.go would be a Go test.

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/cmd/refill/internal/junit"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/check"
	"github.com/refill/refill/runner/plan"
)

func (a *app) testCommand() *cobra.Command {
	var junitPath, from, to, now, state string
	var exclude []string
	var allowUnsampled, changed bool
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
three days from the earliest model start, complete at --now. A whole-table or
list model reads its time-partitioned upstreams through the sample's end (its
horizon), so it costs the sample, not the history. Every selected model must
run at least one partition: one that does not is reported "not run" and fails
the check unless --allow-unsampled. It exits 1 when any check fails.`,
		Example: `  refill test
  refill test marts.daily_revenue --junit report.xml
  refill test --from 2024-01-01 --to 2024-01-31
  refill test --changed --state git:origin/main   # a pull request's models and what reads them`,
		RunE: func(c *cobra.Command, args []string) error {
			started := time.Now()
			var clock time.Time
			if now != "" {
				var err error
				if clock, err = parseNow(now); err != nil {
					return err
				}
			}
			if changed {
				args = append(args, changedTerm+"+")
			}
			sel := plan.Selection{Select: args, Exclude: exclude}
			ch, nothing, err := a.resolveChanged(&sel, state)
			if err != nil {
				return err
			}
			if nothing {
				fmt.Fprintln(a.stdout, "Nothing to test: no selected model changed.")
				return nil
			}
			args, exclude = sel.Select, sel.Exclude
			checks := check.Run(a.ctx, check.Options{Load: a.loadProjectFS, Select: args, Exclude: exclude, From: from, To: to,
				Now: clock, Dialect: dialectFor, Sandbox: sandbox()})
			a.printChecks(a.stdout, checks, time.Since(started))
			if changed && state != "" && !strings.HasPrefix(state, "git:") {
				// Compared with a target: what the changes do to its data.
				if err := a.diffChanged(state, ch, clock); err != nil {
					return err
				}
			}
			if junitPath != "" {
				if err := junit.Write(junitPath, checks, time.Since(started), allowUnsampled); err != nil {
					return err
				}
			}
			for _, ch := range checks {
				if ch.Status.Fails(allowUnsampled) {
					a.silent = true
					return &exitError{code: exitFailed, err: errors.New("tests failed")}
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&junitPath, "junit", "", "also write the results as JUnit XML to `FILE`")
	c.Flags().StringVar(&from, "from", "", "first sample partition (default: the earliest model start)")
	c.Flags().StringVar(&to, "to", "", "last sample partition (default: two days after --from)")
	c.Flags().StringVar(&now, "now", "", "the clock that decides which partitions are complete (default: now)")
	c.Flags().StringArrayVar(&exclude, "exclude", nil, "leave out the models these selectors match")
	c.Flags().BoolVar(&allowUnsampled, "allow-unsampled", false, "pass although a selected model ran no partition in the sample")
	c.Flags().BoolVar(&changed, "changed", false, "test only the models whose version differs from --state's, and what reads them (the selector changed+); with a target as --state, also diff the changed models' data there (a sample of partitions, as refill diff --sample 3)")
	c.Flags().StringVar(&state, "state", "", "what --changed compares with: git:REF (the project's files at a git revision; needs no warehouse) or a target (the versions its ledger records)")
	c.ValidArgsFunction = a.completeModels
	return c
}

// loadProjectFS loads the project for refill test, with its folder.
func (a *app) loadProjectFS() (*models.Project, fs.FS, error) {
	p, dir, err := a.loadProject()
	if err != nil {
		return nil, nil, err
	}
	return p, os.DirFS(dir), nil
}

// printChecks prints the report of refill test: a line per check (passed
// ones left out with --quiet) and the counts.
func (a *app) printChecks(w io.Writer, checks []check.Result, elapsed time.Duration) {
	color := a.color()
	paint := func(s check.Status) string {
		code := map[check.Status]string{check.Passed: "32", check.Failed: "31", check.Skipped: "33", check.NotRun: "31"}[s]
		text := fmt.Sprintf("%-7s", s)
		if !color {
			return text
		}
		return "\x1b[" + code + "m" + text + "\x1b[0m"
	}
	counts := map[check.Status]int{}
	for _, c := range checks {
		counts[c.Status]++
		if c.Status == check.Passed && a.quiet {
			continue
		}
		msg := c.Message
		fmt.Fprintf(w, "%s  %-8s  %s", paint(c.Status), c.Suite, c.Name)
		if msg != "" && !strings.Contains(msg, "\n") && len(msg) < 100 && c.Status == check.Passed {
			fmt.Fprintf(w, "  (%s)", msg)
		} else if msg != "" {
			fmt.Fprintf(w, "\n        %s", strings.ReplaceAll(a.redact(msg), "\n", "\n        "))
		}
		fmt.Fprintln(w)
	}
	notRun := ""
	if n := counts[check.NotRun]; n > 0 {
		notRun = fmt.Sprintf(", %d not run", n)
	}
	fmt.Fprintf(w, "\n%d checks: %d passed, %d failed, %d skipped%s in %s\n", len(checks), counts[check.Passed], counts[check.Failed],
		counts[check.Skipped], notRun, elapsed.Round(10*time.Millisecond))
}

// diffChanged prints, after refill test --changed --state TARGET, the data
// diff on target of the models that changed (ch; refill diff changed
// --sample 3 --target TARGET): what merging the change would do there.
func (a *app) diffChanged(target string, ch *changes, now time.Time) error {
	if ch == nil || len(ch.names) == 0 {
		return nil
	}
	changed, since := ch.names, ch.since
	saved := a.target
	a.target = target
	defer func() { a.target = saved }()
	sel := plan.Selection{Select: changed, Mode: plan.ModeAll, AllowMissingUpstream: true, Now: now}
	if sel.Now.IsZero() {
		sel.Now = time.Now().UTC()
	}
	s, err := a.session(readOnly, false, "refill test", &sel)
	if err != nil {
		return err
	}
	defer s.close()
	pl, err := s.plan(sel)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\nWhat the models changed since %s do to target %s's data (a sample of partitions):\n", since, target)
	report, text := &diffReport{}, &diffText{w: a.stdout}
	_, err = s.runner.Diff(a.ctx, pl, runner.DiffOptions{Examples: 1, Sample: 3, Observe: func(d runner.PartitionDiff) {
		report.add(d)
		text.partition(d)
	}})
	text.close()
	if err != nil {
		return exitf(exitWarehouse, "diffing on target %s: %v", target, err)
	}
	report.print(a.stdout)
	return nil
}
