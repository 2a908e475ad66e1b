// Package statuspage renders refill status --html: one self-contained
// page with a summary of what needs attention, the recent runs, and a
// calendar of each model's partitions.
package statuspage

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// Status is what the status page shows.
type Status struct {
	Target, Adapter string
	Now             time.Time
	Models          []plan.ModelStatus
	// Blocked holds, by model and partition key, the missing partitions a
	// run skips because an upstream partition they read failed or is
	// missing (the Blocked steps of a plan of missing partitions).
	Blocked map[string]map[string]plan.Step
	// BlockedErr says why Blocked could not be worked out, if it could not.
	BlockedErr error
	Runs       []*adapters.Run // newest first
	// Orphans are the ledger's models the project no longer has.
	Orphans []runner.Orphan
	// Broken are the models the project loaded without.
	Broken []*models.BrokenModel
	// Changes, when set, are the data diffs of the models whose current
	// version differs from the one partitions were built by.
	Changes []ModelChange
	Redact  func(string) string
}

// Runs is how many runs the status page shows.
const Runs = 20

// stateClasses are the page's states, in the legend's order: the runner's
// states, with done split by whether the partition holds rows and missing
// by whether a run would build it.
var stateClasses = []struct{ class, label, meaning string }{
	{"done", "done", "built by the model's current version"},
	{"empty", "done, 0 rows", "built, and holds no rows: check the model's window on its source"},
	{"partial", "partial", "published before its window was complete"},
	{"stale", "stale", "the model, or a partition it reads, changed after it was built"},
	{"drift", "drift", "the table does not hold what the ledger recorded"},
	{"pending", "pending", "a publication started and its outcome was not recorded"},
	{"failed", "failed", "its last attempt failed"},
	{"blocked", "blocked", "never built, and runs skip it: a partition it reads failed or is missing"},
	{"missing", "missing", "never built"},
	{"outside", "outside", "built, but outside the model's start..end now: the next run deletes its rows"},
}

// stateWords describes each class in a sentence's words.
var stateWords = map[string]string{"done": "done", "empty": "done with 0 rows", "partial": "partial", "stale": "stale",
	"drift": "drifted", "pending": "pending", "failed": "failed", "blocked": "blocked", "missing": "missing", "outside": "outside its range"}

// Limits on the per-model lists.
const maxAttention = 10 // partitions listed per model

type stateCount struct {
	Class, Label string
	N            int
}

type legendItem struct{ Class, Label, Meaning string }

type overviewRow struct {
	Name, Label, Range string
	Counts             []int // by pageView.Columns
}

type modelView struct {
	Name, Description, Label, Range string
	Counts                          []stateCount
	Calendar                        *calendar
	Chips                           []calCell // list and whole-table models
	Attention                       []attentionRow
	AttentionMore                   int // partitions that need attention beyond Attention
	NeedAttention                   int
}

type attentionRow struct{ Key, Class, Rows, RunID, Finished, Took, Detail string }

type runView struct {
	ID, Status, Class, Started, Took, Host, Error string
	Succeeded, Failed, Skipped                    int
}

type pageView struct {
	Target, Adapter, Now string
	Partitions           int
	Totals               []stateCount
	Columns              []stateCount // the states any model has, for the overview
	Overview             []overviewRow
	Sections             []issueSection
	Runs                 []runView
	Models               []modelView
	Legend               []legendItem
	Notes                []string
	Orphans              []orphanView
	Broken               []brokenView
	Changes              []changeView
	DiffAsked            bool
}

type brokenView struct {
	Name, Path, Error string
}

type orphanView struct {
	Name, Table, LastRun, Finished string
	Partitions                     int
}

