package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

var _ adapters.Overlayer = (*Adapter)(nil)

// Overlay creates a view of target as it will read once stages are
// published: with replace, the stages' rows alone (a rebuild of a model
// reading its own past reads its earlier partitions from it before
// anything is swapped); else the target's rows outside the stages'
// windows and the stages'. The view lives beside the stages, on the
// server that holds them (a cluster's coordinator); CleanStages drops one
// a crashed run left.
func (a *Adapter) Overlay(ctx context.Context, target models.Relation, stages []*adapters.Stage, replace bool) (models.Relation, error) {
	if len(stages) == 0 {
		return models.Relation{}, errors.New("an overlay needs at least one stage")
	}
	tag := stages[0].Tag
	tag.Step = "overlay"
	target = a.resolve(target)
	exists := false
	if !replace {
		t, err := a.table(ctx, tag, target)
		if err != nil {
			return models.Relation{}, err
		}
		exists = t != nil
	}
	names := make([]string, len(stages[0].Columns))
	for i, c := range stages[0].Columns {
		names[i] = a.d.QuoteIdent(c.Name)
	}
	view := a.tableName(target, adapters.KindOverlay, tag.RunID)
	if err := a.ensureDatabase(ctx, tag, view.Schema); err != nil {
		return models.Relation{}, err
	}
	if err := a.exec(ctx, tag, sqlkit.OverlaySQL(a.d, view, target, exists, stages, strings.Join(names, ", "), "UNION ALL")); err != nil {
		return models.Relation{}, fmt.Errorf("creating the overlay of %s: %w", target, err)
	}
	return view, nil
}

// DropOverlay drops a view Overlay created.
func (a *Adapter) DropOverlay(ctx context.Context, view models.Relation) error {
	defer a.forget(view)
	return a.exec(ctx, adapters.Tag{Step: "overlay"}, "DROP TABLE IF EXISTS "+view.Quote(a.d))
}
