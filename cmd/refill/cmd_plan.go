package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

func (a *app) planCommand() *cobra.Command {
	var f selectionFlags
	var estimate, explain bool
	c := &cobra.Command{
		Use:   "plan [MODEL...]",
		Short: "Show which partitions a run would compute, and why, without touching data",
		Long: `Plan reads the models and the ledger and prints every partition that refill run
would compute with the same flags, grouped by model, with the reason for each:

  missing    never built
  failed     the last attempt failed
  pending    a publication started and was never confirmed (a crash)
  stale      the model's SQL or config changed since it was built
  upstream   a partition it reads was rewritten after it was built, or is
             being rewritten by this run
  drift      the table does not hold what the ledger recorded (dropped, or
             rows deleted or added outside refill)
  partial    published before its window was complete (allow_partial)
  lookback   inside the model's late-data lookback window (scheduled runs)
  watermark  inside the lookback window, and the source's watermark moved
  refresh    a whole table over a source, by its refresh: rule (scheduled runs)
  forced     --mode all
  rebuild    --full-refresh, or on_schema_change: rebuild and its columns changed

A partition that reads upstream partitions which are missing, failed or
unfinished (a killed run's), and which the run does not build, is blocked:
listed, but not run. The plan says, per model, what its blocked partitions
wait for and the command that builds it (or pass --allow-missing-upstream to
run them anyway).

Plan never writes: it opens DuckDB files read-only and creates nothing.

` + selectorHelp,
		Example: `  refill plan
  refill pl staging.orders+ --from 2024-01-01 --to 2024-01-31
  refill pl --partitions 2024-01-05,2024-01-06 --output json
  refill pl marts.daily_revenue --full-refresh
  refill pl --target prod --offline`,
		RunE: func(c *cobra.Command, args []string) error {
			sel, nothing, err := a.selectionOf(&f, args)
			if err != nil {
				return err
			}
			if nothing {
				if f.output == "json" {
					target, adapter := a.targetNames()
					return writeJSON(a.stdout, planOutput{Target: target, Adapter: adapter, Models: []string{}, Steps: []planStepJSON{},
						Blocked: []planStepJSON{}, Notes: []string{"no selected model changed"}})
				}
				fmt.Fprintln(a.stdout, nothingChanged)
				return nil
			}
			t, err := a.session(readOnly, f.offline, "refill plan", &sel)
			if err != nil {
				return err
			}
			defer t.close()
			if f.deferTo != "" && f.offline {
				return usagef("--defer reads the other target's ledger; it cannot be combined with --offline")
			}
			if err := a.deferTo(t, f.deferTo, sel); err != nil {
				return err
			}
			pl, err := t.plan(sel)
			if err != nil {
				return err
			}
			var estimates []plan.ModelEstimate
			if estimate {
				if f.offline {
					return usagef("--estimate asks the warehouse; it cannot be combined with --offline")
				}
				if estimates, err = t.runner.Estimate(a.ctx, pl); err != nil {
					return exitf(exitWarehouse, "estimating: %v", err)
				}
			}
			var changes []plan.Change
			if explain {
				if f.offline {
					return usagef("--explain reads the versions the ledger keeps; it cannot be combined with --offline")
				}
				if changes, err = t.runner.Explain(a.ctx, pl); err != nil {
					return exitf(exitWarehouse, "reading model versions: %v", err)
				}
			}
			if f.output == "json" {
				out := planJSON(t, pl)
				out.Estimates = estimatesJSON(estimates)
				out.Changes = changesJSON(changes)
				return writePlanJSON(a.stdout, out, pl)
			}
			a.printPlan(a.stdout, t, pl, f.offline)
			printEstimates(a.stdout, estimates)
			printChanges(a.stdout, changes)
			return nil
		},
	}
	f.register(c, true)
	f.registerState(c)
	f.registerDefer(c)
	a.completeSelection(c)
	c.Flags().BoolVar(&estimate, "estimate", false, "ask the warehouse (EXPLAIN) how many rows or bytes each model's partitions read")
	c.Flags().BoolVar(&explain, "explain", false, "show, for stale partitions, a diff of what changed in the model since they were built")
	c.Flags().StringVarP(&f.output, "output", "o", "text", "text or json")
	c.Flags().BoolVar(&f.offline, "offline", false, "plan from the model files alone, without connecting (every partition counts as missing)")
	return c
}

