package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func (a *app) manCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages for refill and every command into DIR",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("man takes exactly one DIR")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			header := &doc.GenManHeader{Title: "REFILL", Section: "1", Source: "refill", Manual: "refill manual"}
			if err := doc.GenManTree(c.Root(), header, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote man pages to %s\n", args[0])
			return nil
		},
	}
}
