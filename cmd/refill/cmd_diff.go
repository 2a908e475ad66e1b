package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/refill/refill/cmd/refill/internal/statuspage"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

func (a *app) diffCommand() *cobra.Command {
	var f selectionFlags
	var examples, sampleN int
	var exitCode bool
	c := &cobra.Command{
		Use:   "diff MODEL... [--from KEY --to KEY | --partitions KEYS] [--sample N]",
		Short: "Compare what the models' SQL computes now with what their tables hold, partition by partition",
		Long: `Diff runs the working tree's SQL of each selected model for every partition in
range, reading the published upstream tables, and compares its rows with the rows
the model's table holds for that partition. It writes nothing: each partition is
one statement that scans the table's partition and the query's result once, in the
warehouse, and returns counts, sums and a few example rows.

Rows are matched by the model's unique_key: a row only in the table is "only old",
one only in the query's result "only new", and a matched row whose other columns
differ "changed". A model without unique_key is compared row by row, as multisets:
a row is only old or only new. Numeric columns are summed on each side. Columns the
query adds or no longer returns are listed, and rows are compared on the columns
they share. A model whose table does not exist yet has only new rows.

Use it before merging a change to a model, or before a backfill that rewrites
history: it shows what the change does to the data, not only to the SQL
(plan --explain).

` + selectorHelp,
		Example: `  refill diff marts.daily_revenue --from 2024-01-01 --to 2024-01-31
  refill diff staging.orders --partitions 2024-01-05 --examples 10
  refill diff marts.daily_revenue --sample 10       # ten days spread over its history
  refill diff marts.daily_revenue --output json
  refill diff marts.daily_revenue --exit-code   # exit 1 when any row differs`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 && len(f.selects) == 0 {
				return usagef("diff needs the models to compare: refill diff MODEL...")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			sel, nothing, err := a.selectionOf(&f, args)
			if err != nil {
				return err
			}
			if nothing {
				if f.output == "json" {
					target, adapter := a.targetNames()
					return writeJSON(a.stdout, diffOutput{Target: target, Adapter: adapter, Partitions: []diffPartitionJSON{}})
				}
				fmt.Fprintln(a.stdout, nothingChanged)
				return nil
			}
			if examples < 0 {
				return usagef("--examples %d: want 0 or more rows", examples)
			}
			if sampleN < 0 {
				return usagef("--sample %d: want 1 or more partitions per model (0: every one)", sampleN)
			}
			// Every partition in range, whatever the ledger says, and
			// whether or not its upstream partitions are built: a diff
			// builds nothing.
			sel.Mode, sel.AllowMissingUpstream = plan.ModeAll, true
			s, err := a.session(readOnly, false, "refill diff", &sel)
			if err != nil {
				return err
			}
			defer s.close()
			if err := a.deferTo(s, f.deferTo, sel); err != nil {
				return err
			}
			pl, err := s.plan(sel)
			if err != nil {
				return err
			}
			report := &diffReport{}
			var text *diffText
			if f.output != "json" {
				text = &diffText{w: a.stdout}
			}
			diffs, err := s.runner.Diff(a.ctx, pl, runner.DiffOptions{Examples: examples, Sample: sampleN, Observe: func(d runner.PartitionDiff) {
				report.add(d)
				if text != nil {
					text.partition(d)
				}
			}})
			if err != nil {
				if errors.Is(err, runner.ErrNoDiff) {
					return usageError{err}
				}
				return err
			}
			if f.output == "json" {
				out := diffJSON(s, diffs)
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				text.close()
				report.print(a.stdout)
			}
			if exitCode && report.differ > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d partitions differ", report.differ, report.partitions)}
			}
			return nil
		},
	}
	f.register(c, false)
	f.registerState(c)
	f.registerDefer(c)
	a.completeSelection(c)
	c.Flags().IntVar(&examples, "examples", 3, "example rows of each kind (only old, only new, changed) per partition")
	c.Flags().IntVar(&sampleN, "sample", 0, "diff at most N partitions of each model, spread evenly over the range, the first and the last included")
	c.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when any partition differs (as git diff --exit-code)")
	c.Flags().StringVarP(&f.output, "output", "o", "text", "text or json")
	return c
}

// diffReport totals the diffs of a command.
type diffReport struct {
	partitions, differ              int
	onlyOld, onlyNew, changed, same int64
	models                          []string
	lastModel                       *models.Model
}

