package main

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/check"
	"github.com/refill/refill/runner/plan"
)

func (a *app) validateCommand() *cobra.Command {
	var connect bool
	c := &cobra.Command{
		Use:   "validate",
		Short: "Parse and check every model and the project config; list all errors",
		Long: `Validate loads refill.yml and every model, checks config keys, templates,
ref() and var() names, and the dependency graph, parses every model's SQL
(rendered for its first partition) with DuckDB's parser when a target uses
DuckDB, and prints every problem with its file:line:col. It exits 2 if there is
any, 0 otherwise. Environment variables are required for the selected target
only (--target, or the project's target:): another target whose variables are
unset is noted as not configured, and every check that does not depend on
them still runs.

Without --connect it never connects to a warehouse. With --connect, once the
files are clean, it asks the selected target's warehouse for the columns of
every model's query (DESCRIBE, or the warehouse's equivalent; nothing runs and
nothing is written), so what only the warehouse knows, an unknown column,
function or table, or a type error, is reported at the model file's line. A
model that reads another the warehouse does not hold yet is noted, not
checked.`,
		Example: `  refill validate
  refill validate --target prod
  refill validate --connect --target prod`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			p, _, err := a.loadProject()
			var list models.ErrorList
			if err != nil && !errors.As(err, &list) {
				return err
			}
			var errs models.ErrorList
			var notes []string
			errs = append(errs, list...)
			if p != nil {
				var unset models.ErrorList
				if errors.As(p.Unset(), &unset) {
					errs = append(errs, unset...)
				}
				seen := map[string]bool{}
				selected := cmp.Or(a.target, p.DefaultTarget)
				for _, name := range p.TargetNames() {
					t := p.Targets[name]
					if unset := t.Unset(); len(unset) > 0 && name != selected {
						notes = append(notes, fmt.Sprintf("target %s is not configured here: %s %s unset; what depends on %s was not checked",
							name, strings.Join(unset, ", "), isAre(len(unset)), itThem(len(unset))))
					}
					err := checkProject(p, t)
					var list models.ErrorList
					var me *models.Error
					switch {
					case errors.As(err, &list):
					case errors.As(err, &me):
						list = models.ErrorList{me}
					}
					for _, e := range list {
						if k := e.Error(); !seen[k] {
							seen[k] = true
							errs = append(errs, e)
						}
					}
				}
				errs = append(errs, a.parseModels(p, selected)...)
				if connect && len(errs) == 0 {
					connected, connectNotes, err := a.describeModels()
					if err != nil {
						return err
					}
					errs, notes = append(errs, connected...), append(notes, connectNotes...)
				}
				if _, err := p.Target(a.target); err != nil {
					var tl models.ErrorList
					if errors.As(err, &tl) {
						errs = append(errs, tl...)
					} else {
						errs = append(errs, &models.Error{File: models.ProjectFile, Msg: err.Error()})
					}
				}
			}
			for _, n := range notes {
				fmt.Fprintf(a.stdout, "note: %s\n", n)
			}
			if p != nil {
				for _, w := range p.Warnings() {
					fmt.Fprintf(a.stdout, "warning: %s\n", indentAfterFirst(w.Error()))
				}
			}
			if err := errs.Err(); err != nil {
				a.silent = true
				fmt.Fprintln(a.stderr, indentAfterFirst(err.Error()))
				fmt.Fprintf(a.stderr, "\n%d problem(s) found.\n", len(errs))
				return err
			}
			fmt.Fprintf(a.stdout, "OK: %s, %s.\n", plan.Plural(len(p.Models), "model"), plan.Plural(len(p.Targets), "target"))
			return nil
		},
	}
	c.Flags().BoolVar(&connect, "connect", false, "also have the selected target's warehouse bind every model's query (nothing runs)")
	return c
}

// describeModels connects to the selected target and has its warehouse
// describe every model's query (check.DescribeModels).
func (a *app) describeModels() (models.ErrorList, []string, error) {
	s, err := a.session(readOnly, false, "refill validate", nil)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	found, unchecked := check.DescribeModels(a.ctx, s.adapter, s.project, s.scope)
	errs, err := atModels(found)
	if err != nil {
		return nil, nil, exitf(exitWarehouse, "target %s: %v", s.target.Name, err)
	}
	var notes []string
	for _, m := range s.project.Models {
		if ups, ok := unchecked[m.Name]; ok {
			notes = append(notes, fmt.Sprintf("%s was not checked against target %s: it reads %s, which the warehouse does not hold yet (run it first)",
				m.Name, s.target.Name, ups))
		}
	}
	return errs, notes, nil
}

// parseModels parses every model of p rendered for its first partition
// with the offline parser of a target's dialect: the selected target's,
// else the first that has one (DuckDB's; ClickHouse and Snowflake have
// none that works without a connection).
func (a *app) parseModels(p *models.Project, selected string) models.ErrorList {
	names := append([]string{selected}, p.TargetNames()...)
	for _, name := range names {
		t := p.Targets[name]
		if t == nil {
			continue
		}
		e, err := checkTarget(t)
		if err != nil || e.Parser == nil {
			continue
		}
		parser, err := e.Parser()
		if err != nil {
			return models.ErrorList{{File: models.ProjectFile, Msg: fmt.Sprintf("opening the parser of target %s: %v", name, err)}}
		}
		defer parser.Close()
		d, schema := e.Dialect(t)
		out, err := atModels(check.ParseModels(a.ctx, p, &models.Scope{Dialect: d, Schema: schema, Vars: p.Vars, Target: name}, parser.Parse))
		if err != nil {
			out = append(out, &models.Error{File: models.ProjectFile, Msg: fmt.Sprintf("parsing with the parser of target %s: %v", name, err)})
		}
		return out
	}
	return nil
}

// atModels returns the errors of check.ParseModels or DescribeModels,
// each at a model's file (and line, where the warehouse said where);
// err is the first error that is at none, such as a lost connection.
func atModels(found []error) (list models.ErrorList, err error) {
	for _, e := range found {
		var we *models.WarehouseError
		var me *models.Error
		switch {
		case errors.As(e, &we):
			at := we.At
			list = append(list, &at)
		case errors.As(e, &me):
			list = append(list, me)
		default:
			return list, e
		}
	}
	return list, nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