type planStepJSON struct {
	Model     string  `json:"model"`
	Partition string  `json:"partition"`
	Start     *string `json:"start"`
	End       *string `json:"end"`
	Reason    string  `json:"reason"`
	Detail    string  `json:"detail,omitempty"`
	// Conditional: it runs only if a refresh it reads changes its rows.
	Conditional bool `json:"conditional,omitempty"`
	// Horizon, for a whole-table or list partition reading
	// time-partitioned models, is the end of the upstream time it reads.
	Horizon *string `json:"horizon,omitempty"`
	// WaitsFor, for a blocked partition, is the upstream partition it
	// waits for ("staging.orders 2024-01-02").
	WaitsFor string `json:"waits_for,omitempty"`
}

type planOutput struct {
	Target          string         `json:"target"`
	Adapter         string         `json:"adapter"`
	Guarantee       string         `json:"guarantee"`
	PublishTogether bool           `json:"publish_together"`
	Models          []string       `json:"models"`
	Steps           []planStepJSON `json:"steps"`
	Blocked         []planStepJSON `json:"blocked"`
	Notes           []string       `json:"notes"`
	Estimates       []estimateJSON `json:"estimates,omitempty"`
	Changes         []changeJSON   `json:"changes,omitempty"`
}

type changeJSON struct {
	Model      string `json:"model"`
	From       string `json:"from"`
	To         string `json:"to"`
	Partitions int    `json:"partitions"`
	Diff       string `json:"diff"`
}

func changesJSON(cs []plan.Change) []changeJSON {
	var out []changeJSON
	for _, c := range cs {
		out = append(out, changeJSON{Model: c.Model.Name, From: c.From, To: c.To, Partitions: c.Partitions, Diff: c.Diff})
	}
	return out
}

// printChanges prints what changed in each model with stale partitions.
func printChanges(w io.Writer, cs []plan.Change) {
	for _, c := range cs {
		fmt.Fprintf(w, "\n%s: %s built by version %s; the model is now version %s.\n", c.Model.Name, plan.Plural(c.Partitions, "partition"), c.From, c.To)
		if c.Diff == "" {
			fmt.Fprintln(w, "  (the ledger does not have the old version: it was built before refill kept model versions)")
			continue
		}
		fmt.Fprint(w, c.Diff)
	}
}

type estimateJSON struct {
	Model      string `json:"model"`
	Partitions int    `json:"partitions"`
	Rows       *int64 `json:"rows"`
	Bytes      *int64 `json:"bytes"`
	Note       string `json:"note"`
}

func estimatesJSON(es []plan.ModelEstimate) []estimateJSON {
	var out []estimateJSON
	known := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	for _, e := range es {
		out = append(out, estimateJSON{Model: e.Model.Name, Partitions: e.Steps, Rows: known(e.Rows), Bytes: known(e.Bytes), Note: e.Note})
	}
	return out
}

func printEstimates(w io.Writer, es []plan.ModelEstimate) {
	if len(es) == 0 {
		return
	}
	fmt.Fprintln(w, "\nEstimates (from the warehouse, before anything runs):")
	tw := newTable(w, "MODEL", "PARTITIONS", "ROWS", "BYTES", "HOW")
	for _, e := range es {
		tw.row(e.Model.Name, fmt.Sprint(e.Steps), humanCount(e.Rows, ""), humanCount(e.Bytes, "B"), e.Note)
	}
	tw.flush()
}

// humanCount prints 1234567 as ~1.2M (or ~1.2 MB with unit B); -1 is "?".
func humanCount(v int64, unit string) string {
	if v < 0 {
		return "?"
	}
	f := float64(v)
	for _, suffix := range []string{"", "k", "M", "G", "T"} {
		if f < 1000 {
			if suffix == "" {
				return fmt.Sprintf("~%d%s", v, unit)
			}
			sep := ""
			if unit != "" {
				sep = " "
			}
			return fmt.Sprintf("~%.1f%s%s%s", f, sep, suffix, unit)
		}
		f /= 1000
	}
	return fmt.Sprintf("~%.1fP%s", f, unit)
}

// planJSON returns the JSON document of plan p but its steps and blocked
// steps, which writePlanJSON writes one at a time.
func planJSON(t *session, p *plan.Plan) planOutput {
	out := planOutput{Target: t.target.Name, Adapter: t.info.Name, Guarantee: t.info.Guarantee, PublishTogether: t.info.MultiTable,
		Models: modelNames(p.Models), Steps: []planStepJSON{}, Blocked: []planStepJSON{}, Notes: p.Notes}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	return out
}

