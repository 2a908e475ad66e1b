package clickhouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// The sharded layout: a model's table is Distributed over a replicated
// table per shard (see the comment at the top of cluster.go). What it does
// differently from the replicated layout is here.

// shardedCluster is the coordinator of a cluster whose tables are
// Distributed over a replicated table per shard (the sharded layout).
type shardedCluster struct{ replicatedCluster }

func (s shardedCluster) createTable(ctx context.Context, tag adapters.Tag, table models.Relation, columns []adapters.TableColumn, opts TableOptions) error {
	if opts.ShardingKey == "" {
		opts.ShardingKey = s.c.key
	}
	return s.replicatedCluster.createTable(ctx, tag, table, columns, opts)
}

// dropTable drops the Distributed table and the shards' tables under it.
func (s shardedCluster) dropTable(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	if err := s.replicatedCluster.dropTable(ctx, tag, table); err != nil {
		return err
	}
	local := table
	local.Name += LocalSuffix
	return s.replicatedCluster.dropTable(ctx, tag, local)
}

// structure: a stage copies the local table under the Distributed target.
func (s shardedCluster) structure(ctx context.Context, tag adapters.Tag, target models.Relation, info *tableInfo) (models.Relation, *tableInfo, error) {
	if info == nil {
		return target, nil, nil
	}
	local, linfo, _, err := s.localOf(ctx, tag, target, info)
	return local, linfo, err
}

// readsTargetParts: each shard's swap reads its own part of the target.
func (shardedCluster) readsTargetParts() bool { return false }

func (s shardedCluster) swap(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error) error {
	return s.swapSharded(ctx, tag, st, change, announce)
}

// caughtUp waits, on every shard at once, until the replicas other than
// the one each stage's part was swapped on have applied the swaps.
func (r shardedCluster) caughtUp(ctx context.Context, tag adapters.Tag, _ models.Relation, swapped []*adapters.Stage) error {
	need := map[*node]models.Relation{}
	for _, st := range swapped {
		sw := stateOf(st).shards
		if sw == nil {
			continue
		}
		for i, applied := range sw.on {
			for _, n := range r.c.shards[i] {
				if n != applied {
					need[n] = sw.local
				}
			}
		}
	}
	var nodes []*node
	for _, n := range r.c.nodes() {
		if _, ok := need[n]; ok {
			nodes = append(nodes, n)
		}
	}
	return errors.Join(onEach(nodes, func(_ int, n *node) error {
		if err := n.syncReplica(ctx, tag, need[n]); err != nil && !unreachable(err) {
			return fmt.Errorf("waiting for %s to replicate %s: %w", n.addr, need[n], err)
		}
		return nil
	})...)
}

// settled: caughtUp did it, before anything read the shards.
func (shardedCluster) settled(context.Context, adapters.Tag, []models.Relation) error { return nil }

// shardSwaps are where a stage's parts were swapped: into local, on
// on[i] for shard i.
type shardSwaps struct {
	local models.Relation
	on    []*node
}

// rowsElsewhere: a Distributed table has no parts of its own here; its
// rows are on the shards.
func (s shardedCluster) rowsElsewhere(ctx context.Context, tag adapters.Tag, t models.Relation) (int64, bool, error) {
	n, err := s.shardedRows(ctx, tag, t)
	return n, true, err
}

