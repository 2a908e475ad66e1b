package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/cmd/refill/internal/statuspage"
	"github.com/refill/refill/runner/plan"

	"github.com/spf13/cobra"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
)

func (a *app) statusCommand() *cobra.Command {
	var f selectionFlags
	var list, diff bool
	var html string
	c := &cobra.Command{
		Use:   "status [MODEL...]",
		Short: "Show each model's partitions and their state: done, missing, stale or failed",
		Long: `Status compares the ledger with the models and draws, for every selected model,
a strip of its partitions from start through the last complete one: one mark per
partition (or per group of partitions when there are many, showing the worst
state in the group). On a terminal the marks are colored; otherwise they are
letters: d done, s stale, m missing, f failed.

--list prints every partition with its rows, run id, finish time and error.
--html also writes a standalone page to diagnose a backfill with: what needs
attention (failures grouped by error, blocked partitions by what they wait
for, stale ones by reason), the recent runs, and a calendar of each model's
partitions. With --diff the page also shows, for each model whose SQL changed
since partitions were built, what the change does to their data: refill diff
of a few of them, spread over the range.

` + selectorHelp,
		Example: `  refill status
  refill status marts/* --from 2024-01
  refill status staging.orders --list
  refill status --output json
  refill status --html status.html
  refill status --html status.html --diff`,
		RunE: func(c *cobra.Command, args []string) error {
			if f.output != "text" && f.output != "json" {
				return usagef("--output %q: want text or json", f.output)
			}
			if diff && html == "" {
				return usagef("--diff adds a section to the page --html writes")
			}
			sel, err := f.selection(args)
			if err != nil {
				return err
			}
			s, err := a.session(readOnly, false, "refill status", nil)
			if err != nil {
				return err
			}
			defer s.close()
			// Status always works: broken models are listed, not read.
			sel.Select = slices.DeleteFunc(sel.Select, func(sl string) bool {
				return slices.ContainsFunc(s.project.Broken, func(b *models.BrokenModel) bool { return selectsBroken(s.project, b, strings.Trim(sl, "+")) })
			})
			facts, err := s.runner.Facts(a.ctx, sel)
			if err != nil {
				if errors.Is(err, plan.ErrUsage) {
					return err
				}
				return exitf(exitWarehouse, "target %s: reading the ledger: %v", s.target.Name, err)
			}
			st, err := plan.NewStatusFacts(s.project, s.scope, *facts, sel)
			if err != nil {
				return err
			}
			n := recentRuns
			if html != "" {
				n = statuspage.Runs
			}
			runs, err := s.runner.RecentRuns(a.ctx, n)
			if err != nil {
				return exitf(exitWarehouse, "target %s: reading runs: %v", s.target.Name, err)
			}
			orphans, err := s.runner.Orphans(a.ctx)
			if err != nil {
				return exitf(exitWarehouse, "target %s: %v", s.target.Name, err)
			}
			if html != "" {
				page := a.statusHTML(s, st, facts, sel, runs, orphans)
				if diff {
					if page.Changes, err = a.statusChanges(s, st); err != nil {
						return err
					}
				}
				if err := statuspage.Write(html, page); err != nil {
					return err
				}
				runs = runs[:min(len(runs), recentRuns)]
			}
			if f.output == "json" {
				out := statusJSON(st)
				out["runs"] = runsJSON(runs)
				out["removed_models"] = orphansJSON(orphans)
				out["broken_models"] = brokenJSON(s.project.Broken)
				return writeJSON(a.stdout, out)
			}
			a.printStatus(a.stdout, s, st, sel.Now, list)
			printBroken(a.stdout, s.project.Broken)
			printOrphans(a.stdout, orphans)
			a.printRuns(a.stdout, runs)
			if html != "" {
				fmt.Fprintf(a.stdout, "\nWrote %s\n", html)
			}
			return nil
		},
	}
	f.register(c, false)
	a.completeSelection(c)
	c.Flags().StringVarP(&f.output, "output", "o", "text", "text or json")
	c.Flags().BoolVarP(&list, "list", "l", false, "list every partition with rows, run id, finish time and error")
	c.Flags().StringVar(&html, "html", "", "also write the status as a standalone HTML page to `FILE`")
	c.Flags().BoolVar(&diff, "diff", false, "with --html: diff a few partitions of each model whose SQL changed since they were built (as refill diff)")
	return c
}

// printBroken lists the models the project loaded without, with why.
func printBroken(w io.Writer, broken []*models.BrokenModel) {
	if len(broken) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s (left out of every command; fix the file, refill validate lists every error):\n", plan.Plural(len(broken), "broken model"))
	for _, b := range broken {
		fmt.Fprintf(w, "  %-*s  broken  %s\n", modelWidth(broken), b.Name, b.Why())
	}
}