// writePlanJSON writes out with the steps and blocked steps of p as
// writeJSON would write it with them filled in, byte for byte, but one
// step at a time: the JSON plan of an initial backfill of millions of
// partitions is never held whole. out's Steps and Blocked must be empty.
func writePlanJSON(w io.Writer, out planOutput, p *plan.Plan) error {
	doc, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, list := range []struct {
		key   string
		steps iter.Seq[plan.Step]
	}{{"steps", p.AllSteps()}, {"blocked", p.AllBlocked()}} {
		// MarshalIndent wrote the empty list as `"key": []` on a line
		// of its own at the top level: the elements go between the
		// brackets, indented as one level deeper.
		marker := []byte("\n  \"" + list.key + "\": [")
		i := bytes.Index(doc, marker)
		if i < 0 || !bytes.HasPrefix(doc[i+len(marker):], []byte("]")) {
			return fmt.Errorf("internal error: no empty %q in the plan's JSON", list.key)
		}
		bw.Write(doc[:i+len(marker)])
		doc = doc[i+len(marker):]
		n := 0
		for s := range list.steps {
			step, err := json.MarshalIndent(stepJSON(s), "    ", "  ")
			if err != nil {
				return err
			}
			if n > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n    ")
			if _, err := bw.Write(step); err != nil {
				return err // the reader is gone: stop encoding
			}
			n++
		}
		if n > 0 {
			bw.WriteString("\n  ")
		}
	}
	bw.Write(doc)
	bw.WriteByte('\n')
	return bw.Flush()
}

func stepJSON(s plan.Step) planStepJSON {
	out := planStepJSON{Model: s.Model.Name, Partition: s.Partition.Key,
		Start: timeJSON(s.Partition.Start), End: timeJSON(s.Partition.End), Reason: string(s.Reason), Detail: s.Detail,
		Conditional: s.Conditional, Horizon: timeJSON(s.Horizon)}
	if b := s.BlockedBy; b != nil {
		out.WaitsFor = b.Model + " " + b.Partition
	}
	return out
}

