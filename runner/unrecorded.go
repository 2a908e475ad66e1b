package runner

import (
	"context"
	"fmt"
)

// recordUnrecorded writes the pending records of what the stages of dead
// runs may hold, before housekeeping drops those stages.
func (r *Runner) recordUnrecorded(ctx context.Context, live map[string]bool) error {
	pending, err := r.Unrecorded(ctx, live)
	if err != nil || len(pending) == 0 {
		return err
	}
	if err := r.Adapter.RecordPartitions(ctx, pending); err != nil {
		return fmt.Errorf("recording as pending %d partitions that stopped runs may have published: %w", len(pending), err)
	}
	return nil
}
