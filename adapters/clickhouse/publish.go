package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// How a swap works. ClickHouse replaces data a physical partition at a
// time: ALTER TABLE target REPLACE PARTITION ID 'p' FROM source swaps in
// source's copy of partition p atomically (hard links, no data copied).
// A model's window need not match the table's partitions: the usual
// ClickHouse advice is monthly partitions, so a daily model's window is a
// few days of one month. Publish therefore:
//
//  1. finds the physical partitions the window touches: those holding
//     target rows inside the window (SELECT DISTINCT over the _part
//     virtual column, whose name begins with the partition ID; this needs
//     no knowledge of the partition expression and works on 18.16 and
//     current servers alike), plus those the stage holds (system.parts);
//  2. builds a swap table like the stage holding, for those partitions,
//     the stage's rows (REPLACE PARTITION from the stage, again hard
//     links) plus the target's rows outside the window (INSERT ...
//     SELECT), so the replace keeps them. The stage itself is never
//     changed, so publishing it again gives the same result;
//  3. swaps in one ALTER: REPLACE PARTITION ID ... FROM the swap table
//     for each partition it holds, and DROP PARTITION ID ... for each
//     touched partition it lacks, so a window whose stage is empty ends
//     empty. (What REPLACE does with a partition the source lacks differs
//     across versions; an explicit DROP does not.)
//
// Whole-table windows and new targets skip step 2 (nothing outside the
// window survives) and replace straight from the stage. Each partition's
// replace is atomic; the ALTER as a whole is not, and the ledger is
// written afterwards. Swaps into one target are serialized, since two
// concurrent swaps into one physical partition would each replace it with
// their own copy.

// Publish swaps each stage into its target and buffers its ledger records
// (see deferred.go). All swaps must be of one target table; ClickHouse
// cannot commit several tables together (adapters.ErrNotSupported).
func (a *Adapter) Publish(ctx context.Context, swaps []adapters.Swap) error {
	if len(swaps) == 0 {
		return nil
	}
	target := a.resolve(swaps[0].Stage.Target)
	for _, sw := range swaps[1:] {
		if t := a.resolve(sw.Stage.Target); t != target {
			return fmt.Errorf("publishing %s and %s together: %w (ClickHouse has no multi-table transactions)", target, t, adapters.ErrNotSupported)
		}
	}
	swapped, err := a.swapAll(ctx, target, swaps)
	if len(swapped) > 0 {
		// Outside the target's lock: the next publication into it swaps
		// while the replicas copy this one. The records wait for them.
		tag := swapped[0].Stage.Tag
		tag.Step = "publish"
		stages := make([]*adapters.Stage, len(swapped))
		for i, sw := range swapped {
			stages[i] = sw.Stage
		}
		if cerr := a.role.caughtUp(ctx, tag, target, stages); cerr != nil {
			for _, sw := range swapped {
				a.hold(sw.Stage)
			}
			return errors.Join(err, fmt.Errorf("publishing into %s: %w: %w", target, adapters.ErrMaybePublished, cerr))
		}
		for _, sw := range swapped {
			a.buffer(sw.Stage, sw.Records)
		}
	}
	return err
}

// swapAll swaps swaps into target, one after the other, holding target's
// lock, and returns those that were swapped.
func (a *Adapter) swapAll(ctx context.Context, target models.Relation, swaps []adapters.Swap) ([]adapters.Swap, error) {
	mu := a.lock(target)
	mu.Lock()
	defer mu.Unlock()
	for i, sw := range swaps {
		tag := sw.Stage.Tag
		tag.Step = "publish"
		announce := func() error { return a.role.announce(ctx, tag, sw.Stage) }
		if err := a.role.swap(ctx, tag, sw.Stage, sw.Change, announce); err != nil {
			if errors.Is(err, adapters.ErrMaybePublished) {
				a.hold(sw.Stage) // evidence for the next run, should the runner fail to record it
			}
			return swaps[:i], fmt.Errorf("publishing %s into %s: %w", sw.Stage.Relation, target, err)
		}
	}
	return swaps, nil
}

