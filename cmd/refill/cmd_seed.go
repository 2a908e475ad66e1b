package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/refill/refill/adapters"
)

func (a *app) seedCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "seed [TABLE...]",
		Short: "Load the project's seeds/*.csv files into tables",
		Long: `Seed loads every CSV file under the project's seeds folder into a table named
after its path: seeds/raw/orders.csv becomes raw.orders, seeds/regions.csv the
target's default schema's regions. Column types are inferred from the values
(boolean, bigint, double, date, timestamp, varchar). Each table is replaced as
a whole, in one transaction on DuckDB and Snowflake; on ClickHouse the new table
is built beside the old one and renamed into place.`,
		Example: `  refill seed
  refill seed raw.orders`,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := a.openForRun(0, nil)
			if err != nil {
				return err
			}
			defer s.close()
			seeds, err := s.project.LoadSeeds(os.DirFS(s.dir))
			if err != nil {
				return err
			}
			want := map[string]bool{}
			for _, n := range args {
				want[n] = true
			}
			loaded := 0
			for _, seed := range seeds {
				if len(args) > 0 && !want[seed.Relation.String()] {
					continue
				}
				if err := adapters.LoadSeed(a.ctx, s.adapter, seed, seed.Relation); err != nil {
					return exitf(exitWarehouse, "seed %s (%s): %v", seed.Relation, seed.Path, err)
				}
				loaded++
				if !a.quiet {
					fmt.Fprintf(a.stdout, "loaded %s from %s (%d rows)\n", seed.Relation, seed.Path, len(seed.Rows))
				}
			}
			if len(args) > 0 && loaded < len(args) {
				return usagef("no seed file for some of %v under %s/", args, s.project.SeedsDir)
			}
			if loaded == 0 && !a.quiet {
				fmt.Fprintf(a.stdout, "no seeds under %s/\n", s.project.SeedsDir)
			}
			return nil
		},
	}
}