func (r *diffReport) add(d runner.PartitionDiff) {
	if d.Model != r.lastModel {
		r.models, r.lastModel = append(r.models, d.Model.Name), d.Model
	}
	r.partitions++
	res := d.Result
	if res.Differs() {
		r.differ++
	}
	r.onlyOld += res.OnlyOld
	r.onlyNew += res.OnlyNew
	r.changed += res.Changed
	r.same += res.Same
}

func (r *diffReport) print(w io.Writer) {
	if r.partitions == 0 {
		fmt.Fprintln(w, "Nothing to compare: no partition of the selected models in range.")
		return
	}
	fmt.Fprintf(w, "\n%d of %d partitions differ (%s): %s rows only old, %s only new, %s changed, %s the same.\n",
		r.differ, r.partitions, plural(len(r.models), "model"), count(r.onlyOld), count(r.onlyNew), count(r.changed), count(r.same))
}

// diffText prints each model's partitions as a table, differing ones in
// full and identical ones as a count.
type diffText struct {
	w         io.Writer
	model     *models.Model
	identical int
	sums      map[string][2]float64
	sumOrder  []string
}

func (t *diffText) partition(d runner.PartitionDiff) {
	if d.Model != t.model {
		t.endModel()
		t.model, t.identical, t.sums, t.sumOrder = d.Model, 0, map[string][2]float64{}, nil
		how := "rows compared whole (no unique_key)"
		if len(d.Key) > 0 {
			how = "rows matched by " + strings.Join(d.Key, ", ")
		}
		fmt.Fprintf(t.w, "%s  (%s; table %s)\n", d.Model.Name, how, d.Table)
		if len(d.Added) > 0 && !d.Missing {
			fmt.Fprintf(t.w, "  columns added by the query: %s\n", strings.Join(d.Added, ", "))
		}
		if len(d.Dropped) > 0 {
			fmt.Fprintf(t.w, "  columns the query no longer returns: %s\n", strings.Join(d.Dropped, ", "))
		}
		fmt.Fprintf(t.w, "  %-20s %10s %10s %10s %10s %10s\n", "partition", "old", "new", "only old", "only new", "changed")
	}
	res := d.Result
	for _, s := range res.Sums {
		if _, ok := t.sums[s.Column]; !ok {
			t.sumOrder = append(t.sumOrder, s.Column)
		}
		v := t.sums[s.Column]
		if s.Old != nil {
			v[0] += *s.Old
		}
		if s.New != nil {
			v[1] += *s.New
		}
		t.sums[s.Column] = v
	}
	if !res.Differs() {
		t.identical++
		return
	}
	key := d.Partition.Key
	if d.Missing {
		key += " (no table)"
	}
	fmt.Fprintf(t.w, "  %-20s %10s %10s %10s %10s %10s\n", key, count(res.Old()), count(res.New()), count(res.OnlyOld), count(res.OnlyNew), count(res.Changed))
	for _, ex := range res.Examples {
		fmt.Fprintf(t.w, "      %-9s %s\n", strings.ReplaceAll(ex.Kind, "_", " ")+":", statuspage.Example(d, ex, "->"))
	}
}

func (t *diffText) endModel() {
	if t.model == nil {
		return
	}
	if t.identical > 0 {
		fmt.Fprintf(t.w, "  %s identical\n", plural(t.identical, "partition"))
	}
	for _, c := range t.sumOrder {
		v := t.sums[c]
		fmt.Fprintf(t.w, "  sum(%s): %s -> %s (%s)\n", c, num(v[0]), num(v[1]), signed(v[1]-v[0]))
	}
}

func (t *diffText) close() { t.endModel() }

func count(n int64) string { return strconv.FormatInt(n, 10) }

func num(f float64) string { return statuspage.Number(f) }

func signed(f float64) string {
	if f >= 0 {
		return "+" + num(f)
	}
	return num(f)
}

type diffOutput struct {
	Target     string              `json:"target"`
	Adapter    string              `json:"adapter"`
	Partitions []diffPartitionJSON `json:"partitions"`
}

type diffPartitionJSON struct {
	Model     string            `json:"model"`
	Partition string            `json:"partition"`
	Table     string            `json:"table"`
	Missing   bool              `json:"table_missing,omitempty"`
	Key       []string          `json:"unique_key"`
	Compared  []string          `json:"compared"`
	Added     []string          `json:"added"`
	Dropped   []string          `json:"dropped"`
	Old       int64             `json:"old"`
	New       int64             `json:"new"`
	OnlyOld   int64             `json:"only_old"`
	OnlyNew   int64             `json:"only_new"`
	Changed   int64             `json:"changed"`
	Same      int64             `json:"same"`
	Sums      []diffSumJSON     `json:"sums"`
	Examples  []diffExampleJSON `json:"examples"`
}