// pendingRecords returns records as pending: publication started at their
// PublishedAt.
func pendingRecords(records []adapters.Record) []adapters.Record {
	out := make([]adapters.Record, len(records))
	for i, r := range records {
		r.State, r.Error = adapters.RecordPending, ""
		out[i] = r
	}
	return out
}

// SwapPlan is what Publish learned about one swap before changing
// anything.
type SwapPlan struct {
	Target, Stage models.Relation
	// Work is the swap table; zero to replace straight from the stage.
	Work   models.Relation
	Window adapters.Window
	// Staged are the IDs of the partitions the stage holds; Touched those
	// the swap replaces or drops (Staged plus the target's partitions
	// with rows in the window), sorted.
	Staged, Touched []string
}

// touchedSQL renders the query for the IDs of target's partitions holding
// rows inside w.
func touchedSQL(d Dialect, target models.Relation, w adapters.Window) string {
	if w.Whole() {
		return partitionsSQL(d, target)
	}
	return fmt.Sprintf("SELECT DISTINCT splitByChar('_', _part)[1] FROM %s WHERE %s", target.Quote(d), w.Predicate(d))
}

// partitionsSQL renders the query for the IDs of table's partitions.
func partitionsSQL(d Dialect, table models.Relation) string {
	return fmt.Sprintf("SELECT DISTINCT partition_id FROM system.parts WHERE database = %s AND table = %s AND active ORDER BY partition_id",
		d.QuoteString(table.Schema), d.QuoteString(table.Name))
}

// workStatements render the swap table of p: like the stage, holding the
// stage's partitions and the target's rows of the touched partitions that
// lie outside the window.
func workStatements(d Dialect, p SwapPlan) []string {
	work, stage := p.Work.Quote(d), p.Stage.Quote(d)
	stmts := []string{fmt.Sprintf("CREATE TABLE %s AS %s", work, stage)}
	if len(p.Staged) > 0 {
		clauses := make([]string, len(p.Staged))
		for i, id := range p.Staged {
			clauses[i] = fmt.Sprintf("REPLACE PARTITION ID %s FROM %s", d.QuoteString(id), stage)
		}
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s %s", work, strings.Join(clauses, ", ")))
	}
	// NOT ifNull(...): a row whose window column is NULL is outside the
	// window and must be kept.
	return append(stmts, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE splitByChar('_', _part)[1] IN %s AND NOT ifNull((%s), 0)",
		work, p.Target.Quote(d), idList(d, p.Touched), p.Window.Predicate(d)))
}

// swapSQL renders the ALTER that swaps source's partitions have into
// target and drops target's partitions in touched that source lacks.
func swapSQL(d Dialect, target, source models.Relation, have, touched []string) string {
	var clauses []string
	in := map[string]bool{}
	for _, id := range have {
		in[id] = true
		clauses = append(clauses, fmt.Sprintf("REPLACE PARTITION ID %s FROM %s", d.QuoteString(id), source.Quote(d)))
	}
	for _, id := range touched {
		if !in[id] {
			clauses = append(clauses, "DROP PARTITION ID "+d.QuoteString(id))
		}
	}
	return fmt.Sprintf("ALTER TABLE %s %s", target.Quote(d), strings.Join(clauses, ", "))
}

// splitSwapSQL renders swapSQL's clauses as two ALTERs: the REPLACEs,
// then the DROPs (each omitted when it has no clauses).
func splitSwapSQL(d Dialect, target, source models.Relation, have, touched []string) []string {
	var out []string
	if len(have) > 0 {
		out = append(out, swapSQL(d, target, source, have, have))
	}
	in := map[string]bool{}
	for _, id := range have {
		in[id] = true
	}
	var drop []string
	for _, id := range touched {
		if !in[id] {
			drop = append(drop, id)
		}
	}
	if len(drop) > 0 {
		out = append(out, swapSQL(d, target, source, nil, drop))
	}
	return out
}

