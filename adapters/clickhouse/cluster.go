package clickhouse

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Clusters. With Config.Cluster set, refill runs on the cluster of that
// name in the server's remote_servers, connected to one of its nodes (the
// coordinator: the DSN's server). Every table refill creates, and the
// ledger, is created ON CLUSTER and replicated through ZooKeeper, in one of
// two layouts:
//
//   - replicated: every node holds every row. A model's table is a
//     Replicated*MergeTree whose ZooKeeper path has no {shard}, so all the
//     cluster's nodes are replicas of one table. A stage is a plain table
//     on the coordinator, and the swap is the one-server swap (publish.go)
//     run there: REPLACE PARTITION into the coordinator's replica, which
//     ZooKeeper carries to the others. Before the records of a batch of
//     swaps are written, refill waits until every replica that answers
//     has applied them (SYSTEM SYNC REPLICA).
//   - sharded: a model's table is a Distributed table over <name>_local, a
//     Replicated*MergeTree on each shard (its path has {shard}). A stage is
//     computed, verified and audited on the coordinator as before, in
//     full. Publishing it then routes its rows to their shards: a plain
//     table like the stage (kind "l") on every node that answers (node by
//     node: ON CLUSTER would wait for a node that is down), and a
//     Distributed table over it (kind "r", with the target's sharding key)
//     into which the stage is inserted synchronously, which sends each
//     shard's rows to one of its replicas (internal_replication). Once the
//     rows of every shard add up to the stage's, each shard swaps its part
//     into its local table with the one-server swap, on the replica
//     holding it, which ZooKeeper carries to the others; a shard
//     that receives no rows for the window still has its partitions
//     replaced or dropped, so rows that moved to another shard leave none
//     behind. The routing tables serve the run's next publication into
//     the target too, emptied after each swap (routes, in sharded.go).
//
// Each shard's swap is atomic per physical partition, as on one server;
// the shards of one window are swapped at once but not together, so a
// query during a publication may see the new rows of one shard with the
// old of another, and a crash or a failure on one shard leaves them so.
// Before any shard changes, every node lists the stage as published
// (published.go); the ledger records the window done only after every
// shard has swapped (the stage and the lists are kept until then): after
// a crash the next run, from any node, finds the window in the lists,
// records it pending and redoes it, which replaces every shard's part
// again.

// Layouts of a cluster's tables (Config.Layout).
const (
	LayoutReplicated = "replicated"
	LayoutSharded    = "sharded"
)

// knownLayout reports whether layout is one of the layouts above.
func knownLayout(layout string) bool { return layout == LayoutReplicated || layout == LayoutSharded }

// LocalSuffix ends the name of the local table under a Distributed table
// that refill creates: the model's table t is t_local on each shard.
const LocalSuffix = "_local"

// ZooKeeperRoot is the root of the ZooKeeper paths of the replicated
// tables refill creates: <root>/all/<database>/<table>[/<id>] for tables
// every node holds, <root>/{shard}/... for a shard's.
const ZooKeeperRoot = "/clickhouse/refill"

// DefaultShardingKey spreads a sharded table's rows evenly when neither
// the model (clickhouse: {sharding_key: ...}) nor the target says how.
const DefaultShardingKey = "rand()"

// Kinds of the tables a sharded publication makes (adapters.StageName).
const (
	kindShard = "l" // a shard's part of a stage, on the replica its rows reach
	kindRoute = "r" // a Distributed table over them: the route to the shards
)

// cluster is what Open learned of Config.Cluster.
type cluster struct {
	name, layout, key string
	// shards are the cluster's shards in shard_num order, each its replicas
	// in replica_num order.
	shards [][]*node
	self   *node  // the coordinator's node
	lists  lists  // the published lists made (published.go)
	routes routes // the sharded layout's routing tables kept (sharded.go)
}

func (c *cluster) nodes() []*node {
	var out []*node
	for _, s := range c.shards {
		out = append(out, s...)
	}
	return out
}

