package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

func (a *app) pruneCommand() *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "prune MODEL...",
		Short: "Drop the table and ledger records a deleted or renamed model left behind",
		Long: `Prune clears away what a model the project no longer has left in the target:
it drops the model's table (on a ClickHouse cluster, on every node, with its
shards' tables) and records its partitions removed in the ledger. refill status
lists such models. Prune refuses a model the project still has.

It shows what it would drop and asks on a terminal; elsewhere it needs --yes.`,
		Example: `  refill status                  # lists models the project no longer has
  refill prune marts.old_revenue --yes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := a.openForRun(0, nil)
			if err != nil {
				return err
			}
			defer s.close()
			orphans, err := s.runner.Orphans(a.ctx)
			if err != nil {
				return exitf(exitWarehouse, "target %s: %v", s.target.Name, err)
			}
			for _, name := range args {
				for _, o := range orphans {
					if o.Name == name {
						fmt.Fprintf(a.stdout, "%s: drop table %s, and record its %s removed (last built by run %s, %s)\n", o.Name, o.Table,
							plan.Plural(o.Partitions, "partition"), o.LastRun, o.LastFinished.UTC().Format("2006-01-02 15:04"))
					}
				}
			}
			if !yes {
				if !isTerminal(a.stdin) || !isTerminal(a.stdout) {
					return usagef("prune drops tables: pass --yes to prune (it asks on a terminal)")
				}
				if !a.confirm(fmt.Sprintf("Prune %s on %s?", plan.Plural(len(args), "model"), s.target.Name)) {
					return exitf(exitUsage, "cancelled")
				}
			}
			id := runner.NewRunID(time.Now())
			pruned, err := s.runner.Prune(a.ctx, args, id, func(runner.Event) {})
			if err != nil {
				return err
			}
			for _, o := range pruned {
				fmt.Fprintf(a.stdout, "Pruned %s: dropped %s, %s recorded removed.\n", o.Name, o.Table, plan.Plural(o.Partitions, "partition"))
			}
			fmt.Fprintf(a.stdout, "Recorded as run %s.\n", id)
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "prune without asking")
	return c
}