func idList(d Dialect, ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = d.QuoteString(id)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// swap publishes one stage on the node (see the comment at the top of
// this file), by the rules of the role it swaps for.
//
// announce, when set, is called right before the target's rows or
// columns first change; its error stops the swap.
func (n *node) swap(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error, rules swapRules) (err error) {
	changing := once(announce)
	p := SwapPlan{Target: n.resolve(st.Target), Stage: st.Relation, Window: st.Window}
	target, err := n.table(ctx, tag, p.Target)
	if err != nil {
		return err
	}
	if target == nil {
		undo, err := rules.createTarget(ctx, tag, &p)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil { // leave no target behind, as before the swap
				undo()
			}
		}()
	}
	if target != nil {
		if err := rules.swappable(target, p.Target); err != nil {
			return err
		}
		if !change.Empty() {
			if err := changing(); err != nil {
				return err
			}
		}
		if err := n.alter(ctx, tag, p.Target, change); err != nil {
			return fmt.Errorf("%w: changing the columns of %s: %w", adapters.ErrMaybePublished, p.Target, err)
		}
	}
	// The stage's partitions and the target's inside the window, as the
	// verification read them (stageParts).
	parts, err := n.stageParts(ctx, st, rules.readsTargetParts())
	if err != nil {
		return err
	}
	p.Staged = parts.staged
	touched, outside := p.Staged, false
	if target != nil {
		inWindow := parts.touched
		outside = parts.outside
		// Read again if the target was created after the verification,
		// or if other swaps since may have added rows outside the window
		// to the partitions it touches.
		if inWindow == nil || !outside && !n.aligned(target, p.Window) {
			if inWindow, outside, err = n.targetParts(ctx, tag, st, target); err != nil {
				return err
			}
		}
		touched = append(slices.Clone(inWindow), p.Staged...)
	}
	p.Touched = unique(touched)
	if len(p.Touched) == 0 {
		return nil // nothing in the window, nothing staged
	}
	if len(p.Staged) == 0 {
		// Only drops follow: the stage must be there, and empty.
		if ok, err := n.exists(ctx, tag, p.Stage); err != nil {
			return err
		} else if !ok {
			return stageGone(p.Stage)
		}
	}
	source, have := p.Stage, p.Staged
	if target != nil && outside {
		p.Work = n.tableName(p.Target, adapters.KindSwap, tag.RunID)
		defer n.drop(ctx, tag, p.Work)
		if err := n.execAll(ctx, tag, workStatements(n.d, p)); err != nil {
			return err
		}
		if have, err = n.ids(ctx, tag, partitionsSQL(n.d, p.Work)); err != nil {
			return err
		}
		source = p.Work
	}
	swap := []string{swapSQL(n.d, p.Target, source, have, p.Touched)}
	if rules.splitDrops() {
		// A replica that is not its table's leader sends an ALTER with a
		// DROP PARTITION to the leader, which lacks the source of the
		// REPLACE clauses: the drops go in an ALTER of their own.
		swap = splitSwapSQL(n.d, p.Target, source, have, p.Touched)
	}
	if err := changing(); err != nil {
		return err
	}
	if err := n.execAll(ctx, tag, swap); err != nil {
		// The ALTER replaces partitions one by one: some may be swapped.
		return fmt.Errorf("%w: %w", adapters.ErrMaybePublished, err)
	}
	if rules.splitDrops() && len(have) < len(p.Touched) {
		// The leader that ran the drops waited for itself only: this
		// replica applies them before the next swap here reads which
		// partitions hold rows outside its window.
		if err := n.syncReplica(ctx, tag, p.Target); err != nil {
			return fmt.Errorf("%w: %w", adapters.ErrMaybePublished, err)
		}
	}
	return nil
}

// aligned reports whether each physical partition of target lies wholly
// inside or wholly outside window w, so that the stage's partitions can
// replace the touched ones as they are.
func (n *node) aligned(target *tableInfo, w adapters.Window) bool {
	if w.Whole() {
		return true
	}
	col, ok := target.column(w.Column)
	return ok && aligned(target.PartitionKey, col.Type, n.server.zone, w)
}

// ids runs a query returning partition IDs.
func (n *node) ids(ctx context.Context, tag adapters.Tag, q string) ([]string, error) {
	res, err := n.query(ctx, tag, q)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = fmt.Sprint(row[0])
	}
	return unique(out), nil
}

