package clickhouse

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Ledger records after the fact. A swap (ALTER TABLE ... REPLACE
// PARTITION) and an INSERT into the ledger cannot be one transaction, and
// an INSERT costs ClickHouse a new part: on 18.16 about as much as the
// swap and the stage together. So Publish swaps, keeps the stage, and
// buffers the records; Flush writes the buffered records in one INSERT
// (at most Config.FlushAfter after the first, a second by default, or when
// flushRecords are waiting, or when the run ends) and only then drops their stages. A crash in
// between leaves the stages, whose names carry their windows
// (adapters.WindowTag): the next run records their partitions pending
// before it plans (adapters.Deferrer), as it would a pending record.

const (
	defaultFlushAfter = time.Second
	flushRecords      = 2000
)

// deferred is the publications whose records are not written yet.
type deferred struct {
	mu      sync.Mutex
	records []adapters.Record
	// targets are the tables the buffered records' swaps wrote, by name.
	targets map[string]models.Relation
	// stages are the stages of the buffered records, and of publications
	// that failed half-way (kept as evidence for the next run): DropStage
	// leaves them to Flush, or for good.
	stages map[string]*held
	gen    uint64 // the flush the records buffered now go out with
	timer  *time.Timer
	// flushing serializes flushes.
	flushing sync.Mutex
}

type held struct {
	rel  models.Relation
	hold stageHold
	gen  uint64
}

type stageHold int

const (
	holdUnrecorded     stageHold = iota + 1 // published; records buffered
	holdDropWanted                          // published; DropStage was called
	holdMaybePublished                      // a swap failed half-way: kept
)

// buffer keeps the records of a publication of st until Flush.
func (a *Adapter) buffer(st *adapters.Stage, records []adapters.Record) {
	d := &a.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records = append(d.records, records...)
	target := a.resolve(st.Target)
	if d.targets == nil {
		d.targets = map[string]models.Relation{}
	}
	d.targets[target.String()] = target
	d.stages[st.Relation.String()] = &held{rel: st.Relation, hold: holdUnrecorded, gen: d.gen}
	switch {
	case len(d.records) >= flushRecords:
		go a.backgroundFlush()
	case d.timer == nil:
		d.timer = time.AfterFunc(cmp.Or(a.cfg.FlushAfter, defaultFlushAfter), a.backgroundFlush)
	}
}

// clean reports whether no publication awaits its records and no stage
// is kept as evidence.
func (d *deferred) clean() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.records) == 0 && len(d.stages) == 0
}

// hold keeps st for good: the next run's housekeeping finds it.
func (a *Adapter) hold(st *adapters.Stage) {
	a.deferred.mu.Lock()
	a.deferred.stages[st.Relation.String()] = &held{rel: st.Relation, hold: holdMaybePublished}
	a.deferred.mu.Unlock()
}

// held reports whether DropStage must leave st, and notes that its drop
// was asked for.
func (a *Adapter) held(st *adapters.Stage) bool {
	d := &a.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.stages[st.Relation.String()]
	if h == nil {
		return false
	}
	if h.hold == holdUnrecorded {
		h.hold = holdDropWanted
	}
	return true
}

// backgroundFlush flushes; a failure keeps the records for the next
// Flush, which reports it if it fails too.
func (a *Adapter) backgroundFlush() { a.Flush(context.Background()) }

// Flush writes the records of every publication so far, then drops the
// stages the runner is done with.
func (a *Adapter) Flush(ctx context.Context) error {
	d := &a.deferred
	d.flushing.Lock()
	defer d.flushing.Unlock()
	d.mu.Lock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	records, targets, taken := d.records, d.targets, d.gen
	d.records, d.targets = nil, nil
	d.gen++
	d.mu.Unlock()
	if len(records) > 0 {
		tag := adapters.Tag{Step: "ledger"}
		err := a.role.settled(ctx, tag, slices.SortedFunc(maps.Values(targets), func(x, y models.Relation) int { return strings.Compare(x.String(), y.String()) }))
		if err == nil {
			err = a.writeRecords(ctx, tag, records)
		}
		if err != nil {
			d.mu.Lock()
			d.records = append(records, d.records...)
			if d.targets == nil {
				d.targets = map[string]models.Relation{}
			}
			maps.Copy(d.targets, targets)
			d.mu.Unlock()
			return fmt.Errorf("recording %d published partitions in the ledger (their staging tables are kept, so the next run redoes them): %w", len(records), err)
		}
	}
	// The stages of the records written are released: dropped if the
	// runner is done with them, else left to DropStage.
	var drop []models.Relation
	d.mu.Lock()
	for name, h := range d.stages {
		if h.hold == holdMaybePublished || h.gen > taken {
			continue
		}
		if h.hold == holdDropWanted {
			drop = append(drop, h.rel)
		}
		delete(d.stages, name)
	}
	d.mu.Unlock()
	// In name order, so that a run's statements are the same every time.
	slices.SortFunc(drop, func(x, y models.Relation) int { return strings.Compare(x.Name, y.Name) })
	for _, r := range drop {
		a.drop(ctx, adapters.Tag{Step: "drop"}, r)
	}
	return nil
}

// Unrecorded lists the staging tables of the runs dead reports, and the
// stages their lists name (published.go), on a cluster on every node that
// answers: a run's coordinator may have been another node, or be gone.
func (a *Adapter) Unrecorded(ctx context.Context, dead func(runToken string) bool) ([]string, error) {
	var out []string
	err := a.role.onStageHosts(func(h *node) error {
		tag := adapters.Tag{Step: "clean"}
		names, err := h.tablesWithPrefix(ctx, tag, h.cfg.StageSchema, "")
		if err != nil {
			return err
		}
		for _, name := range names {
			if token, ok := adapters.StageRun(name); ok && dead(token) && adapters.IsStage(name) {
				out = append(out, name)
			}
		}
		listed, err := h.listedHere(ctx, tag, names, dead)
		out = append(out, listed...)
		return err
	})
	slices.Sort(out)
	return slices.Compact(out), err
}