// openCluster reads the nodes of Config.Cluster from system.clusters and
// opens a pool to each, with the DSN's user and settings.
func (a *Adapter) openCluster(ctx context.Context, opts *clickhouse.Options) error {
	c := &cluster{name: a.cfg.Cluster, layout: cmp.Or(a.cfg.Layout, LayoutReplicated), key: cmp.Or(a.cfg.ShardingKey, DefaultShardingKey)}
	if !knownLayout(c.layout) {
		return fmt.Errorf("unknown layout %q: want %s or %s", c.layout, LayoutReplicated, LayoutSharded)
	}
	tag := adapters.Tag{Step: "open"}
	res, err := a.query(ctx, tag, "SELECT shard_num, replica_num, host_address, port FROM system.clusters WHERE cluster = "+
		a.d.QuoteString(c.name)+" ORDER BY shard_num, replica_num")
	if err != nil {
		return err
	}
	if len(res.Rows) == 0 {
		names, _ := a.query(ctx, tag, "SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster")
		var have []string
		if names != nil {
			for _, row := range names.Rows {
				have = append(have, fmt.Sprint(row[0]))
			}
		}
		return fmt.Errorf("the server has no cluster %q in its remote_servers (it has: %s)", c.name, cmp.Or(strings.Join(have, ", "), "none"))
	}
	macros, err := a.query(ctx, tag, "SELECT macro FROM system.macros")
	if err != nil {
		return err
	}
	need := []string{"replica"}
	if c.layout == LayoutSharded {
		need = append(need, "shard")
	}
	for _, m := range need {
		if !slices.ContainsFunc(macros.Rows, func(row []any) bool { return fmt.Sprint(row[0]) == m }) {
			return fmt.Errorf("the server defines no {%s} macro, which the ZooKeeper paths of refill's replicated tables use: add <macros><%s>...</%s></macros> to each node's config", m, m, m)
		}
	}
	self := selfAddrs(ctx, opts.Addr[0])
	var addrs []string
	for _, row := range res.Rows {
		shard := int(adapters.Int(row[0]))
		addr := net.JoinHostPort(fmt.Sprint(row[2]), fmt.Sprint(row[3]))
		addrs = append(addrs, addr)
		for len(c.shards) < shard {
			c.shards = append(c.shards, nil)
		}
		n := a.openNode(opts, addr)
		c.shards[shard-1] = append(c.shards[shard-1], n)
		if self[addr] {
			c.self = n
		}
	}
	if c.self == nil {
		for _, n := range c.nodes() {
			n.db.Close()
		}
		return fmt.Errorf("the server at %s is not a node of cluster %s (%s): point dsn at one of them", opts.Addr[0], c.name, strings.Join(addrs, ", "))
	}
	r := replicatedCluster{a, c}
	a.role, a.settings = r, r.settings
	if c.layout == LayoutSharded {
		a.role = shardedCluster{r}
	}
	return nil
}

// selfAddrs returns the host:port forms of addr, with its host resolved.
func selfAddrs(ctx context.Context, addr string) map[string]bool {
	out := map[string]bool{addr: true}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return out
	}
	ips, _ := net.DefaultResolver.LookupHost(ctx, host)
	for _, ip := range ips {
		out[net.JoinHostPort(ip, port)] = true
	}
	return out
}

// openNode returns the node at addr, which logs its statements after a
// line naming it.
func (a *Adapter) openNode(opts *clickhouse.Options, addr string) *node {
	o := *opts
	o.Addr = []string{addr}
	cfg := a.cfg
	cfg.Cluster, cfg.Layout, cfg.ShardingKey = "", "", ""
	if log := a.cfg.Log; log != nil {
		cfg.Log = func(s string) { log("-- on " + addr + "\n" + s) }
	}
	n := newNode(openDB(&o, cfg.Connector), cfg, addr)
	n.server = a.server
	return n
}

// unreachable reports whether err says a node could not be reached (it is
// down, or not listening), rather than that it refused a statement.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, driver.ErrBadConn)
}

