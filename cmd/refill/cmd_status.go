package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/runner"
)

func (a *app) statusCommand() *cobra.Command {
	var f selectionFlags
	var list bool
	var html string
	c := &cobra.Command{
		Use:   "status [MODEL...]",
		Short: "Show each model's partitions and their state: done, missing, stale or failed",
		Long: `Status compares the ledger with the models and draws, for every selected model,
a strip of its partitions from start through the last complete one: one mark per
partition (or per group of partitions when there are many, showing the worst
state in the group). On a terminal the marks are colored; otherwise they are
letters: d done, s stale, m missing, f failed.

--list prints every partition with its rows, run id, finish time and error;
--html writes the same picture with those details as a standalone page.

` + selectorHelp,
		Example: `  refill status
  refill status marts/* --from 2024-01
  refill status staging.orders --list
  refill status --output json
  refill status --html status.html`,
		RunE: func(c *cobra.Command, args []string) error {
			if f.output != "text" && f.output != "json" {
				return usagef("--output %q: want text or json", f.output)
			}
			sel, err := f.selection(args)
			if err != nil {
				return err
			}
			s, err := a.session(readOnly, false, "refill status")
			if err != nil {
				return err
			}
			defer s.close()
			records, err := s.records()
			if err != nil {
				return err
			}
			st, err := runner.NewStatus(s.project, s.scope, records, sel)
			if err != nil {
				return err
			}
			if html != "" {
				if err := writeStatusHTML(html, s, st, sel.Now); err != nil {
					return err
				}
			}
			if f.output == "json" {
				return writeJSON(a.stdout, statusJSON(st))
			}
			a.printStatus(a.stdout, s, st, sel.Now, list)
			if html != "" {
				fmt.Fprintf(a.stdout, "\nWrote %s\n", html)
			}
			return nil
		},
	}
	f.register(c, false)
	c.Flags().StringVarP(&f.output, "output", "o", "text", "text or json")
	c.Flags().BoolVarP(&list, "list", "l", false, "list every partition with rows, run id, finish time and error")
	c.Flags().StringVar(&html, "html", "", "also write the status as a standalone HTML page to `FILE`")
	return c
}

type statusPartitionJSON struct {
	Partition  string  `json:"partition"`
	State      string  `json:"state"`
	Rows       *int64  `json:"rows"`
	RunID      *string `json:"run_id"`
	FinishedAt *string `json:"finished_at"`
	Error      *string `json:"error,omitempty"`
	Detail     string  `json:"detail,omitempty"`
}

type statusModelJSON struct {
	Model      string                `json:"model"`
	Kind       string                `json:"kind"`
	Counts     map[string]int        `json:"counts"`
	Partitions []statusPartitionJSON `json:"partitions"`
}

func statusJSON(st []runner.ModelStatus) map[string]any {
	out := []statusModelJSON{}
	for _, ms := range st {
		mj := statusModelJSON{Model: ms.Model.Name, Kind: ms.Model.Kind().String(), Counts: map[string]int{}, Partitions: []statusPartitionJSON{}}
		for _, state := range []runner.State{runner.StateDone, runner.StateStale, runner.StateMissing, runner.StateFailed} {
			mj.Counts[string(state)] = ms.Counts[state]
		}
		for _, ps := range ms.Partitions {
			pj := statusPartitionJSON{Partition: ps.Partition.Key, State: string(ps.State), Detail: ps.Detail}
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

// stripWidth is the most marks a status strip has.
const stripWidth = 60

// severity orders states for grouping: a group shows its worst.
var severity = map[runner.State]int{runner.StateDone: 0, runner.StateMissing: 1, runner.StateStale: 2, runner.StateFailed: 3}

var marks = map[runner.State]struct{ letter, color string }{
	runner.StateDone:    {"d", "32"},
	runner.StateStale:   {"s", "33"},
	runner.StateMissing: {"m", "90"},
	runner.StateFailed:  {"f", "31"},
}

// strip draws a model's partitions as at most stripWidth marks, and returns
// how many partitions each mark stands for.
func strip(ps []runner.PartitionStatus, color bool) (string, int) {
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

func (a *app) printStatus(w io.Writer, s *session, st []runner.ModelStatus, now time.Time, list bool) {
	color := a.color()
	fmt.Fprintf(w, "Status of target %s (%s) at %s\n\n", s.target.Name, s.info.Name, now.UTC().Format("2006-01-02 15:04 UTC"))
	tw := newTable(w, "MODEL", "PARTITIONS", "RANGE", "DONE", "STALE", "MISSING", "FAILED", "PICTURE")
	maxPer := 1
	for _, ms := range st {
		picture, per := strip(ms.Partitions, color)
		maxPer = max(maxPer, per)
		tw.row(ms.Model.Name, partitionsLabel(ms), rangeLabel(ms),
			fmt.Sprint(ms.Counts[runner.StateDone]), fmt.Sprint(ms.Counts[runner.StateStale]),
			fmt.Sprint(ms.Counts[runner.StateMissing]), fmt.Sprint(ms.Counts[runner.StateFailed]), picture)
	}
	tw.flush()
	legend := "d done, s stale, m missing, f failed"
	if color {
		legend = ""
		for _, st := range []runner.State{runner.StateDone, runner.StateStale, runner.StateMissing, runner.StateFailed} {
			legend += fmt.Sprintf("\x1b[%sm█\x1b[0m %s  ", marks[st].color, st)
		}
		legend = strings.TrimSpace(legend)
	}
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

func partitionsLabel(ms runner.ModelStatus) string {
	m := ms.Model
	switch m.Kind().String() {
	case "time":
		return fmt.Sprintf("%d %s", len(ms.Partitions), m.Config.Grain)
	case "list":
		return fmt.Sprintf("%d values", len(ms.Partitions))
	}
	return "table"
}

func rangeLabel(ms runner.ModelStatus) string {
	if len(ms.Partitions) == 0 {
		return "-"
	}
	first, last := ms.Partitions[0].Partition, ms.Partitions[len(ms.Partitions)-1].Partition
	if first.Start.IsZero() {
		if len(ms.Partitions) == 1 {
			return first.Key
		}
		return first.Key + ", ..."
	}
	return first.Key + " .. " + last.Key
}
