package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
)

func (a *app) graphCommand() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "graph [MODEL...]",
		Short: "Show the dependency graph of the models (text, or Graphviz dot)",
		Long: `Graph prints every selected model in dependency order with the models and
sources it reads and the grain it is partitioned by. --output dot prints a
Graphviz graph: refill graph --output dot | dot -Tsvg > graph.svg`,
		Example: `  refill graph
  refill graph staging.orders+
  refill graph --output dot | dot -Tpng > graph.png`,
		RunE: func(c *cobra.Command, args []string) error {
			p, _, err := a.loadProject()
			if err != nil {
				return err
			}
			ms, err := p.Select(args, nil)
			if err != nil {
				return usageError{err}
			}
			switch output {
			case "text":
				printGraph(a.stdout, ms)
			case "dot":
				printDot(a.stdout, ms)
			default:
				return usagef("--output %q: want text or dot", output)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "text or dot")
	c.ValidArgsFunction = a.completeModels
	return c
}

func partitioning(m *models.Model) string {
	switch m.Kind() {
	case models.TimePartitioned:
		return fmt.Sprintf("%s by %s", m.Config.Grain, m.Config.PartitionBy)
	case models.ListPartitioned:
		return fmt.Sprintf("list by %s", m.Config.PartitionBy)
	}
	return "whole table"
}

func printGraph(w io.Writer, ms []*models.Model) {
	for _, m := range ms {
		fmt.Fprintf(w, "%s  (%s)  %s\n", m.Name, partitioning(m), m.Path)
		var reads []string
		for _, up := range m.Upstream {
			r := up.Name
			if n := m.DependsOnPast(up); n > 0 {
				r += fmt.Sprintf(" (and %d partitions back)", n)
			}
			reads = append(reads, r)
		}
		for _, s := range m.SQL.Source {
			reads = append(reads, "source "+s)
		}
		if len(reads) > 0 {
			fmt.Fprintf(w, "  <- %s\n", strings.Join(reads, ", "))
		}
	}
}

func printDot(w io.Writer, ms []*models.Model) {
	fmt.Fprintln(w, "digraph refill {\n  rankdir=LR;\n  node [shape=box, fontname=\"sans-serif\"];")
	selected := map[*models.Model]bool{}
	for _, m := range ms {
		selected[m] = true
	}
	sources := map[string]bool{}
	for _, m := range ms {
		fmt.Fprintf(w, "  %q [label=%q];\n", m.Name, m.Name+"\n"+partitioning(m))
		for _, up := range m.Upstream {
			if selected[up] {
				fmt.Fprintf(w, "  %q -> %q;\n", up.Name, m.Name)
			}
		}
		for _, s := range m.SQL.Source {
			if !sources[s] {
				sources[s] = true
				fmt.Fprintf(w, "  %q [shape=cylinder];\n", s)
			}
			fmt.Fprintf(w, "  %q -> %q;\n", s, m.Name)
		}
	}
	fmt.Fprintln(w, "}")
}