func unique(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Rebuild replaces target with a new table holding the stages' rows. The
// new table is built beside it, then swapped in by EXCHANGE TABLES where
// the database engine has it (Atomic, 20.4 and later; atomic), or else by
// one RENAME of both tables (Ordinary databases, such as 18.16's: a query
// at that moment may find no table, never a mix of old and new rows). The
// ledger records the partitions pending before the swap and done after.
func (a *Adapter) Rebuild(ctx context.Context, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	if len(stages) == 0 {
		return nil
	}
	target = a.resolve(target)
	mu := a.lock(target)
	mu.Lock()
	defer mu.Unlock()
	tag := stages[0].Tag
	tag.Step = "rebuild"
	return a.role.rebuild(ctx, tag, target, stages, records, columns)
}

// rebuildHere is Rebuild on one server: the new table is made beside the
// target, filled from the stages, and swapped in (EXCHANGE TABLES where
// the database is Atomic, else RENAME).
func (a *Adapter) rebuildHere(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	defer a.forget(target)
	if err := a.ensureDatabase(ctx, tag, target.Schema); err != nil {
		return err
	}
	fresh := a.tableName(target, adapters.KindSwap, tag.RunID)
	defer a.drop(ctx, tag, fresh)
	create := fmt.Sprintf("CREATE TABLE %s AS %s", fresh.Quote(a.d), stages[0].Relation.Quote(a.d))
	if columns != nil {
		opts, err := modelTableOptions(a.d, stages[0].Model, false)
		if err != nil {
			return err
		}
		create = createTableSQL(a.d, fresh, columns, opts)
	}
	if err := a.exec(ctx, tag, create); err != nil {
		return err
	}
	if err := a.insertStages(ctx, tag, fresh, stages); err != nil {
		return err
	}
	ledger := tag
	ledger.Step = "ledger"
	if err := a.writeRecords(ctx, ledger, pendingRecords(records)); err != nil {
		return err
	}
	exists, err := a.exists(ctx, tag, target)
	if err != nil {
		return err
	}
	switch {
	case !exists:
		err = a.exec(ctx, tag, fmt.Sprintf("RENAME TABLE %s TO %s", fresh.Quote(a.d), target.Quote(a.d)))
	case a.atomic(ctx, tag, target.Schema):
		err = a.exec(ctx, tag, fmt.Sprintf("EXCHANGE TABLES %s AND %s", target.Quote(a.d), fresh.Quote(a.d)))
	default:
		old := a.tableName(target, adapters.KindSwap, tag.RunID)
		defer a.drop(ctx, tag, old)
		err = a.exec(ctx, tag, fmt.Sprintf("RENAME TABLE %s TO %s, %s TO %s", target.Quote(a.d), old.Quote(a.d), fresh.Quote(a.d), target.Quote(a.d)))
	}
	if err != nil {
		return fmt.Errorf("%w: swapping in the rebuilt %s: %w", adapters.ErrMaybePublished, target, err)
	}
	if err := a.writeRecords(ctx, ledger, records); err != nil {
		return fmt.Errorf("%s was rebuilt, but recording it in the ledger failed (the next run redoes it): %w: %w", target, adapters.ErrMaybePublished, err)
	}
	return nil
}

// insertStages inserts the rows of stages into table, by the names of
// the columns an INSERT fills.
func (n *node) insertStages(ctx context.Context, tag adapters.Tag, table models.Relation, stages []*adapters.Stage) error {
	cols, err := n.columns(ctx, table)
	if err != nil {
		return err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = n.d.QuoteIdent(c.Name)
	}
	list := strings.Join(names, ", ")
	for _, st := range stages {
		if err := n.exec(ctx, tag, fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", table.Quote(n.d), list, list, st.Relation.Quote(n.d))); err != nil {
			return err
		}
	}
	return nil
}

// atomic reports whether database uses the Atomic engine, which has
// EXCHANGE TABLES.
func (a *Adapter) atomic(ctx context.Context, tag adapters.Tag, database string) bool {
	res, err := a.query(ctx, tag, "SELECT engine FROM system.databases WHERE name = "+a.d.QuoteString(database))
	return err == nil && len(res.Rows) == 1 && fmt.Sprint(res.Rows[0][0]) == "Atomic"
}