// zkPath returns the ZooKeeper path of a replicated table refill creates,
// per shard or for all nodes, made unique by id when it is not "".
func zkPath(sharded bool, table models.Relation, id string) string {
	p := ZooKeeperRoot + "/all/"
	if sharded {
		p = ZooKeeperRoot + "/{shard}/"
	}
	p += table.Schema + "/" + table.Name
	if id != "" {
		p += "/" + id
	}
	return p
}

// columnDefs renders column definitions for CREATE TABLE.
func columnDefs(d Dialect, cols []column) string {
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = d.QuoteIdent(c.Name) + " " + c.Type
		if c.DefaultKind != "" {
			defs[i] += " " + c.DefaultKind + " " + c.Default
		}
	}
	return strings.Join(defs, ", ")
}

// ensureClusterDatabase creates database on every node: ON CLUSTER,
// which waits for every node, so not when every node that answers has it.
// Asking the coordinator alone is not enough: a database made by hand on
// one node (or lost by a node that was rebuilt) would leave the others
// without it, and the first statement ON CLUSTER that needs it would fail
// on them after it had run on the rest.
func (r replicatedCluster) ensureClusterDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	a := r.a
	var missing atomic.Bool
	errs := onEach(r.c.nodes(), func(_ int, n *node) error {
		ok, err := n.databaseExists(ctx, tag, database)
		switch {
		case err != nil && n != r.c.self && unreachable(err):
			return nil // it creates the database when it returns, if ON CLUSTER runs now
		case err != nil:
			return fmt.Errorf("on %s: %w", n.addr, err)
		case !ok:
			missing.Store(true)
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil || !missing.Load() {
		return err
	}
	return a.exec(ctx, tag, "CREATE DATABASE IF NOT EXISTS "+a.d.QuoteIdent(database)+r.onCluster())
}

// syncOthers waits until the replicas of table on nodes other than
// applied what applied did, skipping nodes that do not answer (they catch
// up when they return).
func syncOthers(ctx context.Context, tag adapters.Tag, nodes []*node, applied *node, table models.Relation) error {
	others := slices.DeleteFunc(slices.Clone(nodes), func(n *node) bool { return n == applied })
	return errors.Join(onEach(others, func(_ int, n *node) error {
		if err := n.syncReplica(ctx, tag, table); err != nil && !unreachable(err) {
			return fmt.Errorf("waiting for %s to replicate %s: %w", n.addr, table, err)
		}
		return nil
	})...)
}

// createOnCluster creates table on every node of the cluster, from column
// definitions and an engine clause of the MergeTree family: under the
// replicated layout as one Replicated table; under the sharded layout as
// <table>_local, replicated per shard, and table, Distributed over it by
// key. It returns the local table (table itself when replicated).
func (r replicatedCluster) createOnCluster(ctx context.Context, tag adapters.Tag, table models.Relation, defs, engine, key string, ifNotExists bool) (models.Relation, error) {
	a := r.a
	// (In the stage database too, which the coordinator may have made for
	// itself alone.)
	if err := r.ensureClusterDatabase(ctx, tag, table.Schema); err != nil {
		return models.Relation{}, err
	}
	create := "CREATE TABLE "
	if ifNotExists {
		create += "IF NOT EXISTS "
	}
	id := fmt.Sprintf("%s%d", a.suffix, a.seq.Add(1))
	local := table
	if r.sharded() {
		local.Name += LocalSuffix
	}
	repl, err := replicated(a.d, unreplicated(engine), zkPath(r.sharded(), local, id))
	if err != nil {
		return models.Relation{}, err
	}
	defer r.forget(local)
	defer r.forget(table)
	if r.sharded() {
		if info, err := a.readTable(ctx, tag, local); err != nil {
			return models.Relation{}, err
		} else if info != nil && !ifNotExists {
			if !r.leftover(ctx, tag, local, info) {
				return models.Relation{}, fmt.Errorf("%s exists, but not the Distributed table %s over it: drop it (ON CLUSTER %s) or create %s", local, table, r.c.name, table)
			}
			// Made by refill, empty on every node, and without its
			// Distributed table: a creation that stopped half way (a
			// crash between the two, or a node down). Made anew.
			r.dropOnCluster(ctx, tag, local)
		}
	}
	if err := a.exec(ctx, tag, fmt.Sprintf("%s%s%s (%s) %s", create, local.Quote(a.d), r.onCluster(), defs, repl)); err != nil {
		return models.Relation{}, err
	}
	if r.sharded() {
		if err := a.exec(ctx, tag, r.distributedSQL(create, table, local, r.onCluster(), key)); err != nil {
			r.dropOnCluster(ctx, tag, local)
			return models.Relation{}, err
		}
	}
	return local, nil
}

// leftover reports whether local (as info describes it) is a shard table
// refill made under the ZooKeeper path it gives them, holding no rows on
// any node, every node answering.
func (r replicatedCluster) leftover(ctx context.Context, tag adapters.Tag, local models.Relation, info *tableInfo) bool {
	if !strings.Contains(info.EngineClause, "'"+zkPath(true, local, "")+"/") {
		return false
	}
	q := fmt.Sprintf("SELECT count() FROM system.parts WHERE database = %s AND table = %s AND rows > 0", r.a.d.QuoteString(local.Schema), r.a.d.QuoteString(local.Name))
	errs := onEach(r.c.nodes(), func(_ int, n *node) error {
		res, err := n.query(ctx, tag, q)
		if err == nil && adapters.Int(res.Rows[0][0]) > 0 {
			err = errors.New("not empty")
		}
		return err
	})
	return errors.Join(errs...) == nil
}

// distributedSQL renders create (CREATE TABLE [IF NOT EXISTS]) of table,
// with on (ON CLUSTER, or ""), as a Distributed table over local with the
// sharding key key: every node's local, with local's columns.
func (r replicatedCluster) distributedSQL(create string, table, local models.Relation, on, key string) string {
	a := r.a
	return fmt.Sprintf("%s%s%s AS %s ENGINE = Distributed(%s, %s, %s, %s)", create, table.Quote(a.d), on, local.Quote(a.d),
		a.d.QuoteString(r.c.name), a.d.QuoteString(local.Schema), a.d.QuoteString(local.Name), key)
}

// forget drops what the coordinator and every node learned about table
// (see node.forget): it changed on the cluster.
func (r replicatedCluster) forget(table models.Relation) {
	r.a.forget(table)
	for _, n := range r.c.nodes() {
		n.forget(table)
	}
}

// dropOnCluster drops table on every node, even when ctx is cancelled;
// errors are ignored.
func (r replicatedCluster) dropOnCluster(ctx context.Context, tag adapters.Tag, table models.Relation) {
	a := r.a
	a.exec(context.WithoutCancel(ctx), tag, "DROP TABLE IF EXISTS "+table.Quote(a.d)+r.onCluster())
	r.forget(table)
}

// shardingKey is the sharding key of m's table: its clickhouse: block's
// sharding_key, else the target's.
func (r replicatedCluster) shardingKey(m *models.Model) (string, error) {
	o, err := parseBlock(blockOf(m))
	return cmp.Or(o.ShardingKey, r.c.key), err
}

// localOf returns the local table under the Distributed target t (as
// table reported it) and what its engine says, or an error if t is not a
// Distributed table of this cluster over a table that exists.
func (r replicatedCluster) localOf(ctx context.Context, tag adapters.Tag, t models.Relation, info *tableInfo) (models.Relation, *tableInfo, distributed, error) {
	a := r.a
	dist, ok := distributedOf(info.EngineClause)
	if !ok {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is a %s table, but the target's layout is sharded: refill swaps the shards of a Distributed table over a replicated table (or set layout: %s)",
			t, info.Engine, LayoutReplicated)
	}
	if dist.cluster != r.c.name {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed over cluster %s, not the target's cluster %s", t, dist.cluster, r.c.name)
	}
	if dist.key == "" && len(r.c.shards) > 1 {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed without a sharding key, so no rows can be routed through it to %d shards", t, len(r.c.shards))
	}
	local := models.Relation{Schema: cmp.Or(dist.database, t.Schema), Name: dist.table}
	linfo, err := a.table(ctx, tag, local)
	if err != nil {
		return models.Relation{}, nil, dist, err
	}
	if linfo == nil {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed over %s, which does not exist on %s", t, local, a.addr)
	}
	return local, linfo, dist, a.role.swappable(linfo, local)
}

// alterEveryNode applies change to table (a Distributed table, which
// is not replicated) on every node; a node that does not answer fails it.
func (r replicatedCluster) alterEveryNode(ctx context.Context, tag adapters.Tag, table models.Relation, change *adapters.SchemaChange) error {
	defer r.forget(table)
	for _, n := range r.c.nodes() {
		if err := n.alter(ctx, tag, table, change); err != nil {
			return fmt.Errorf("on %s: %w", n.addr, err)
		}
	}
	return nil
}

// cleanNodes runs clean on every node, skipping those that do not answer.
func (r replicatedCluster) cleanNodes(clean func(n *node) error) error {
	var errs []error
	for _, n := range r.c.nodes() {
		if err := clean(n); err != nil && !unreachable(err) {
			errs = append(errs, fmt.Errorf("on %s: %w", n.addr, err))
		}
	}
	return errors.Join(errs...)
}

// alterDistributed changes the columns of the Distributed table target on
// every node from have to want.
func (r replicatedCluster) alterDistributed(ctx context.Context, tag adapters.Tag, target models.Relation, have, want []adapters.TableColumn) error {
	change := &adapters.SchemaChange{Add: want, Widen: want}
	for _, h := range have {
		if !slices.ContainsFunc(want, func(c adapters.TableColumn) bool { return c.Name == h.Name }) {
			change.Drop = append(change.Drop, h.Name)
		}
	}
	return r.alterEveryNode(ctx, tag, target, change)
}

// rebuildOnCluster is Rebuild on a cluster: the new table is made on every
// node as refill makes a model's table (replicated, or Distributed over a
// replicated table per shard), filled from the stages (through the
// Distributed table, and counted on every shard), then renamed into place
// on every node by one RENAME ... ON CLUSTER. As on one server, each
// node's RENAME is atomic or leaves the table briefly absent; the nodes do
// it one after another. With the sharded layout the local tables are
// renamed, and the Distributed table over them is created or altered to
// the new columns on every node.
func (r replicatedCluster) rebuildOnCluster(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	a := r.a
	defer r.forget(target)
	stage, err := a.stageTable(ctx, tag, stages[0].Relation)
	if err != nil {
		return err
	}
	defs, engine := columnDefs(a.d, stage.Columns), stage.EngineClause
	if columns != nil {
		opts, err := modelTableOptions(a.d, stages[0].Model, false)
		if err != nil {
			return err
		}
		defs, engine = columnDefs(a.d, plainColumns(columns)), opts.Clauses()
	}
	info, err := a.table(ctx, tag, target)
	if err != nil {
		return err
	}
	local, key := target, ""
	if r.sharded() {
		if key, err = r.shardingKey(stages[0].Model); err != nil {
			return err
		}
		local.Name += LocalSuffix
		if info != nil {
			l, _, dist, err := r.localOf(ctx, tag, target, info)
			if err != nil {
				return err
			}
			local, key = l, dist.key
		}
	} else if info != nil {
		if err := a.role.swappable(info, target); err != nil {
			return err
		}
	}

	// The new table, filled.
	fresh := a.tableName(target, adapters.KindSwap, tag.RunID)
	freshLocal, err := r.createOnCluster(ctx, tag, fresh, defs, engine, key, false)
	if err != nil {
		return err
	}
	bg := context.WithoutCancel(ctx)
	defer r.dropOnCluster(bg, tag, fresh)
	defer r.dropOnCluster(bg, tag, freshLocal)
	if err := a.insertStages(withSettings(ctx, clickhouse.Settings{"insert_distributed_sync": 1}), tag, fresh, stages); err != nil {
		return err
	}
	cols, err := a.Columns(ctx, fresh) // what the Distributed table must have
	if err != nil {
		return err
	}
	want := int64(0)
	for _, st := range stages {
		n, err := a.stageRows(ctx, tag, st)
		if err != nil {
			return err
		}
		want += n
	}
	// Every replica that answers holds the new rows before the rename.
	got := int64(0)
	for i, replicas := range r.c.shards {
		counted := false
		for _, n := range replicas {
			err := n.syncReplica(ctx, tag, freshLocal)
			var res *adapters.Result
			if err == nil && !counted {
				res, err = n.query(ctx, tag, "SELECT count() FROM "+freshLocal.Quote(a.d))
			}
			if unreachable(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("on %s: %w", n.addr, err)
			}
			if !counted {
				got += adapters.Int(res.Rows[0][0])
				counted = true
			}
		}
		if !counted {
			return fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, r.c.name)
		}
		if !r.sharded() {
			break // one table on every node: one count
		}
	}
	if got != want {
		return fmt.Errorf("the stages' %d rows reached the new table as %d; nothing was swapped", want, got)
	}

	ledger := tag
	ledger.Step = "ledger"
	if err := a.writeRecords(ctx, ledger, pendingRecords(records)); err != nil {
		return err
	}
	// The local table is renamed into place; a Distributed table over it
	// is not (18.16 leaves a renamed Distributed table's folder behind),
	// but created, or given the new table's columns.
	var oldDist []adapters.TableColumn
	if r.sharded() && info != nil {
		if oldDist, err = a.Columns(ctx, target); err != nil {
			return err
		}
	}
	old := a.tableName(target, adapters.KindSwap, tag.RunID)
	renames := []string{freshLocal.Quote(a.d) + " TO " + local.Quote(a.d)}
	if info != nil {
		renames = append([]string{local.Quote(a.d) + " TO " + old.Quote(a.d)}, renames...)
	}
	defer r.forget(local)
	if err := a.exec(ctx, tag, "RENAME TABLE "+strings.Join(renames, ", ")+r.onCluster()); err != nil {
		return fmt.Errorf("%w: swapping in the rebuilt %s: %w", adapters.ErrMaybePublished, target, err)
	}
	if info != nil {
		r.dropOnCluster(bg, tag, old)
	}
	if r.sharded() {
		var err error
		if info == nil {
			err = a.exec(ctx, tag, r.distributedSQL("CREATE TABLE ", target, local, r.onCluster(), key))
		} else {
			err = r.alterDistributed(ctx, tag, target, oldDist, cols)
		}
		if err != nil {
			return fmt.Errorf("%w: giving %s the columns of the rebuilt %s: %w", adapters.ErrMaybePublished, target, local, err)
		}
	}
	if err := a.writeRecords(ctx, ledger, records); err != nil {
		return fmt.Errorf("%s was rebuilt, but recording it in the ledger failed (the next run redoes it): %w: %w", target, adapters.ErrMaybePublished, err)
	}
	return nil
}

