package duckdb

import (
	"context"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

var _ adapters.Overlayer = (*Adapter)(nil)

// Overlay creates a view of target with the stages' windows replaced by
// their staged rows.
func (a *Adapter) Overlay(ctx context.Context, target models.Relation, stages []*adapters.Stage, replace bool) (models.Relation, error) {
	exists, err := a.tableExists(ctx, target)
	if err != nil {
		return models.Relation{}, err
	}
	exists = exists && !replace
	runID := ""
	if len(stages) > 0 {
		runID = stages[0].Tag.RunID
	}
	view := a.stageRelation(target, adapters.KindOverlay, runID)
	return view, a.run(ctx, "overlay", overlaySQL(a.d, view, a.qualified(target), exists, stages))
}

// overlaySQL renders the CREATE VIEW of Overlay.
func overlaySQL(d Dialect, view, target models.Relation, targetExists bool, stages []*adapters.Stage) string {
	return sqlkit.OverlaySQL(d, view, target, targetExists, stages, "*", "UNION ALL BY NAME")
}

// DropOverlay drops a view made by Overlay.
func (a *Adapter) DropOverlay(ctx context.Context, view models.Relation) error {
	return a.run(ctx, "overlay", "DROP VIEW IF EXISTS "+view.Quote(a.d))
}