func timeJSON(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

func modelNames(ms []*models.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printPlan prints a plan for people: steps grouped into runs of adjacent
// partitions with the same reason.
func (a *app) printPlan(w io.Writer, t *session, p *plan.Plan, offline bool) {
	fmt.Fprintf(w, "Plan for target %s (%s)\n", t.target.Name, t.info.Name)
	fmt.Fprintf(w, "  guarantee: %s\n", t.info.Guarantee)
	if t.info.MultiTable {
		fmt.Fprintf(w, "  --publish together: supported (every table in one transaction)\n")
	} else {
		fmt.Fprintf(w, "  --publish together: not supported on %s (it cannot commit several tables at once)\n", t.info.Name)
	}
	if offline {
		fmt.Fprintln(w, "  offline: the ledger was not read, so every partition counts as missing")
	}
	sel := p.Selection
	selection := "all models"
	if len(sel.Select) > 0 {
		selection = strings.Join(sel.Select, " ")
	}
	if len(sel.Exclude) > 0 {
		selection += " minus " + strings.Join(sel.Exclude, " ")
	}
	fmt.Fprintf(w, "  selection: %s -> %s\n", selection, strings.Join(modelNames(p.Models), ", "))
	fmt.Fprintf(w, "  range: %s\n", describeRange(sel))
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
	if p.Len() == 0 && p.LenBlocked() == 0 {
		if len(p.Notes) > 0 {
			fmt.Fprintln(w, "Nothing to do: every selected partition is done and up to date, apart from those the notes above leave out.")
		} else {
			fmt.Fprintln(w, "Nothing to do: every selected partition is done and up to date.")
		}
		if sel.To == "" && len(sel.Partitions) == 0 && hasTimeModel(p.Models) {
			fmt.Fprintf(w, "Partitions still open at %s are left out until they are complete (allow_partial: runs them early).\n",
				sel.Now.UTC().Format("2006-01-02 15:04 UTC"))
		}
		return
	}
	tw := newTable(w, "MODEL", "PARTITIONS", "COUNT", "REASON")
	for _, g := range groupRuns(append(slices.Clone(p.Runs()), p.BlockedRuns()...)) {
		reason := string(g.reason)
		if g.detail != "" {
			reason += ": " + g.detail
		}
		tw.row(g.model, g.span(), fmt.Sprint(g.n), reason)
	}
	tw.flush()
	fmt.Fprintln(w)
	counts := p.Counts()
	var parts []string
	for _, r := range plan.Reasons {
		if counts[r] > 0 && r != plan.ReasonBlocked {
			parts = append(parts, fmt.Sprintf("%d %s", counts[r], r))
		}
	}
	if p.Len() > 0 {
		fmt.Fprintf(w, "%s in %s (%s).\n", plan.Plural(p.Len(), "partition"), plan.Plural(countModels(p.Runs()), "model"), strings.Join(parts, ", "))
		if n := conditionalSteps(p); n > 0 {
			fmt.Fprintf(w, "%d of them run only if a refresh they read changes its rows; otherwise they stay as they are.\n", n)
		}
	} else {
		fmt.Fprintln(w, "Nothing to run.")
	}
	if p.LenBlocked() > 0 {
		fmt.Fprintf(w, "%s blocked: they read upstream partitions that are not there and that this run does not build:\n", plan.Plural(p.LenBlocked(), "partition"))
		printBlockedModels(w, p)
		fmt.Fprintln(w, "--allow-missing-upstream runs them anyway, from what the upstream tables hold.")
	}
	if a.verbose {
		fmt.Fprintln(w)
		for _, s := range append(p.Steps(), p.Blocked()...) {
			fmt.Fprintf(w, "  %s %s  %s  %s\n", s.Model.Name, s.Partition.Key, s.Reason, s.Detail)
		}
	}
}

func describeRange(sel plan.Selection) string {
	now := sel.Now.UTC().Format("2006-01-02 15:04 UTC")
	switch {
	case len(sel.Partitions) > 0:
		return "partitions " + strings.Join(sel.Partitions, ", ")
	case sel.From == "" && sel.To == "":
		r := fmt.Sprintf("each model's start through its last complete partition at %s, or its end: if earlier", now)
		switch {
		case sel.Lookback == nil:
			return r + " (scheduled: each model's lookback: applies)"
		case *sel.Lookback == 0:
			return r + " (no lookback)"
		}
		return r + fmt.Sprintf(" (lookback: the last %s)", plan.Plural(*sel.Lookback, "partition"))
	case sel.To == "":
		return fmt.Sprintf("%s through the last complete partition at %s", sel.From, now)
	case sel.From == "":
		return fmt.Sprintf("each model's start through %s", sel.To)
	}
	return fmt.Sprintf("%s through %s", sel.From, sel.To)
}

func countModels(runs []plan.Run) int {
	seen := map[*models.Model]bool{}
	for _, r := range runs {
		seen[r.Model] = true
	}
	return len(seen)
}

// stepGroup is a stretch of adjacent steps of one model with one reason,
// as plan prints it.
type stepGroup struct {
	model       string
	reason      plan.Reason
	detail      string
	n           int              // steps
	first, last models.Partition // the first and last partitions
	keys        []string         // the keys, of partitions without a time window
}

func (g stepGroup) span() string {
	switch {
	case g.n == 1:
		return g.first.Key
	case g.first.Start.IsZero():
		return strings.Join(g.keys, ", ")
	}
	return g.first.Key + " .. " + g.last.Key
}

// groupRuns groups runs of steps for plan to print: adjacent runs of one
// model with one reason and cause make one group.
func groupRuns(runs []plan.Run) []stepGroup {
	var out []stepGroup
	for _, r := range runs {
		detail := r.Cause
		switch {
		case detail != "":
		case r.Reason == plan.ReasonUpstream:
			detail = "an upstream partition was republished after it was built"
		case r.Reason == plan.ReasonLookback, r.Reason == plan.ReasonForced, r.Reason == plan.ReasonSource:
			detail = r.Detail
		}
		windowless := r.Partition.Start.IsZero()
		if n := len(out); n > 0 {
			g := &out[n-1]
			if g.model == r.Model.Name && g.reason == r.Reason && g.detail == detail &&
				(g.last.Start.IsZero() && windowless || g.last.End.Equal(r.Partition.Start)) {
				g.n, g.last = g.n+r.N, r.Last
				if windowless {
					g.keys = append(g.keys, r.Partition.Key)
				}
				continue
			}
		}
		g := stepGroup{model: r.Model.Name, reason: r.Reason, detail: detail, n: r.N, first: r.Partition, last: r.Last}
		if windowless {
			g.keys = []string{r.Partition.Key}
		}
		out = append(out, g)
	}
	return out
}

// hasTimeModel reports whether any of ms is partitioned by time.
func hasTimeModel(ms []*models.Model) bool {
	for _, m := range ms {
		if m.Kind() == models.TimePartitioned {
			return true
		}
	}
	return false
}

// conditionalSteps counts the steps of p that run only if a refresh they
// read changes something (plan.Step.Conditional).
func conditionalSteps(p *plan.Plan) int {
	n := 0
	for _, r := range p.Runs() {
		if r.Conditional {
			n += r.N
		}
	}
	return n
}