// once returns a function that calls f (if set) the first time it is
// called, and does nothing after.
func once(f func() error) func() error {
	return func() error {
		if f == nil {
			return nil
		}
		g := f
		f = nil
		return g()
	}
}

// onEach runs fn on every node (and its index) at once and returns its
// errors, in the nodes' order.
func onEach(nodes []*node, fn func(i int, n *node) error) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = fn(i, n) })
	}
	wg.Wait()
	return errs
}

// replica are the rules of the one-server swap of a shard's part on one
// of its replicas (shardedCluster.swap), at addr.
type replica struct{ addr string }

func (replica) swappable(t *tableInfo, r models.Relation) error { return mergeTree(t, r) }
func (replica) readsTargetParts() bool                          { return true }
func (replica) splitDrops() bool                                { return true } // a replica that is not its table's leader sends DROP PARTITION to the leader

func (r replica) createTarget(_ context.Context, _ adapters.Tag, p *SwapPlan) (func(), error) {
	return nil, fmt.Errorf("%s does not exist on %s", p.Target, r.addr)
}

// replicatedCluster is the coordinator of a cluster whose nodes each hold
// every row (the replicated layout), and the base of shardedCluster.
type replicatedCluster struct {
	a *Adapter
	c *cluster
}

// sharded reports whether the cluster's tables are Distributed over
// shards: the functions both layouts share ask it.
func (r replicatedCluster) sharded() bool { return r.c.layout == LayoutSharded }