// swapSharded publishes st into a sharded target (see the comment at the
// top of this file).
func (r shardedCluster) swapSharded(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error) (err error) {
	a := r.a
	changing := once(announce)
	target := a.resolve(st.Target)
	stage, err := a.stageTable(ctx, tag, st.Relation)
	if err != nil {
		return err
	}
	info, err := a.table(ctx, tag, target)
	if err != nil {
		return err
	}
	var local models.Relation
	var linfo *tableInfo
	var dist distributed
	if info == nil {
		key, err := r.shardingKey(st.Model)
		if err != nil {
			return err
		}
		if local, err = r.createOnCluster(ctx, tag, target, columnDefs(a.d, stage.Columns), stage.EngineClause, key, false); err != nil {
			return err
		}
		defer func() {
			if err != nil { // leave no target behind, as before the swap
				r.dropOnCluster(ctx, tag, target)
				r.dropOnCluster(ctx, tag, local)
			}
		}()
		dist = distributed{cluster: r.c.name, database: local.Schema, table: local.Name, key: key}
		if linfo, err = a.table(ctx, tag, local); err == nil && linfo == nil {
			err = fmt.Errorf("%s was created on cluster %s but does not exist on %s", local, r.c.name, a.addr)
		}
		if err != nil {
			return err
		}
	} else {
		if local, linfo, dist, err = r.localOf(ctx, tag, target, info); err != nil {
			return err
		}
		if !change.Empty() {
			if err := changing(); err != nil {
				return err
			}
			if err := r.alterSharded(ctx, tag, target, local, change); err != nil {
				return fmt.Errorf("%w: changing the columns of %s: %w", adapters.ErrMaybePublished, target, err)
			}
			if linfo, err = a.table(ctx, tag, local); err != nil {
				return err
			}
		}
	}

	// Route the stage's rows to their shards: a plain table like the
	// stage on every node, and a Distributed table over it into which the
	// stage is inserted synchronously. With internal_replication (which
	// replicated local tables need), one INSERT sends each shard's rows to
	// one of its replicas, chosen by the server's load_balancing (the
	// coordinator's own when it is one); the counts say which. (A table
	// replicated within each shard instead, created and dropped per stage,
	// cost each node some 150 ms of ZooKeeper round trips for each.) The
	// tables serve the run's next publication into the target with the
	// same columns too, emptied after each (see routes).
	rt, err := r.routeTables(ctx, tag, target, stage, dist.key)
	if err != nil {
		return err
	}
	part, route, shards := rt.part, rt.route, rt.shards
	defer func() { r.c.routes.release(context.WithoutCancel(ctx), tag, rt, err == nil) }()
	routeCtx := withSettings(ctx, clickhouse.Settings{"insert_distributed_sync": 1})
	if err := a.exec(routeCtx, tag, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", route.Quote(a.d), st.Relation.Quote(a.d))); err != nil {
		return err
	}
	want, err := a.stageRows(ctx, tag, st)
	if err != nil {
		return err
	}
	got := int64(0)
	first, rows, err := r.holders(ctx, tag, shards, part)
	if err != nil {
		return err
	}
	for i, c := range rows {
		if c > 0 {
			rt.filled = append(rt.filled, first[i])
		}
	}
	counts := make([]string, len(shards))
	for i, c := range rows {
		got += c
		counts[i] = fmt.Sprintf("shard %d: %d", i+1, c)
	}
	if got != want {
		return fmt.Errorf("the stage's %d rows reached the shards as %d (%s); nothing was swapped", want, got, strings.Join(counts, ", "))
	}

	// Swap each shard's part into its local table, all shards at once.
	// One after the other would not make a crash safer: either way it can
	// leave one shard new and another old, and the lists name the stage
	// (announce), so that the next run finds the partition pending and
	// publishes it again. Each shard's other replicas catch up once the
	// target is let go (caughtUp); a replica reads its partitions only
	// after applying what the others wrote since it last did (catchUp).
	if err := changing(); err != nil {
		return err
	}
	for i, n := range first {
		for _, other := range r.c.shards[i] {
			if other != n {
				other.behind(local)
			}
		}
	}
	errs := onEach(first, func(i int, n *node) error {
		sub := &adapters.Stage{Relation: part, Target: local, Model: st.Model, Window: st.Window, Tag: st.Tag, Columns: st.Columns,
			State: &stageState{key: linfo.PartitionKey}}
		if err := n.swap(ctx, tag, sub, nil, nil, replica{n.addr}); err != nil {
			return fmt.Errorf("shard %d (on %s): %w", i+1, n.addr, err)
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		if !errors.Is(err, adapters.ErrMaybePublished) && slices.Contains(errs, nil) {
			err = fmt.Errorf("%w: %w", adapters.ErrMaybePublished, err) // another shard was swapped
		}
		return err
	}
	s := stateOf(st)
	s.shards = &shardSwaps{local: local, on: first}
	st.State = s
	return nil
}

// holders finds, for each shard, the replica among shards[i] that holds
// its rows of part (routed there through a Distributed table), and how
// many it holds; a shard that received no rows swaps on its first replica
// that answers (its partitions in the window are dropped). Rows of one
// shard on two replicas fail it: the cluster's internal_replication is
// false, or a replica failed during the routing.
func (r shardedCluster) holders(ctx context.Context, tag adapters.Tag, shards [][]*node, part models.Relation) ([]*node, []int64, error) {
	var all []*node
	for _, nodes := range shards {
		all = append(all, nodes...)
	}
	counts := make([]int64, len(all))
	errs := onEach(all, func(i int, n *node) error {
		res, err := n.query(ctx, tag, "SELECT count() FROM "+part.Quote(r.a.d))
		if err != nil {
			return fmt.Errorf("on %s: %w", n.addr, err)
		}
		counts[i] = adapters.Int(res.Rows[0][0])
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	first, rows := make([]*node, len(shards)), make([]int64, len(shards))
	k := 0
	for i, nodes := range shards {
		first[i] = nodes[0]
		var with []string
		for _, n := range nodes {
			if c := counts[k]; c > 0 {
				first[i], rows[i] = n, c
				with = append(with, fmt.Sprintf("%s: %d", n.addr, c))
			}
			k++
		}
		if len(with) > 1 {
			return nil, nil, fmt.Errorf("the rows routed to shard %d reached more than one of its replicas (%s): refill's sharded layout needs internal_replication set in the cluster's configuration, or a replica failed during the routing; nothing was swapped",
				i+1, strings.Join(with, ", "))
		}
	}
	return first, rows, nil
}

// alterSharded applies change to the local table on one replica of each
// shard (ZooKeeper carries it to the others) and to the Distributed table
// on every node (ClickHouse refuses ALTER ... ON CLUSTER of a table that
// is not replicated on a cluster whose shards are). A node that does not
// answer fails it: run again once it is back, which applies what is
// missing.
func (r shardedCluster) alterSharded(ctx context.Context, tag adapters.Tag, target, local models.Relation, change *adapters.SchemaChange) error {
	defer r.forget(local)
	defer r.forget(target)
	for i, replicas := range r.c.shards {
		done := false
		for _, n := range replicas {
			err := n.alter(ctx, tag, local, change)
			if unreachable(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("on %s: %w", n.addr, err)
			}
			done = true
			break
		}
		if !done {
			return fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, r.c.name)
		}
	}
	return r.alterEveryNode(ctx, tag, target, change)
}

// shardedRows counts the rows of a table of the sharded layout from the
// parts of its local table on one replica of each shard (after it has
// caught up), or returns -1 when that cannot be known: an engine whose
// merges change row counts, or a shard none of whose replicas answers.
func (r shardedCluster) shardedRows(ctx context.Context, tag adapters.Tag, t models.Relation) (int64, error) {
	a := r.a
	info, err := a.table(ctx, tag, a.resolve(t))
	if err != nil || info == nil {
		return -1, err
	}
	dist, ok := distributedOf(info.EngineClause)
	if !ok {
		return 0, nil // an empty table of another engine
	}
	local := models.Relation{Schema: cmp.Or(dist.database, a.schema(t)), Name: dist.table}
	total := int64(0)
	for _, replicas := range r.c.shards {
		counted := false
		for _, n := range replicas {
			var res *adapters.Result
			err := n.syncReplica(ctx, tag, local)
			if err == nil {
				res, err = n.query(ctx, tag, fmt.Sprintf("SELECT sum(rows), any(engine) FROM system.parts WHERE active AND database = %s AND table = %s",
					a.d.QuoteString(local.Schema), a.d.QuoteString(local.Name)))
			}
			if err != nil {
				continue // down, or without the table yet: another replica may do
			}
			for _, e := range mergingEngines {
				if strings.Contains(fmt.Sprint(res.Rows[0][1]), e) {
					return -1, nil
				}
			}
			total += adapters.Int(res.Rows[0][0])
			counted = true
			break
		}
		if !counted {
			return -1, nil
		}
	}
	return total, nil
}

// routing is a sharded publication's way to the shards: part, a plain
// table like the stage on each node of shards, and route, a Distributed
// table over them on the coordinator.
type routing struct {
	key         string // the target, run and part's definition it serves
	runID       string
	coordinator *node
	part, route models.Relation
	shards      [][]*node // per shard, the replicas that have part
	everyNode   bool      // every node of the cluster has part
	// filled are the nodes the last publication's rows reached.
	filled []*node
}

// routes keeps the routing tables of a run's publications, so that the
// next publication into the same target reuses them (two publications
// into one target never route at once: swaps into it are serialized).
// Created on every node and dropped, they took ten DDL statements per
// partition; reused, a partition empties the tables its rows reached.
type routes struct {
	mu   sync.Mutex
	kept map[string]*routing
}

// routeTables returns the routing tables for a stage like stage into the
// sharded target (key: its sharding key), kept from an earlier
// publication of the run or made now.
func (r shardedCluster) routeTables(ctx context.Context, tag adapters.Tag, target models.Relation, stage *tableInfo, key string) (*routing, error) {
	a := r.a
	defs, engine := columnDefs(a.d, stage.Columns), unreplicated(stage.EngineClause)
	rkey := strings.Join([]string{target.String(), tag.RunID, defs, engine, key}, "\x00")
	if rt := r.c.routes.take(rkey); rt != nil {
		return rt, nil
	}
	rt := &routing{key: rkey, runID: tag.RunID, coordinator: a.node, everyNode: true,
		part: a.tableName(target, kindShard, tag.RunID), route: a.tableName(target, kindRoute, tag.RunID),
		shards: make([][]*node, len(r.c.shards))}
	create := fmt.Sprintf("CREATE TABLE %s (%s) %s", rt.part.Quote(a.d), defs, engine)
	errs := onEach(r.c.nodes(), func(_ int, n *node) error {
		err := n.ensureDatabase(ctx, tag, rt.part.Schema)
		if err == nil {
			err = n.exec(ctx, tag, create)
		}
		return err
	})
	k := 0
	var failed error
	for i, replicas := range r.c.shards {
		for _, n := range replicas {
			err := errs[k]
			k++
			if unreachable(err) {
				rt.everyNode = false
				continue
			}
			rt.shards[i] = append(rt.shards[i], n)
			if err != nil && failed == nil {
				failed = fmt.Errorf("on %s: %w", n.addr, err)
			}
		}
		if len(rt.shards[i]) == 0 && failed == nil {
			failed = fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, r.c.name)
		}
	}
	if failed == nil {
		failed = a.exec(ctx, tag, r.distributedSQL("CREATE TABLE ", rt.route, rt.part, "", key))
	}
	if failed != nil {
		rt.drop(context.WithoutCancel(ctx), tag)
		return nil, failed
	}
	return rt, nil
}

// take returns the routing tables kept for key, and forgets them.
func (rs *routes) take(key string) *routing {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rt := rs.kept[key]
	delete(rs.kept, key)
	return rt
}

// release keeps rt for the next publication, once the nodes its rows
// reached are emptied, if the publication succeeded and every node has
// part (one that was down would lack it when it returns); else it drops
// the tables.
func (rs *routes) release(ctx context.Context, tag adapters.Tag, rt *routing, ok bool) {
	if ok && rt.everyNode {
		errs := onEach(rt.filled, func(_ int, n *node) error { return n.exec(ctx, tag, "TRUNCATE TABLE "+rt.part.Quote(n.d)) })
		if errors.Join(errs...) == nil {
			rt.filled = nil
			rs.mu.Lock()
			if rs.kept == nil {
				rs.kept = map[string]*routing{}
			}
			rs.kept[rt.key] = rt
			rs.mu.Unlock()
			return
		}
	}
	rt.drop(ctx, tag)
}

// dropRun drops the routing tables kept for run runID.
func (rs *routes) dropRun(ctx context.Context, runID string) {
	rs.mu.Lock()
	var mine []*routing
	for key, rt := range rs.kept {
		if rt.runID == runID {
			mine = append(mine, rt)
			delete(rs.kept, key)
		}
	}
	rs.mu.Unlock()
	for _, rt := range mine {
		rt.drop(ctx, adapters.Tag{RunID: runID, Step: "drop"})
	}
}

// drop drops the routing tables, even when ctx is cancelled.
func (rt *routing) drop(ctx context.Context, tag adapters.Tag) {
	bg := context.WithoutCancel(ctx)
	rt.coordinator.drop(bg, tag, rt.route)
	var have []*node
	for _, nodes := range rt.shards {
		have = append(have, nodes...)
	}
	onEach(have, func(_ int, n *node) error { n.drop(bg, tag, rt.part); return nil })
}

// runEnded: the routing tables of the run go too.
func (s shardedCluster) runEnded(ctx context.Context, runID string) {
	s.c.routes.dropRun(ctx, runID)
	s.replicatedCluster.runEnded(ctx, runID)
}
