package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Roles. An Adapter plays one role, chosen once in Open, and every way
// the roles differ is a method of role: no other code asks which one an
// adapter plays.
//
//   - single: one server; refill's tables are plain MergeTree tables.
//   - replicatedCluster: the coordinator of a cluster whose every node
//     holds every row (cluster.go).
//   - shardedCluster: the coordinator of a cluster whose tables are
//     Distributed over a replicated table per shard (sharded.go).
type role interface {
	// guarantee is Info().Guarantee.
	guarantee() string
	// close closes the connections the role opened beyond the adapter's.
	close() error
	// onCluster is " ON CLUSTER name" for statements every node must run,
	// else "".
	onCluster() string

	// createDatabase creates database where the role's tables live.
	createDatabase(ctx context.Context, tag adapters.Tag, database string) error
	// createTable creates a model's table with columns and options.
	createTable(ctx context.Context, tag adapters.Tag, table models.Relation, columns []adapters.TableColumn, opts TableOptions) error
	// dropTable drops a model's table, and what the role made with it.
	dropTable(ctx context.Context, tag adapters.Tag, table models.Relation) error
	// dropShared drops a table made for every node, ignoring errors.
	dropShared(ctx context.Context, tag adapters.Tag, table models.Relation)
	// seedEngine is the engine of a seed's table tmp.
	seedEngine(tmp models.Relation) (string, error)

	// setupLedger creates the ledger's tables where every run reads them.
	setupLedger(ctx context.Context, tag adapters.Tag) error
	// readingLedger readies ledger table table to be read.
	readingLedger(ctx context.Context, tag adapters.Tag, table models.Relation) error

	swapRules

	// structure returns the table whose structure a stage of target (as
	// table reported it: info) copies, and what the server says of it.
	structure(ctx context.Context, tag adapters.Tag, target models.Relation, info *tableInfo) (models.Relation, *tableInfo, error)
	// swap publishes one stage (announce, when set, is called right before
	// the target first changes).
	swap(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error) error
	// announce makes a publication of st findable by a later run, from
	// wherever it runs, should this one stop before recording it: Publish
	// calls it right before the target first changes. On one server the
	// stage itself is that evidence.
	announce(ctx context.Context, tag adapters.Tag, st *adapters.Stage) error
	// runEnded drops what the role kept for run runID: what announce
	// wrote, if nothing it names lacks its records, and the tables its
	// publications reuse.
	runEnded(ctx context.Context, runID string)
	// caughtUp returns once every node holds what the swaps of one
	// Publish (of stages swapped) wrote to target. Publish calls it after
	// it lets go of the target, so the next swap into it need not wait for
	// the replicas.
	caughtUp(ctx context.Context, tag adapters.Tag, target models.Relation, swapped []*adapters.Stage) error
	// settled returns once every node holds what the swaps whose records
	// Flush is about to write wrote to targets: Flush calls it first.
	settled(ctx context.Context, tag adapters.Tag, targets []models.Relation) error
	// swapped returns once the other nodes hold what was just written to
	// table (a seed).
	swapped(ctx context.Context, tag adapters.Tag, table models.Relation) error
	// rebuild replaces target whole (Adapter.Rebuild).
	rebuild(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error

	// onStageHosts runs fn on the adapter of every server that may hold
	// stages (CleanStages, Unrecorded).
	onStageHosts(fn func(h *node) error) error
	// rowsElsewhere counts the rows of t where a table's parts do not show
	// them; ok is false when they do.
	rowsElsewhere(ctx context.Context, tag adapters.Tag, t models.Relation) (n int64, ok bool, err error)
}

// swapRules are what a node's one-server swap (node.swap) asks of the
// role it swaps for.
type swapRules interface {
	// swappable refuses a table whose partitions the role cannot swap.
	swappable(t *tableInfo, r models.Relation) error
	// readsTargetParts says whether a stage's verification reads the
	// target's partitions on the node.
	readsTargetParts() bool
	// createTarget creates a missing target from the stage of swap p;
	// undo drops it again.
	createTarget(ctx context.Context, tag adapters.Tag, p *SwapPlan) (undo func(), err error)
	// splitDrops says a swap's DROP PARTITIONs go in an ALTER of their own.
	splitDrops() bool
}

// single is one server.
type single struct{ a *Adapter }

func (s single) guarantee() string { return capabilities().Guarantee }

func (single) close() error                               { return nil }
func (single) onCluster() string                          { return "" }
func (single) splitDrops() bool                           { return false }
func (single) readsTargetParts() bool                     { return true }
func (single) seedEngine(models.Relation) (string, error) { return seedEngine, nil }

func (s single) createDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	return s.a.exec(ctx, tag, "CREATE DATABASE IF NOT EXISTS "+s.a.d.QuoteIdent(database))
}