func (r replicatedCluster) guarantee() string { return clusterGuarantee(r.c) }

func (r replicatedCluster) close() error {
	var errs []error
	for _, n := range r.c.nodes() {
		errs = append(errs, n.db.Close())
	}
	return errors.Join(errs...)
}

func (r replicatedCluster) onCluster() string { return " ON CLUSTER " + r.a.d.QuoteIdent(r.c.name) }

func (r replicatedCluster) settings(s clickhouse.Settings, write bool) {
	// A query joining two Distributed tables reads the right one whole on
	// the coordinator (GLOBAL JOIN, GLOBAL IN) instead of failing; no
	// replica that lags is read.
	if r.a.server.stringSettings {
		s["distributed_product_mode"] = "global"
	}
	for k, v := range staleness {
		if _, set := r.a.dsnSettings[k]; !set {
			s[k] = v
		}
	}
	if write {
		// Every block counts, even one equal to an earlier one.
		s["insert_deduplicate"] = 0
	}
}

func (r replicatedCluster) createDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	if database == r.a.cfg.StageSchema {
		// Stages live on one node; each node makes its stage database for
		// a shard's part itself.
		return single{r.a}.createDatabase(ctx, tag, database)
	}
	return r.ensureClusterDatabase(ctx, tag, database)
}

