package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Watermarks maps a model name and partition key to the current value of
// the model's watermark query for that partition.
type Watermarks map[string]map[string]string

// Watermark runs m's watermark query for partition p and returns its first
// value as text ("" for NULL or no rows).
func Watermark(ctx context.Context, a adapters.Adapter, scope *models.Scope, m *models.Model, p models.Partition, runID string) (string, error) {
	sql, err := m.RenderTemplate(m.Config.Watermark, scope, p)
	if err != nil {
		return "", err
	}
	res, err := a.Query(ctx, sql, adapters.Tag{RunID: runID, Model: m.Name, Partition: p.Key, Step: "watermark"})
	if err != nil {
		return "", fmt.Errorf("watermark of %s %s: %w", m.Name, p.Key, err)
	}
	if len(res.Rows) == 0 || len(res.Rows[0]) == 0 {
		return "", nil
	}
	switch v := res.Rows[0][0].(type) {
	case nil:
		return "", nil
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), nil
	default:
		return fmt.Sprint(v), nil
	}
}

// watermarks evaluates the watermark query of every selected model that
// has one, for the partitions a scheduled run of sel would check: its
// lookback window, or every partition of a whole-table or list model whose
// refresh rule is its watermark.
func (r *Reader) watermarks(ctx context.Context, sel Selection) (Watermarks, error) {
	selected, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	out := Watermarks{}
	for _, m := range selected {
		if m.Config.Watermark == nil {
			continue
		}
		keys := lookbackKeys(m, sel)
		if m.Kind() != models.TimePartitioned && m.RefreshRule().Mode == models.RefreshWatermark {
			keys = map[string]bool{}
			for _, p := range m.Partitions(time.Time{}, time.Time{}) {
				keys[p.Key] = true
			}
		}
		out[m.Name] = map[string]string{}
		for key := range keys {
			p, err := m.Partition(key)
			if err != nil {
				return nil, err
			}
			v, err := Watermark(ctx, r.Adapter, r.Scope, m, p, "")
			if err != nil {
				return nil, err
			}
			out[m.Name][key] = v
		}
	}
	return out, nil
}