func modelWidth(broken []*models.BrokenModel) int {
	n := 0
	for _, b := range broken {
		n = max(n, len(b.Name))
	}
	return n
}

type brokenModelJSON struct {
	Model string `json:"model"`
	Path  string `json:"path"`
	Error string `json:"error"`
}

func brokenJSON(broken []*models.BrokenModel) []brokenModelJSON {
	out := []brokenModelJSON{}
	for _, b := range broken {
		msg := b.Why()
		if len(b.Errs) > 0 {
			msg = b.Errs.Error()
		}
		out = append(out, brokenModelJSON{Model: b.Name, Path: b.Path, Error: msg})
	}
	return out
}

type statusPartitionJSON struct {
	Partition  string  `json:"partition"`
	State      string  `json:"state"`
	Rows       *int64  `json:"rows"`
	RunID      *string `json:"run_id"`
	FinishedAt *string `json:"finished_at"`
	Error      *string `json:"error,omitempty"`
	Detail     string  `json:"detail,omitempty"`
	// Horizon and AsOf, for a whole-table or list partition built from
	// time-partitioned models: the end of the upstream time it read, and
	// the last upstream partition before it.
	Horizon *string `json:"horizon,omitempty"`
	AsOf    string  `json:"as_of,omitempty"`
}

type statusModelJSON struct {
	Model      string                `json:"model"`
	Kind       string                `json:"kind"`
	Counts     map[string]int        `json:"counts"`
	Partitions []statusPartitionJSON `json:"partitions"`
}

func statusJSON(st []plan.ModelStatus) map[string]any {
	out := []statusModelJSON{}
	for _, ms := range st {
		mj := statusModelJSON{Model: ms.Model.Name, Kind: ms.Model.Kind().String(), Counts: map[string]int{}, Partitions: []statusPartitionJSON{}}
		for _, state := range statusStates {
			mj.Counts[string(state)] = ms.Counts[state]
		}
		for _, ps := range ms.Partitions {
			pj := statusPartitionJSON{Partition: ps.Partition.Key, State: string(ps.State), Detail: ps.Detail,
				Horizon: timeJSON(ps.Horizon), AsOf: ms.Model.AsOf(ps.Horizon)}
			if r := ps.Record; r != nil {
				rows, run := r.Rows, r.RunID
				pj.Rows, pj.RunID, pj.FinishedAt = &rows, &run, timeJSON(r.FinishedAt)
				if r.Error != "" {
					e := r.Error
					pj.Error = &e
				}
			}
			mj.Partitions = append(mj.Partitions, pj)
		}
		out = append(out, mj)
	}
	return map[string]any{"models": out}
}

// recentRuns is how many runs status shows.
const recentRuns = 5

type runJSONRecord struct {
	RunID      string  `json:"run_id"`
	Status     string  `json:"status"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Succeeded  int     `json:"succeeded"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	Host       string  `json:"host"`
	PID        int     `json:"pid"`
}

func runsJSON(runs []*adapters.Run) []runJSONRecord {
	out := []runJSONRecord{}
	for _, r := range runs {
		out = append(out, runJSONRecord{RunID: r.ID, Status: string(r.Status), StartedAt: timeJSON(r.StartedAt), FinishedAt: timeJSON(r.FinishedAt),
			Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped, Host: r.Host, PID: r.PID})
	}
	return out
}

func (a *app) printRuns(w io.Writer, runs []*adapters.Run) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRecent runs:")
	tw := newTable(w, "RUN", "STATUS", "STARTED", "TOOK", "SUCCEEDED", "FAILED", "SKIPPED")
	for _, r := range runs {
		took := "-"
		if !r.FinishedAt.IsZero() {
			took = r.FinishedAt.Sub(r.StartedAt).Round(time.Second).String()
		}
		tw.row(r.ID, string(r.Status), r.StartedAt.UTC().Format("2006-01-02 15:04:05"), took,
			fmt.Sprint(r.Succeeded), fmt.Sprint(r.Failed), fmt.Sprint(r.Skipped))
	}
	tw.flush()
}

// stripWidth is the most marks a status strip has.
const stripWidth = 60

// statusStates are the states status counts, in the order it prints them.
var statusStates = []plan.State{plan.StateDone, plan.StatePartial, plan.StateStale, plan.StateDrift,
	plan.StateMissing, plan.StatePending, plan.StateFailed, plan.StateOutside}

// severity orders states for grouping: a group shows its worst.
var severity = map[plan.State]int{plan.StateDone: 0, plan.StatePartial: 1, plan.StateMissing: 2, plan.StateStale: 3,
	plan.StateOutside: 3, plan.StateDrift: 4, plan.StatePending: 5, plan.StateFailed: 6}