func (r replicatedCluster) createTable(ctx context.Context, tag adapters.Tag, table models.Relation, columns []adapters.TableColumn, opts TableOptions) error {
	_, err := r.createOnCluster(ctx, tag, table, columnDefs(r.a.d, plainColumns(columns)), opts.Clauses(), opts.ShardingKey, true)
	return err
}

func (r replicatedCluster) dropTable(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	return r.a.exec(ctx, tag, "DROP TABLE IF EXISTS "+table.Quote(r.a.d)+r.onCluster())
}

func (r replicatedCluster) dropShared(ctx context.Context, tag adapters.Tag, table models.Relation) {
	r.dropOnCluster(ctx, tag, table)
}

// seedEngine: a seed is on every node, replicated: it is small, and every
// node's queries may join it.
func (r replicatedCluster) seedEngine(tmp models.Relation) (string, error) {
	return replicated(r.a.d, seedEngine, zkPath(false, tmp, ""))
}

// setupLedger: the ledger is replicated on every node, and created ON
// CLUSTER (which waits for every node) only when the coordinator lacks a
// table of it.
func (r replicatedCluster) setupLedger(ctx context.Context, tag adapters.Tag) error {
	a := r.a
	res, err := a.query(ctx, tag, "SELECT count(DISTINCT table) FROM system.columns WHERE database = "+a.d.QuoteString(a.cfg.LedgerSchema)+
		" AND table IN ('"+strings.Join(ledgerTables, "', '")+"')")
	if err != nil {
		return err
	}
	if adapters.Int(res.Rows[0][0]) == int64(len(ledgerTables)) {
		// A ledger made for one server is on one node only.
		t, err := a.table(ctx, tag, a.ledgerTable(sqlkit.PartitionsTable))
		if err == nil && t != nil && !strings.HasPrefix(t.Engine, "Replicated") {
			err = fmt.Errorf("the ledger in database %s is a %s table, made for one server, not replicated on cluster %s: "+
				"set ledger_schema: to another database for the cluster (or copy its rows into a replicated one)", a.cfg.LedgerSchema, t.Engine, r.c.name)
		}
		return err
	}
	return a.execAll(ctx, tag, ledgerStatements(a.d, a.cfg.LedgerSchema, r.c.name))
}