func (s single) createTable(ctx context.Context, tag adapters.Tag, table models.Relation, columns []adapters.TableColumn, opts TableOptions) error {
	return s.a.exec(ctx, tag, createTableSQL(s.a.d, table, columns, opts))
}

func (s single) dropTable(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	return s.a.exec(ctx, tag, "DROP TABLE IF EXISTS "+table.Quote(s.a.d))
}

func (s single) dropShared(ctx context.Context, tag adapters.Tag, table models.Relation) {
	s.a.drop(ctx, tag, table)
}

func (s single) setupLedger(ctx context.Context, tag adapters.Tag) error {
	// Nothing when this adapter saw the ledger's tables, and one query
	// rather than five statements when the ledger is there, as it is for
	// every run but the first. (A cluster's nodes are set up every time:
	// one may be new.)
	if s.a.ledgerKnown(ledgerTables...) {
		return nil
	}
	names := make([]string, len(ledgerTables))
	for i, t := range ledgerTables {
		names[i] = s.a.d.QuoteString(t)
	}
	res, err := s.a.query(ctx, tag, fmt.Sprintf("SELECT count() FROM system.tables WHERE database = %s AND name IN (%s)",
		s.a.d.QuoteString(s.a.cfg.LedgerSchema), strings.Join(names, ", ")))
	if err != nil {
		return err
	}
	if len(res.Rows) == 1 && adapters.Int(res.Rows[0][0]) == int64(len(ledgerTables)) {
		return nil
	}
	return s.a.execAll(ctx, tag, ledgerStatements(s.a.d, s.a.cfg.LedgerSchema, ""))
}

func (single) readingLedger(context.Context, adapters.Tag, models.Relation) error { return nil }

func (single) structure(_ context.Context, _ adapters.Tag, target models.Relation, info *tableInfo) (models.Relation, *tableInfo, error) {
	return target, info, nil
}

func (single) swappable(t *tableInfo, r models.Relation) error {
	if err := mergeTree(t, r); err != nil {
		return err
	}
	if strings.HasPrefix(t.Engine, "Replicated") {
		return fmt.Errorf("%s is a %s table: set cluster: in the target to swap replicated tables (refill then creates its tables ON CLUSTER and waits for the other replicas)", r, t.Engine)
	}
	return nil
}

func (s single) swap(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error) error {
	return s.a.node.swap(ctx, tag, st, change, announce, s)
}

func (s single) createTarget(ctx context.Context, tag adapters.Tag, p *SwapPlan) (func(), error) {
	a := s.a
	if err := a.ensureDatabase(ctx, tag, p.Target.Schema); err != nil {
		return nil, err
	}
	err := a.exec(ctx, tag, fmt.Sprintf("CREATE TABLE %s AS %s", p.Target.Quote(a.d), p.Stage.Quote(a.d)))
	a.forget(p.Target)
	if err != nil {
		return nil, err
	}
	return func() { a.drop(ctx, tag, p.Target) }, nil
}

func (single) swapped(context.Context, adapters.Tag, models.Relation) error { return nil }
func (single) caughtUp(context.Context, adapters.Tag, models.Relation, []*adapters.Stage) error {
	return nil
}

func (single) settled(context.Context, adapters.Tag, []models.Relation) error { return nil }

func (single) announce(context.Context, adapters.Tag, *adapters.Stage) error { return nil }
func (single) runEnded(context.Context, string)                              {}

func (s single) rebuild(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	return s.a.rebuildHere(ctx, tag, target, stages, records, columns)
}

func (s single) onStageHosts(fn func(h *node) error) error { return fn(s.a.node) }

func (single) rowsElsewhere(context.Context, adapters.Tag, models.Relation) (int64, bool, error) {
	return 0, false, nil
}

// mergeTree refuses a table of an engine whose partitions refill cannot
// swap.
func mergeTree(t *tableInfo, r models.Relation) error {
	if !strings.HasSuffix(t.Engine, "MergeTree") {
		return fmt.Errorf("%s is a %s table: refill swaps partitions of MergeTree tables only", r, t.Engine)
	}
	return nil
}