var marks = map[plan.State]struct{ letter, color string }{
	plan.StateDone:    {"d", "32"},
	plan.StatePartial: {"p", "36"},
	plan.StateStale:   {"s", "33"},
	plan.StateDrift:   {"x", "35"},
	plan.StateMissing: {"m", "90"},
	plan.StatePending: {"?", "35"},
	plan.StateFailed:  {"f", "31"},
	plan.StateOutside: {"o", "35"},
}

// strip draws a model's partitions as at most stripWidth marks, and returns
// how many partitions each mark stands for.
func strip(ps []plan.PartitionStatus, color bool) (string, int) {
	if len(ps) == 0 {
		return "", 1
	}
	per := (len(ps) + stripWidth - 1) / stripWidth
	var b strings.Builder
	for i := 0; i < len(ps); i += per {
		worst := ps[i].State
		for _, p := range ps[i:min(i+per, len(ps))] {
			if severity[p.State] > severity[worst] {
				worst = p.State
			}
		}
		m := marks[worst]
		if color {
			b.WriteString("\x1b[" + m.color + "m█\x1b[0m")
		} else {
			b.WriteString(m.letter)
		}
	}
	return b.String(), per
}

func (a *app) printStatus(w io.Writer, s *session, st []plan.ModelStatus, now time.Time, list bool) {
	color := a.color()
	fmt.Fprintf(w, "Status of target %s (%s) at %s\n\n", s.target.Name, s.info.Name, now.UTC().Format("2006-01-02 15:04 UTC"))
	// Columns for the states any model has, beyond the four always shown.
	shown := []plan.State{}
	for _, state := range statusStates {
		always := state == plan.StateDone || state == plan.StateStale || state == plan.StateMissing || state == plan.StateFailed
		any := false
		for _, ms := range st {
			any = any || ms.Counts[state] > 0
		}
		if always || any {
			shown = append(shown, state)
		}
	}
	header := []string{"MODEL", "PARTITIONS", "RANGE"}
	for _, state := range shown {
		header = append(header, strings.ToUpper(string(state)))
	}
	tw := newTable(w, append(header, "PICTURE")...)
	maxPer := 1
	for _, ms := range st {
		picture, per := strip(ms.Partitions, color)
		maxPer = max(maxPer, per)
		row := []string{ms.Model.Name, statuspage.PartitionsLabel(ms), statuspage.RangeLabel(ms)}
		for _, state := range shown {
			row = append(row, fmt.Sprint(ms.Counts[state]))
		}
		tw.row(append(row, picture)...)
	}
	tw.flush()
	var legends []string
	for _, state := range shown {
		if color {
			legends = append(legends, fmt.Sprintf("\x1b[%sm█\x1b[0m %s", marks[state].color, state))
		} else {
			legends = append(legends, marks[state].letter+" "+string(state))
		}
	}
	legend := strings.Join(legends, ", ")
	if maxPer > 1 {
		legend += "; long strips show the worst state of each group of partitions"
	}
	fmt.Fprintf(w, "\n  %s\n", legend)
	if !list {
		return
	}
	for _, ms := range st {
		fmt.Fprintf(w, "\n%s\n", ms.Model.Name)
		tl := newTable(w, "PARTITION", "STATE", "ROWS", "RUN", "FINISHED", "DETAIL")
		for _, ps := range ms.Partitions {
			rows, run, fin := "", "", ""
			if r := ps.Record; r != nil {
				rows, run = fmt.Sprint(r.Rows), r.RunID
				fin = r.FinishedAt.UTC().Format("2006-01-02 15:04:05")
			}
			tl.row(ps.Partition.Key, string(ps.State), rows, run, fin, a.redact(firstLine(ps.Detail)))
		}
		tl.flush()
	}
}

type orphanJSON struct {
	Model      string  `json:"model"`
	Table      string  `json:"table"`
	Partitions int     `json:"partitions"`
	LastRun    string  `json:"last_run"`
	FinishedAt *string `json:"finished_at"`
}

func orphansJSON(orphans []runner.Orphan) []orphanJSON {
	out := []orphanJSON{}
	for _, o := range orphans {
		out = append(out, orphanJSON{Model: o.Name, Table: o.Table.String(), Partitions: o.Partitions, LastRun: o.LastRun, FinishedAt: timeJSON(o.LastFinished)})
	}
	return out
}

// printOrphans lists the ledger's models the project no longer has.
func printOrphans(w io.Writer, orphans []runner.Orphan) {
	if len(orphans) == 0 {
		return
	}
	fmt.Fprintln(w, "\nIn the ledger, no longer in the project (refill prune MODEL drops the table and records it removed):")
	tw := newTable(w, "MODEL", "TABLE", "PARTITIONS", "LAST RUN", "FINISHED")
	for _, o := range orphans {
		tw.row(o.Name, o.Table.String(), fmt.Sprint(o.Partitions), o.LastRun, o.LastFinished.UTC().Format("2006-01-02 15:04"))
	}
	tw.flush()
}