// readingLedger: the coordinator's replica first applies everything other
// nodes wrote (SYSTEM SYNC REPLICA), so every run reads the same ledger; a
// read-only user may not ask that, and reads the replica as it is.
func (r replicatedCluster) readingLedger(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	if r.a.server.ReadOnly {
		return nil
	}
	return r.a.syncReplica(ctx, tag, table)
}

func (replicatedCluster) structure(_ context.Context, _ adapters.Tag, target models.Relation, info *tableInfo) (models.Relation, *tableInfo, error) {
	return target, info, nil
}

func (r replicatedCluster) swappable(t *tableInfo, rel models.Relation) error {
	if err := mergeTree(t, rel); err != nil {
		return err
	}
	if !strings.HasPrefix(t.Engine, "Replicated") {
		return fmt.Errorf("%s is a %s table, not replicated: on cluster %s refill swaps replicated tables only, which every replica sees", rel, t.Engine, r.c.name)
	}
	return nil
}

func (replicatedCluster) readsTargetParts() bool { return true }

// swap is the one-server swap, on the coordinator's replica; the other
// replicas catch up before its records are written (settled).
func (r replicatedCluster) swap(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, announce func() error) error {
	return r.a.node.swap(ctx, tag, st, change, announce, r)
}

// caughtUp: what runs next reads the coordinator's replica, which swapped.
func (replicatedCluster) caughtUp(context.Context, adapters.Tag, models.Relation, []*adapters.Stage) error {
	return nil
}

