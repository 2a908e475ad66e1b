package main

import (
	"strings"

	"github.com/refill/refill/runner/plan"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// selectionFlags are the flags plan, run and status share.
type selectionFlags struct {
	selects    []string
	excludes   []string
	from, to   string
	partitions []string
	mode       string
	lookback   int
	now        string
	state      string
	deferTo    string
	output     string
	offline    bool
	// For plan and run, which plans what run would do with them.
	fullRefresh, allowMissing bool

	flags *pflag.FlagSet // the command's, to tell a flag given from its default
}

func (f *selectionFlags) register(c *cobra.Command, withMode bool) {
	fl := c.Flags()
	f.flags = fl
	fl.StringArrayVarP(&f.selects, "select", "s", nil, "models to select (as positional MODEL arguments; repeatable)")
	fl.StringArrayVar(&f.excludes, "exclude", nil, "models to leave out, in the same syntax (repeatable)")
	fl.StringVar(&f.from, "from", "", "first partition: a key or date, inclusive (default: each model's start)")
	fl.StringVar(&f.to, "to", "", "last partition: a key or date, inclusive (default: the last complete one)")
	fl.StringSliceVar(&f.partitions, "partitions", nil, "exactly these partitions, comma-separated keys or dates")
	fl.StringVar(&f.now, "now", "", "pin the clock (RFC 3339 or a date) that decides which partitions are complete")
	if withMode {
		fl.StringVar(&f.mode, "mode", "", "which partitions in range: stale (default: missing, failed and stale), all, missing or failed")
		fl.IntVar(&f.lookback, "lookback", 0, "rerun the last N complete partitions of each model (overrides lookback: in the models)")
		fl.BoolVar(&f.allowMissing, "allow-missing-upstream", false, "run partitions whose upstream partitions are missing, failed or incomplete, instead of blocking them")
		fl.BoolVar(&f.fullRefresh, "full-refresh", false, "rebuild the selected models' whole tables: every partition into a new table, swapped in at once")
	}
}

// registerState adds --state, for the commands that take the changed
// selector.
func (f *selectionFlags) registerState(c *cobra.Command) {
	c.Flags().StringVar(&f.state, "state", "", "what the changed selector compares with: a target (the versions its ledger records; default the command's) or git:REF (the project's files at a git revision)")
}

// registerDefer adds --defer, for the commands that read upstream tables.
func (f *selectionFlags) registerDefer(c *cobra.Command) {
	c.Flags().StringVar(&f.deferTo, "defer", "", "read the models the selection does not build from target `TARGET`'s tables (same engine), as its ledger records them: build or diff a change on production's data")
}

// selectionOf converts the flags and positional selectors, the changed
// selector resolved against --state; nothing reports that the selection
// named only the changed models, and none changed.
func (a *app) selectionOf(f *selectionFlags, args []string) (sel plan.Selection, nothing bool, err error) {
	if sel, err = f.selection(args); err != nil {
		return sel, false, err
	}
	_, nothing, err = a.resolveChanged(&sel, f.state)
	return sel, nothing, err
}

// selection converts the flags and positional selectors.
func (f *selectionFlags) selection(args []string) (plan.Selection, error) {
	mode, err := plan.ParseMode(f.mode)
	if err != nil {
		return plan.Selection{}, err
	}
	now, err := parseNow(f.now)
	if err != nil {
		return plan.Selection{}, err
	}
	sel := plan.Selection{
		Select: append(append([]string{}, args...), f.selects...), Exclude: f.excludes,
		From: strings.TrimSpace(f.from), To: strings.TrimSpace(f.to), Partitions: f.partitions, Mode: mode, Now: now,
		FullRefresh: f.fullRefresh, AllowMissingUpstream: f.allowMissing,
	}
	if f.flags != nil && f.flags.Changed("lookback") {
		if f.lookback < 0 {
			return plan.Selection{}, usagef("--lookback %d: want 0 or more partitions", f.lookback)
		}
		n := f.lookback
		sel.Lookback = &n
	}
	return sel, nil
}

const selectorHelp = `MODEL selectors (positional, or --select) are model names (marts.daily_revenue,
or daily_revenue when unambiguous), path globs under models/ (marts/*), tag:NAME,
changed (the models whose version differs from --state's: a target's ledger,
by default the command's target, or git:REF), and any of those with + before
(also upstream) or after (also downstream).
Several selectors, or one with spaces or commas, select the union.

--from and --to take partition keys (2024-01-02, 2024-W01, 2024-01, 2024,
2024-01-02T13) or dates, and select, in every model, the partitions they
overlap: --from 2024-01 --to 2024-03 is January through March at any grain.`
