package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// together stages every unit, model by model in graph order, and then
// publishes all of them in one transaction. A model reads its upstream
// models through overlay views: the published table with this run's staged
// windows in place of the old ones, so it computes from the new data before
// anything is published. Any failure publishes nothing.
func (e *execution) together(ctx context.Context) {
	ov, _ := e.r.Adapter.(adapters.Overlayer)
	defer e.cleanupStaged(ctx)
	byModel := map[*models.Model][]*unit{}
	for i := range e.units {
		u := &e.units[i]
		byModel[u.model] = append(byModel[u.model], u)
	}
	hasDownstream := map[*models.Model]bool{}
	for _, s := range e.plan.Runs() {
		for _, up := range s.Model.Upstream {
			hasDownstream[up] = true
		}
	}
	for _, m := range e.plan.Models {
		units := byModel[m]
		if len(units) == 0 {
			continue
		}
		if m.Config.Self {
			// Each partition reads the one before it: staged in order, each
			// then visible to the next through an overlay.
			for _, u := range units {
				if failed := e.stageAll(ctx, []*unit{u}); failed != nil {
					e.abortTogether(ctx, failed)
					return
				}
				if err := e.overlaySelf(ctx, m, e.stagesOf(m), false); err != nil {
					e.abortTogether(ctx, err)
					return
				}
			}
		} else if failed := e.stageAll(ctx, units); failed != nil {
			e.abortTogether(ctx, failed)
			return
		}
		if hasDownstream[m] && ov != nil {
			view, err := ov.Overlay(ctx, e.r.Scope.Relation(m), e.stagesOf(m), false)
			if err != nil {
				e.abortTogether(ctx, fmt.Errorf("creating the overlay of %s: %w", m.Name, err))
				return
			}
			e.mu.Lock()
			e.overlays = append(e.overlays, view)
			if e.refs == nil {
				e.refs = map[string]models.SQL{}
			}
			e.refs[m.Name] = models.SQL(view.Quote(e.r.Adapter.Dialect()))
			e.mu.Unlock()
		}
	}
	if e.stopped() || ctx.Err() != nil {
		e.abortTogether(ctx, nil)
		return
	}
	if e.opts.Review != nil {
		diffs, err := e.reviewStages(ctx)
		if err != nil {
			e.abortTogether(ctx, fmt.Errorf("diffing the stages for review: %w", err))
			return
		}
		if err := e.opts.Review(diffs); err != nil {
			e.skipUnsettled("not published: " + err.Error())
			return
		}
		if e.stopped() || ctx.Err() != nil {
			e.abortTogether(ctx, nil)
			return
		}
	}
	var swaps []adapters.Swap
	now := e.r.Now() // every partition is published at this one moment
	for _, su := range e.staged {
		for i := range su.records {
			su.records[i].FinishedAt, su.records[i].PublishedAt = now, now
		}
		su.stage.Tag.Step = "publish"
		swaps = append(swaps, adapters.Swap{Stage: su.stage, Records: su.records, Change: su.change})
	}
	var err error
	for attempt := 1; ; attempt++ {
		if err = e.r.Adapter.Publish(ctx, swaps); err == nil || !adapters.Transient(e.r.Adapter, err) || attempt > e.opts.Retries {
			break
		}
	}
	if err != nil {
		var nodes []*node
		for _, su := range e.staged {
			nodes = append(nodes, su.nodes...)
		}
		e.fail(ctx, nodes, fmt.Errorf("publishing together: %w", err), 1, 0)
		return
	}
	for _, su := range e.staged {
		for i, n := range su.nodes {
			e.settle(n, PartitionResult{Status: Succeeded, Rows: su.records[i].Rows, Attempts: su.attempts})
		}
	}
}

// stageAll stages units concurrently and returns the first failure.
func (e *execution) stageAll(ctx context.Context, units []*unit) error {
	conc := e.opts.Concurrency
	if len(units) > 0 && comparesWithPrevious(units[0].model) {
		conc = 1 // each partition's audit compares with the previous one's rows
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, u := range units {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if e.stopped() || ctx.Err() != nil {
				return
			}
			groups := [][]*node{u.nodes}
			for len(groups) > 0 {
				group := groups[0]
				groups = groups[1:]
				su, err, attempts, dur := e.attempt(ctx, group, true)
				if err == nil {
					e.mu.Lock()
					e.staged = append(e.staged, su)
					e.mu.Unlock()
					continue
				}
				if len(group) > 1 && e.opts.SplitFailed && ctx.Err() == nil {
					// Stage the batch's partitions one by one, so that the
					// ledger names the ones that failed.
					for _, n := range group {
						groups = append(groups, []*node{n})
					}
					continue
				}
				e.fail(ctx, group, err, attempts, dur)
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("%s %s failed", u.model.Name, keyRange(group))
				}
				mu.Unlock()
				e.stop("not published: --publish together publishes nothing when any partition fails")
			}
		}()
	}
	wg.Wait()
	return first
}

// abortTogether skips every partition not already final.
func (e *execution) abortTogether(ctx context.Context, cause error) {
	why := "not published: the run was interrupted before publishing"
	if cause == nil {
		e.mu.Lock()
		e.summary.Interrupted = true
		e.mu.Unlock()
	} else {
		first, _, _ := strings.Cut(cause.Error(), "\n")
		why = fmt.Sprintf("not published: --publish together publishes nothing when any partition fails (%v)", first)
	}
	e.skipUnsettled(why)
}

// skipUnsettled skips every partition not already final, for why.
func (e *execution) skipUnsettled(why string) {
	for _, n := range e.nodes {
		if !n.done() {
			e.settle(n, PartitionResult{Status: Skipped, Err: errors.New(why)})
		}
	}
}

func (e *execution) stagesOf(m *models.Model) []*adapters.Stage {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*adapters.Stage
	for _, su := range e.staged {
		if su.stage.Model == m {
			out = append(out, su.stage)
		}
	}
	return out
}

// overlayRefs returns the ref() replacements of a together run.
func (e *execution) overlayRefs() map[string]models.SQL {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.refs) == 0 {
		return nil
	}
	return maps.Clone(e.refs)
}

func (e *execution) cleanupStaged(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if ov, ok := e.r.Adapter.(adapters.Overlayer); ok {
		for _, v := range e.overlays {
			ov.DropOverlay(ctx, v)
		}
	}
	for _, su := range e.staged {
		e.r.Adapter.DropStage(ctx, su.stage)
	}
}
