package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
)

func (a *app) renderCommand() *cobra.Command {
	var partition string
	c := &cobra.Command{
		Use:   "render MODEL [--partition KEY]",
		Short: "Print a model's SQL as it runs for one partition",
		Long: `Render prints the SELECT refill computes for one partition of MODEL, in the
dialect of the target (--target), with start, end, ref(), source() and var()
filled in. It needs no connection. Several keys (--partition K1,K2) render
consecutive partitions as one batch statement.`,
		Example: `  refill render marts.daily_revenue --partition 2024-01-02
  refill render marts.daily_revenue --partition 2024-01-02 --target prod
  refill render marts.revenue_by_region --partition eu`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("render takes exactly one MODEL")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			s, err := a.session(readOnly, true, "", nil)
			if err != nil {
				return err
			}
			m, err := s.project.Model(args[0])
			if err != nil {
				if b := s.project.BrokenModel(args[0]); b != nil || s.broken != nil && strings.Contains(err.Error(), "unknown model") {
					return s.broken
				}
				return usageError{err}
			}
			if err := s.project.Unset(m); err != nil {
				return err
			}
			parts, err := renderPartitions(m, partition)
			if err != nil {
				return err
			}
			sql, err := m.Render(s.scope, parts...)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "-- %s, partition %s, target %s (%s)\n%s\n", m.Name, keysOf(parts), s.target.Name, s.info.Name, sql)
			return nil
		},
	}
	c.Flags().StringVarP(&partition, "partition", "p", "", "partition key (a date, week, month, list value...); comma-separate several for a batch")
	c.ValidArgsFunction = a.completeModels
	c.RegisterFlagCompletionFunc("partition", a.completeKeys)
	return c
}

func renderPartitions(m *models.Model, keys string) ([]models.Partition, error) {
	if keys == "" {
		if m.Kind() == models.WholeTable {
			return []models.Partition{{Key: models.WholeTableKey}}, nil
		}
		example := "eu"
		if m.Kind() == models.TimePartitioned {
			example = m.Config.Grain.Key(m.Config.Start)
		} else if len(m.Config.Values) > 0 {
			example = fmt.Sprint(m.Config.Values[0])
		}
		return nil, usagef("%s is partitioned: pass --partition, e.g. --partition %s", m.Name, example)
	}
	var parts []models.Partition
	for _, k := range strings.Split(keys, ",") {
		p, err := m.Partition(strings.TrimSpace(k))
		if err != nil {
			return nil, usagef("--partition: %v", err)
		}
		if n := len(parts); n > 0 && !parts[n-1].End.Equal(p.Start) {
			return nil, usagef("--partition: a batch needs consecutive partitions, and %s does not follow %s", p.Key, parts[n-1].Key)
		}
		parts = append(parts, p)
	}
	if len(parts) > 1 && runner.BatchSize(m, len(parts)) == 1 {
		return nil, usagef("--partition: %s declares no batch:, so run never renders several of its partitions as one statement; render them one at a time", m.Name)
	}
	return parts, nil
}

func keysOf(parts []models.Partition) string {
	return models.KeyRange(parts[0].Key, parts[len(parts)-1].Key)
}