// settled: the other replicas of each target catch up with the
// coordinator's once per Flush, not after every swap (what reads a target
// under the replicated layout reads the coordinator's replica).
func (r replicatedCluster) settled(ctx context.Context, tag adapters.Tag, targets []models.Relation) error {
	for _, t := range targets {
		if err := r.swapped(ctx, tag, t); err != nil {
			return err
		}
	}
	return nil
}

func (r replicatedCluster) createTarget(ctx context.Context, tag adapters.Tag, p *SwapPlan) (func(), error) {
	stage, err := r.a.stageTable(ctx, tag, p.Stage)
	if err != nil {
		return nil, err
	}
	if _, err := r.createOnCluster(ctx, tag, p.Target, columnDefs(r.a.d, stage.Columns), stage.EngineClause, "", false); err != nil {
		return nil, err
	}
	return func() { r.dropOnCluster(ctx, tag, p.Target) }, nil
}

func (replicatedCluster) splitDrops() bool { return true }

func (r replicatedCluster) swapped(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	return syncOthers(ctx, tag, r.c.nodes(), r.c.self, table)
}

func (r replicatedCluster) rebuild(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	return r.rebuildOnCluster(ctx, tag, target, stages, records, columns)
}

// onStageHosts: every node that answers (a run's coordinator may have
// been another node).
func (r replicatedCluster) onStageHosts(fn func(h *node) error) error { return r.cleanNodes(fn) }

func (replicatedCluster) rowsElsewhere(context.Context, adapters.Tag, models.Relation) (int64, bool, error) {
	return 0, false, nil
}

// clusterGuarantee is Info().Guarantee on a cluster.
func clusterGuarantee(c *cluster) string {
	n := strconv.Itoa(len(c.nodes()))
	if c.layout == LayoutSharded {
		return "on cluster " + c.name + " (" + strconv.Itoa(len(c.shards)) + " shards, " + n + " nodes), each shard's physical partitions are replaced atomically " +
			"(REPLACE PARTITION on one replica, which ZooKeeper carries to the others; refill waits for every replica that answers), " +
			"but the shards of a window at once, not together, so a query may briefly see one shard's new rows with another's old; " +
			"every node lists the window as published before any shard changes, and the ledger records it done only after every shard has swapped, " +
			"so after a crash the next run, from any node, redoes the window on every shard"
	}
	return "on cluster " + c.name + " (" + n + " replicas of every table), each physical partition is replaced atomically " +
		"(REPLACE PARTITION on the coordinator's replica, which ZooKeeper carries to the others; refill waits for every replica " +
		"that answers), but a window spanning several partitions is not; every node lists the window as published before the swap " +
		"and the ledger records it done after it, so after a crash the next run, from any node, redoes its partitions"
}
