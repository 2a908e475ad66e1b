package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

func (a *app) acceptCommand() *cobra.Command {
	var f selectionFlags
	var yes bool
	var wait time.Duration
	c := &cobra.Command{
		Use:   "accept MODEL...",
		Short: "Accept a model's new SQL for the partitions already built, without recomputing them",
		Long: `Accept makes the current version of each selected model the version of its
partitions in range that an earlier version built, without recomputing them: a
forward-only change. Use it for a change that must not rewrite history (a new
rule that applies from today) or that does not change the data (a rename the
fingerprint notices). The ledger records the new fingerprint for those
partitions, so they are no longer stale; partitions built from now on use the
new SQL; pl notes the acceptance. Partitions stale because an upstream
partition was republished, or that failed, are not accepted: run them.
Without --yes it shows the changes and asks on a terminal; elsewhere it needs
--yes.

refill pl --explain shows what changed before you accept it.

` + selectorHelp,
		Example: `  refill plan marts.daily_revenue --explain
  refill accept marts.daily_revenue --yes
  refill accept marts.daily_revenue --from 2024-01 --to 2024-06 --yes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			sel, err := f.selection(args)
			if err != nil {
				return err
			}
			s, err := a.openForRun(0, nil)
			if err != nil {
				return err
			}
			defer s.close()
			if !yes {
				changes, err := s.runner.Explain(a.ctx, mustPlanStale(s, sel))
				if err != nil {
					return exitf(exitWarehouse, "reading model versions: %v", err)
				}
				printChanges(a.stdout, changes)
				if len(changes) == 0 {
					fmt.Fprintln(a.stdout, "Nothing to accept: no partition in range was built by an earlier version of these models.")
					return nil
				}
				if !isTerminal(a.stdin) || !isTerminal(a.stdout) {
					return usagef("accept rewrites the ledger: pass --yes to accept these changes (it asks on a terminal)")
				}
				if !a.confirm("Accept these changes for the partitions already built?") {
					return exitf(exitUsage, "cancelled")
				}
			}
			id := runner.NewRunID(sel.Now)
			acc, err := s.runner.Accept(a.ctx, sel, id, wait, func(runner.Event) {})
			if err != nil {
				var held *adapters.LeaseHeldError
				if errors.As(err, &held) {
					return fmt.Errorf("%w\nNothing was accepted. Wait for that run to finish, or pass --wait DURATION", err)
				}
				return err
			}
			if len(acc) == 0 {
				fmt.Fprintln(a.stdout, "Nothing to accept: no partition in range was built by an earlier version of these models.")
				return nil
			}
			for _, x := range acc {
				fmt.Fprintf(a.stdout, "%s: %s built by version %s now carry version %s (forward-only).\n",
					x.Model.Name, plan.Plural(x.Partitions, "partition"), strings.Join(x.From, ", "), x.Model.Version(s.scope).Fingerprint)
			}
			fmt.Fprintf(a.stdout, "Recorded as run %s.\n", id)
			return nil
		},
	}
	f.register(c, false)
	a.completeSelection(c)
	c.Flags().BoolVarP(&yes, "yes", "y", false, "accept (without it, accept shows what it would accept)")
	c.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for tables another run holds (default: fail at once, exit 3)")
	return c
}

// mustPlanStale plans sel for accept's preview; errors leave it empty.
func mustPlanStale(s *session, sel plan.Selection) *plan.Plan {
	pl, err := s.plan(sel)
	if err != nil {
		return &plan.Plan{}
	}
	return pl
}
