package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Orphan is a model of which the ledger holds records, but that the
// project no longer has (its file was deleted or renamed): its table and
// records stay until refill prune drops them.
type Orphan struct {
	Name  string
	Table models.Relation // its table, by its name as models name tables
	// Partitions counts its records not removed; LastRun and LastFinished
	// are of the latest of them.
	Partitions   int
	LastRun      string
	LastFinished time.Time
	records      []adapters.Record
}

// Orphans returns the ledger's models that the project no longer has, or
// nil when the adapter cannot list the ledger's models (adapters.Pruner).
func (r *Runner) Orphans(ctx context.Context) ([]Orphan, error) {
	pr, ok := r.Adapter.(adapters.Pruner)
	if !ok {
		return nil, nil
	}
	names, err := pr.LedgerModels(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the ledger's models: %w", err)
	}
	var gone []string
	for _, n := range names {
		// A broken model is still the project's: its table is not pruned.
		if r.Project.ModelByName(n) == nil && r.Project.BrokenModel(n) == nil {
			gone = append(gone, n)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	records, err := r.Adapter.Partitions(ctx, gone)
	if err != nil {
		return nil, err
	}
	byName := map[string]*Orphan{}
	var out []Orphan
	for _, n := range gone {
		out = append(out, Orphan{Name: n, Table: r.orphanTable(n)})
	}
	for i := range out {
		byName[out[i].Name] = &out[i]
	}
	for _, rec := range records {
		o := byName[rec.Model]
		if o == nil || rec.State == adapters.RecordRemoved {
			continue
		}
		o.Partitions++
		o.records = append(o.records, rec)
		if rec.FinishedAt.After(o.LastFinished) {
			o.LastFinished, o.LastRun = rec.FinishedAt, rec.RunID
		}
	}
	return out, nil
}

// orphanTable returns where the table of a model named name lives: a
// dotted name's schema and table, else the target's default schema.
func (r *Runner) orphanTable(name string) models.Relation {
	if schema, table, ok := strings.Cut(name, "."); ok {
		return models.Relation{Schema: schema, Name: table}
	}
	return models.Relation{Schema: r.Scope.Schema, Name: name}
}

// Prune drops the table of each named model the project no longer has,
// and records its partitions removed, holding the table's lease as a run
// does. The drop comes first: a prune killed between the two leaves a
// model whose table is gone and whose records remain, which status still
// lists and a second prune completes. It refuses a name the project has,
// and one the ledger does not know.
func (r *Runner) Prune(ctx context.Context, names []string, runID string, wait func(Event)) ([]Orphan, error) {
	pr, ok := r.Adapter.(adapters.Pruner)
	if !ok {
		return nil, usageErrorf("the %s adapter cannot drop a model's table", r.Adapter.Info().Name)
	}
	orphans, err := r.Orphans(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]Orphan{}
	for _, o := range orphans {
		byName[o.Name] = o
	}
	var chosen []Orphan
	var tables []string
	for _, n := range names {
		o, ok := byName[n]
		switch {
		case r.Project.ModelByName(n) != nil:
			return nil, usageErrorf("%s is a model of the project: prune drops only what deleted models left (delete %s first)", n, r.Project.ModelByName(n).Path)
		case !ok:
			return nil, usageErrorf("the ledger of target %s has no model %s%s", r.Target, n, suggestName(n, orphans))
		}
		chosen = append(chosen, o)
		tables = append(tables, o.Table.String())
	}
	if _, err := r.acquireLeases(ctx, runID, tables, DefaultLeaseTTL, 0, wait); err != nil {
		return nil, err
	}
	defer r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
	now := r.Now()
	for _, o := range chosen {
		if err := pr.DropTable(ctx, o.Table); err != nil {
			return nil, fmt.Errorf("dropping %s: %w", o.Table, err)
		}
		records := make([]adapters.Record, len(o.records))
		for i, rec := range o.records {
			rec.State, rec.Rows, rec.RunID, rec.StartedAt, rec.FinishedAt, rec.PublishedAt, rec.Error = adapters.RecordRemoved, 0, runID, now, now, now, ""
			records[i] = rec
		}
		if err := r.Adapter.RecordPartitions(ctx, records); err != nil {
			return nil, fmt.Errorf("recording %s removed: %w", o.Name, err)
		}
	}
	host, _ := os.Hostname()
	run := &adapters.Run{ID: runID, Target: r.Target, Status: adapters.RunPruned, Selection: fmt.Sprintf(`{"prune":%q}`, strings.Join(names, ",")),
		Host: host, PID: os.Getpid(), StartedAt: now, FinishedAt: r.Now(), Succeeded: len(chosen)}
	if err := r.Adapter.SaveRun(ctx, run); err != nil {
		return nil, fmt.Errorf("recording the prune: %w", err)
	}
	return chosen, nil
}

// suggestName suggests the orphan closest to n.
func suggestName(n string, orphans []Orphan) string {
	if len(orphans) == 0 {
		return " (it has no model the project lacks)"
	}
	names := make([]string, len(orphans))
	for i, o := range orphans {
		names[i] = o.Name
	}
	return fmt.Sprintf(" (the models it has that the project lacks: %s)", strings.Join(names, ", "))
}
