package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Runner plans and runs backfills of one project against one target.
type Runner struct {
	Project *models.Project
	Target  string // the target's name, recorded with each run
	Adapter adapters.Adapter
	// Scope renders the models for this target: its dialect, default
	// schema and vars.
	Scope *models.Scope
	// Clock stamps ledger records and leases; time.Now when nil.
	Clock func() time.Time
}

func (r *Runner) now() time.Time {
	if r.Clock != nil {
		return r.Clock().UTC()
	}
	return time.Now().UTC()
}

// Records returns the ledger's records for every model of the project.
func (r *Runner) Records(ctx context.Context) ([]adapters.Record, error) {
	names := make([]string, len(r.Project.Models))
	for i, m := range r.Project.Models {
		names[i] = m.Name
	}
	records, err := r.Adapter.Partitions(ctx, names)
	if err != nil {
		return nil, err
	}
	return r.withUnrecorded(ctx, records)
}

// Plan reads the ledger, evaluates the watermarks a scheduled run checks,
// compares the selected tables with the ledger (see Facts), and plans sel.
func (r *Runner) Plan(ctx context.Context, sel Selection) (*Plan, error) {
	facts, err := r.Facts(ctx, sel)
	if err != nil {
		return nil, err
	}
	return NewPlanFacts(r.Project, r.Scope, *facts, sel)
}

// Facts reads what planning sel needs from the warehouse.
func (r *Runner) Facts(ctx context.Context, sel Selection) (*Facts, error) {
	records, err := r.Records(ctx)
	if err != nil {
		return nil, err
	}
	facts := &Facts{Records: records}
	if sel.Scheduled() {
		if facts.Watermarks, err = r.watermarks(ctx, sel); err != nil {
			return nil, err
		}
	}
	if facts.Tables, err = r.tableFacts(ctx, sel, records); err != nil {
		return nil, err
	}
	selected, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	names := make([]string, len(selected))
	for i, m := range selected {
		names[i] = m.Name
	}
	if facts.Versions, err = r.Adapter.Versions(ctx, names); err != nil {
		return nil, fmt.Errorf("reading model versions: %w", err)
	}
	if facts.SchemaChanged, err = r.schemaChanges(ctx, selected); err != nil {
		return nil, err
	}
	return facts, nil
}

// NewRunID returns a sortable, unique run id such as
// 20240102T030405Z-1a2b3c.
func NewRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}