// Write writes the status page to path, replacing it at once.
func Write(path string, in Status) error {
	var buf bytes.Buffer
	if err := Render(&buf, in); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Render writes the status page: a summary of what needs
// attention, the recent runs, and a calendar of each model's partitions.
func Render(w io.Writer, in Status) error {
	return statusPage.Execute(w, buildStatusPage(in))
}

func buildStatusPage(in Status) pageView {
	redact := in.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	pv := pageView{Target: in.Target, Adapter: in.Adapter, Now: in.Now.UTC().Format("2006-01-02 15:04 UTC")}
	if in.BlockedErr != nil {
		pv.Notes = append(pv.Notes, "Blocked partitions are shown as missing: working them out failed: "+redact(in.BlockedErr.Error()))
	}
	g := newGrouper()
	totals := map[string]int{}
	perModel := make([]map[string]int, len(in.Models))
	// Where each partition's cell is, for the summary's links.
	cellOf := make([]func(part int) *calCell, len(in.Models))
	names := make([]string, len(in.Models))
	for mi, ms := range in.Models {
		m := ms.Model
		names[mi] = m.Name
		mv := modelView{Name: m.Name, Description: m.Config.Description, Label: PartitionsLabel(ms), Range: RangeLabel(ms)}
		counts := map[string]int{}
		parts := make([]partCell, len(ms.Partitions))
		for i, ps := range ms.Partitions {
			step, blocked := in.Blocked[m.Name][ps.Partition.Key]
			blocked = blocked && ps.State == plan.StateMissing
			class := cellClass(ps, blocked)
			counts[class]++
			parts[i] = partCell{key: ps.Partition.Key, start: ps.Partition.Start, class: class}
			if class == "done" || class == "empty" || class == "missing" {
				parts[i].title = cellTitle(ps, class, "")
				continue
			}
			// What the summary groups by: the error, the reason, or for a
			// blocked partition what it waits for.
			text, cause := redact(ps.Detail), ""
			switch {
			case blocked:
				text, cause = redact(step.Detail), redact(step.Cause)
			case ps.State == plan.StateFailed && ps.Record != nil && ps.Record.Error != "":
				text = redact(ps.Record.Error)
			}
			g.add(class, text, cause, mi, i)
			parts[i].title, parts[i].note = cellTitle(ps, class, text), clip(firstLine(text), 200)
			mv.NeedAttention++
			if len(mv.Attention) < maxAttention {
				mv.Attention = append(mv.Attention, attentionOf(ps, class, text))
			} else {
				mv.AttentionMore++
			}
		}
		if m.Kind() == models.TimePartitioned && len(parts) > 0 {
			lay := layoutFor(m, parts[0].start, parts[len(parts)-1].start)
			cal, refs := buildCalendar(lay, parts)
			mv.Calendar = cal
			cellOf[mi] = func(part int) *calCell { r := refs[part]; return &cal.Rows[r.row].Cells[r.cell] }
		} else {
			for _, p := range parts {
				mv.Chips = append(mv.Chips, calCell{Class: p.class, Span: 1, Title: p.title, Text: p.key})
			}
			chips := mv.Chips
			cellOf[mi] = func(part int) *calCell { return &chips[part] }
		}
		for _, sc := range stateClasses {
			if n := counts[sc.class]; n > 0 {
				mv.Counts = append(mv.Counts, stateCount{Class: sc.class, Label: sc.label, N: n})
				totals[sc.class] += n
			}
		}
		perModel[mi] = counts
		pv.Partitions += len(parts)
		pv.Models = append(pv.Models, mv)
	}
	for _, sc := range stateClasses {
		pv.Legend = append(pv.Legend, legendItem{Class: sc.class, Label: sc.label, Meaning: sc.meaning})
		if n := totals[sc.class]; n > 0 {
			pv.Totals = append(pv.Totals, stateCount{Class: sc.class, Label: sc.label, N: n})
		}
	}
	pv.Columns = pv.Totals
	for mi, mv := range pv.Models {
		row := overviewRow{Name: mv.Name, Label: mv.Label, Range: mv.Range}
		for _, c := range pv.Columns {
			row.Counts = append(row.Counts, perModel[mi][c.Class])
		}
		pv.Overview = append(pv.Overview, row)
	}
	keys := func(mi, part int) string { return in.Models[mi].Partitions[part].Partition.Key }
	link := func(mi, part int) string {
		c := cellOf[mi](part)
		if c.ID == "" {
			c.ID = names[mi] + "@" + keys(mi, part)
		}
		return "#" + c.ID
	}
	pv.Sections = g.sections(names, keys, link)
	for _, r := range in.Runs {
		pv.Runs = append(pv.Runs, runViewOf(r, redact))
	}
	for _, bm := range in.Broken {
		msg := bm.Why()
		if len(bm.Errs) > 0 {
			msg = bm.Errs.Error()
		}
		pv.Broken = append(pv.Broken, brokenView{Name: bm.Name, Path: bm.Path, Error: msg})
	}
	for _, o := range in.Orphans {
		pv.Orphans = append(pv.Orphans, orphanView{Name: o.Name, Table: o.Table.String(), LastRun: o.LastRun,
			Finished: o.LastFinished.UTC().Format("2006-01-02 15:04"), Partitions: o.Partitions})
	}
	pv.DiffAsked = in.Changes != nil
	pv.Changes = changeViews(in.Changes, redact)
	return pv
}

// cellClass is the page's state of a partition (see stateClasses).
func cellClass(ps plan.PartitionStatus, blocked bool) string {
	switch {
	case blocked:
		return "blocked"
	case ps.State == plan.StateDone && ps.Record != nil && ps.Record.Rows == 0:
		return "empty"
	}
	return string(ps.State)
}

// cellTitle is the tooltip of a cell showing ps alone.
func cellTitle(ps plan.PartitionStatus, class, text string) string {
	t := ps.Partition.Key + ": " + stateWords[class]
	if r := ps.Record; r != nil && class == "done" {
		t += fmt.Sprintf(", %d rows", r.Rows)
	}
	if text != "" {
		t += ": " + clip(firstLine(text), 200)
	}
	return t
}

func attentionOf(ps plan.PartitionStatus, class, text string) attentionRow {
	a := attentionRow{Key: ps.Partition.Key, Class: class, Detail: clip(firstLine(text), 160)}
	if r := ps.Record; r != nil {
		a.Rows, a.RunID = fmt.Sprint(r.Rows), r.RunID
		a.Finished = r.FinishedAt.UTC().Format("2006-01-02 15:04:05")
		a.Took = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
	}
	return a
}

// runClasses colors a run's status like the partition states it left.
var runClasses = map[adapters.RunStatus]string{adapters.RunSucceeded: "done", adapters.RunFailed: "failed",
	adapters.RunInterrupted: "pending", adapters.RunAbandoned: "drift", adapters.RunRunning: "partial", adapters.RunAccepted: "empty",
	adapters.RunIncomplete: "blocked", adapters.RunPruned: "empty"}

func runViewOf(r *adapters.Run, redact func(string) string) runView {
	v := runView{ID: r.ID, Status: string(r.Status), Class: runClasses[r.Status], Started: r.StartedAt.UTC().Format("2006-01-02 15:04:05"),
		Took: "-", Host: fmt.Sprintf("%s:%d", r.Host, r.PID), Error: redact(clip(r.Error, maxIssueChars)),
		Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped}
	if !r.FinishedAt.IsZero() {
		v.Took = r.FinishedAt.Sub(r.StartedAt).Round(time.Second).String()
	}
	return v
}

// clip shortens s to about n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + " …"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// PartitionsLabel says how many partitions a model status holds, and of
// what: "31 day", "3 values", "table".
func PartitionsLabel(ms plan.ModelStatus) string {
	m := ms.Model
	switch m.Kind().String() {
	case "time":
		return fmt.Sprintf("%d %s", len(ms.Partitions), m.Config.Grain)
	case "list":
		return fmt.Sprintf("%d values", len(ms.Partitions))
	}
	return "table"
}

// RangeLabel gives the first and last partition of a model status (a
// whole-table or list model's with the horizon it is built as of).
func RangeLabel(ms plan.ModelStatus) string {
	if len(ms.Partitions) == 0 {
		return "-"
	}
	first, last := ms.Partitions[0].Partition, ms.Partitions[len(ms.Partitions)-1].Partition
	if first.Start.IsZero() {
		label := first.Key
		if len(ms.Partitions) > 1 {
			label += ", ..."
		}
		// As of the earliest horizon its built partitions have.
		var h time.Time
		for _, ps := range ms.Partitions {
			if !ps.Horizon.IsZero() && (h.IsZero() || ps.Horizon.Before(h)) {
				h = ps.Horizon
			}
		}
		if asOf := ms.Model.AsOf(h); asOf != "" {
			label += " as of " + asOf
		}
		return label
	}
	return first.Key + " .. " + last.Key
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
