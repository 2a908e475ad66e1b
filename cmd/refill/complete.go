package main

import (
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
)

// Shell completion of the project's names: models and tags where commands
// take MODEL selectors, targets for --target, partition keys for
// --partition and --partitions. It reads the project's files only, never
// the warehouse, and completes nothing when the project does not load.

// maxCompletions bounds the candidates of one completion (an hourly model
// has tens of thousands of keys; the shell filters the rest by prefix).
const maxCompletions = 500

// completeModels completes MODEL selectors: model names, then tag:NAME.
func (a *app) completeModels(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p, _, err := a.loadProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	tags := map[string]bool{}
	for _, m := range p.Models {
		out = append(out, m.Name)
		for _, t := range m.Config.Tags {
			tags[t] = true
		}
	}
	for t := range tags {
		out = append(out, "tag:"+t)
	}
	return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeTargets completes --target.
func (a *app) completeTargets(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p, _, err := a.loadProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(p.TargetNames(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeKeys completes partition keys of the models the command names
// (its MODEL arguments; every model when none), newest first: a
// comma-separated flag completes its last key.
func (a *app) completeKeys(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p, _, err := a.loadProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	prefix, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	ms := p.Models
	if len(args) > 0 {
		if sel, err := p.Select(args, nil); err == nil {
			ms = sel
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for _, key := range partitionKeys(m, time.Now()) {
			if strings.HasPrefix(key, last) && !seen[key] {
				seen[key] = true
				out = append(out, prefix+key)
			}
			if len(out) == maxCompletions {
				return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// partitionKeys lists m's partition keys, the newest complete first.
func partitionKeys(m *models.Model, now time.Time) []string {
	var parts []models.Partition
	switch m.Kind() {
	case models.TimePartitioned:
		last, ok := m.LastComplete(now)
		if !ok {
			return nil
		}
		parts = m.Partitions(m.Config.Start, last)
		slices.Reverse(parts)
	default:
		parts = m.Partitions(time.Time{}, time.Time{})
	}
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = p.Key
	}
	return keys
}

// matching returns the candidates that start with prefix, sorted.
func matching(candidates []string, prefix string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// completeSelection completes the MODEL arguments and the selection flags
// of c (see selectionFlags).
func (a *app) completeSelection(c *cobra.Command) {
	c.ValidArgsFunction = a.completeModels
	for _, name := range []string{"select", "exclude"} {
		c.RegisterFlagCompletionFunc(name, a.completeModels)
	}
	for _, name := range []string{"partitions", "from", "to"} {
		c.RegisterFlagCompletionFunc(name, a.completeKeys)
	}
}