type diffSumJSON struct {
	Column string   `json:"column"`
	Old    *float64 `json:"old"`
	New    *float64 `json:"new"`
}

type diffExampleJSON struct {
	Kind string             `json:"kind"`
	Old  map[string]*string `json:"old,omitempty"`
	New  map[string]*string `json:"new,omitempty"`
}

func diffJSON(s *session, diffs []runner.PartitionDiff) diffOutput {
	out := diffOutput{Target: s.target.Name, Adapter: s.info.Name, Partitions: []diffPartitionJSON{}}
	row := func(cols []string, vals []*string) map[string]*string {
		if vals == nil {
			return nil
		}
		m := make(map[string]*string, len(cols))
		for i, c := range cols {
			m[c] = vals[i]
		}
		return m
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, d := range diffs {
		res := d.Result
		p := diffPartitionJSON{Model: d.Model.Name, Partition: d.Partition.Key, Table: d.Table.String(), Missing: d.Missing,
			Key: nonNil(d.Key), Compared: nonNil(d.Compared), Added: nonNil(d.Added), Dropped: nonNil(d.Dropped),
			Old: res.Old(), New: res.New(), OnlyOld: res.OnlyOld, OnlyNew: res.OnlyNew, Changed: res.Changed, Same: res.Same,
			Sums: []diffSumJSON{}, Examples: []diffExampleJSON{}}
		for _, s := range res.Sums {
			p.Sums = append(p.Sums, diffSumJSON{Column: s.Column, Old: s.Old, New: s.New})
		}
		for _, ex := range res.Examples {
			p.Examples = append(p.Examples, diffExampleJSON{Kind: ex.Kind, Old: row(d.Compared, ex.Old), New: row(d.Compared, ex.New)})
		}
		out.Partitions = append(out.Partitions, p)
	}
	return out
}

// plural says n things: "1 partition", "3 partitions".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// changeLimit is --max-changed: at most rows rows, or share of the rows
// replaced, may differ.
type changeLimit struct {
	rows    int64
	percent float64
	set     bool
}

func parseMaxChanged(s string) (changeLimit, error) {
	if s == "" {
		return changeLimit{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 100 {
			return changeLimit{}, usagef("--max-changed %q: want a share from 0%% to 100%%, or a number of rows", s)
		}
		return changeLimit{percent: f, rows: -1, set: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return changeLimit{}, usagef("--max-changed %q: want a number of rows (0 or more), or a share such as 5%%", s)
	}
	return changeLimit{rows: n, set: true}, nil
}

// check refuses a review whose differing rows (only old, only new and
// changed) pass the limit; a share is of the rows the partitions replace.
func (l changeLimit) check(r *diffReport) error {
	differ := r.onlyOld + r.onlyNew + r.changed
	if !l.set {
		return nil
	}
	if l.rows >= 0 && differ > l.rows {
		return fmt.Errorf("%d rows differ, more than --max-changed %d", differ, l.rows)
	}
	if l.rows < 0 {
		old := r.onlyOld + r.changed + r.same
		share := 100.0
		if old > 0 {
			share = 100 * float64(differ) / float64(old)
		} else if differ == 0 {
			share = 0
		}
		if share > l.percent {
			return fmt.Errorf("%d rows differ, %.2f%% of the %d replaced, more than --max-changed %s%%", differ, share, old, num(l.percent))
		}
	}
	return nil
}

// review shows a run's diffs on w before it publishes and decides: the
// limit, then --yes or the user's answer.
func (a *app) review(w io.Writer, diffs []runner.PartitionDiff, limit changeLimit, yes bool) error {
	report := &diffReport{}
	text := &diffText{w: w}
	fmt.Fprintln(w, "\nReview: what publishing would change, partition by partition")
	for _, d := range diffs {
		report.add(d)
		text.partition(d)
	}
	text.close()
	report.print(w)
	if err := limit.check(report); err != nil {
		return fmt.Errorf("refused by the review: %v", err)
	}
	if yes {
		return nil
	}
	if !a.confirm("Publish these partitions?") {
		return errors.New("the review was not confirmed")
	}
	return nil
}
