package snowflake

import (
	"context"
	"errors"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

var _ adapters.Overlayer = (*Adapter)(nil)

// Overlay creates a view in the stage schema of target with the stages'
// windows replaced by their staged rows, listing the first stage's columns
// by name so that column order does not matter.
func (a *Adapter) Overlay(ctx context.Context, target models.Relation, stages []*adapters.Stage, replace bool) (models.Relation, error) {
	if len(stages) == 0 {
		return models.Relation{}, errors.New("snowflake: an overlay needs at least one stage")
	}
	t := stages[0].Tag
	t.Step = "overlay"
	s, err := a.session(ctx, t, "")
	if err != nil {
		return models.Relation{}, err
	}
	defer s.close()
	cols, err := s.columns(stages[0].Relation)
	if err != nil {
		return models.Relation{}, err
	}
	exists, err := s.tableExists(target)
	if err != nil {
		return models.Relation{}, err
	}
	exists = exists && !replace
	view := models.Relation{Schema: a.cfg.StageSchema, Name: a.newName(target, adapters.KindOverlay, stages[0].Tag.RunID)}
	return view, s.exec(overlaySQL(a.d, view, target, exists, stages, cols))
}

// overlaySQL renders the CREATE VIEW of Overlay. A target row is kept when
// it lies outside every stage's window; a row whose partition column is
// NULL lies outside them all, as it survives Publish's DELETE.
func overlaySQL(d Dialect, view, target models.Relation, targetExists bool, stages []*adapters.Stage, cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = d.QuoteExact(c.Name)
	}
	return sqlkit.OverlaySQL(d, view, target, targetExists, stages, strings.Join(names, ", "), "UNION ALL")
}

// DropOverlay drops a view made by Overlay.
func (a *Adapter) DropOverlay(ctx context.Context, view models.Relation) error {
	s, err := a.session(ctx, adapters.Tag{Step: "drop"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.exec(dropSQL(a.d, "VIEW", view))
}
