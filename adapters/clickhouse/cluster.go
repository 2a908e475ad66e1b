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
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/refill/refill/adapters"
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
//     ZooKeeper carries to the others. refill then waits until every
//     replica that answers has applied it (SYSTEM SYNC REPLICA).
//   - sharded: a model's table is a Distributed table over <name>_local, a
//     Replicated*MergeTree on each shard (its path has {shard}). A stage is
//     computed, verified and audited on the coordinator as before, in
//     full. Publishing it then routes its rows to their shards: a table
//     like the stage, replicated within each shard (kind "l"), on every
//     node that answers (node by node: ON CLUSTER would wait for a node
//     that is down), and a Distributed table over it (kind "r", with the
//     target's sharding key) into which the stage is inserted
//     synchronously. Once the rows of every shard add up to the stage's,
//     each shard swaps its part into its local table with the one-server
//     swap, on one replica, which ZooKeeper carries to the others; a shard
//     that receives no rows for the window still has its partitions
//     replaced or dropped, so rows that moved to another shard leave none
//     behind.
//
// Each shard's swap is atomic per physical partition, as on one server;
// the shards of one window are swapped one after the other, so a query
// during a publication may see the new rows of one shard with the old of
// another, and a crash between shards leaves them so. The ledger holds
// the publication pending before any shard changes, and done only after
// every shard has swapped (the stage is kept until then too): the next
// run, from any node, redoes a pending window, which replaces every
// shard's part again.

// Layouts of a cluster's tables (Config.Layout).
const (
	LayoutReplicated = "replicated"
	LayoutSharded    = "sharded"
)

// KnownLayout reports whether layout is one of the layouts above.
func KnownLayout(layout string) bool { return layout == LayoutReplicated || layout == LayoutSharded }

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
	kindShard = "l" // a shard's part of a stage, replicated within the shard
	kindRoute = "r" // a Distributed table over them: the route to the shards
)

// cluster is what Open learned of Config.Cluster.
type cluster struct {
	name, layout, key string
	// shards are the cluster's shards in shard_num order, each its replicas
	// in replica_num order: one-server adapters on each node.
	shards [][]*Adapter
	self   *Adapter // the coordinator's node
}

func (c *cluster) nodes() []*Adapter {
	var out []*Adapter
	for _, s := range c.shards {
		out = append(out, s...)
	}
	return out
}

// sharded reports whether tables are Distributed over shards.
func (a *Adapter) sharded() bool { return a.cluster != nil && a.cluster.layout == LayoutSharded }

// onCluster is " ON CLUSTER name" on a cluster, else "".
func (a *Adapter) onCluster() string {
	if a.cluster == nil {
		return ""
	}
	return " ON CLUSTER " + a.d.QuoteIdent(a.cluster.name)
}

// openCluster reads the nodes of Config.Cluster from system.clusters and
// opens a pool to each, with the DSN's user and settings.
func (a *Adapter) openCluster(ctx context.Context, opts *clickhouse.Options) error {
	c := &cluster{name: a.cfg.Cluster, layout: cmp.Or(a.cfg.Layout, LayoutReplicated), key: cmp.Or(a.cfg.ShardingKey, DefaultShardingKey)}
	if !KnownLayout(c.layout) {
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
		n := a.node(opts, addr)
		c.shards[shard-1] = append(c.shards[shard-1], n)
		if self[addr] {
			c.self = n
		}
	}
	a.cluster = c
	if c.self == nil {
		return fmt.Errorf("the server at %s is not a node of cluster %s (%s): point dsn at one of them", opts.Addr[0], c.name, strings.Join(addrs, ", "))
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

// node returns a one-server adapter on the node at addr, which logs its
// statements after a line naming the node.
func (a *Adapter) node(opts *clickhouse.Options, addr string) *Adapter {
	o := *opts
	o.Addr = []string{addr}
	cfg := a.cfg
	cfg.Cluster, cfg.Layout, cfg.ShardingKey = "", "", ""
	if log := a.cfg.Log; log != nil {
		cfg.Log = func(s string) { log("-- on " + addr + "\n" + s) }
	}
	n := newAdapter(openDB(&o, cfg.Connector), cfg)
	n.server, n.addr = a.server, addr
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

// databaseExists reports whether database exists on the server.
func (a *Adapter) databaseExists(ctx context.Context, tag adapters.Tag, database string) (bool, error) {
	res, err := a.query(ctx, tag, "SELECT count() FROM system.databases WHERE name = "+a.d.QuoteString(database))
	return err == nil && adapters.Int(res.Rows[0][0]) > 0, err
}

// ensureClusterDatabase creates database on every node: ON CLUSTER,
// which waits for every node, so not when the coordinator has it.
func (a *Adapter) ensureClusterDatabase(ctx context.Context, tag adapters.Tag, database string) error {
	if ok, err := a.databaseExists(ctx, tag, database); err != nil || ok {
		return err
	}
	return a.exec(ctx, tag, "CREATE DATABASE IF NOT EXISTS "+a.d.QuoteIdent(database)+a.onCluster())
}

// syncReplica waits until this server's replica of table has applied
// everything ZooKeeper's log holds for it.
func (a *Adapter) syncReplica(ctx context.Context, tag adapters.Tag, table models.Relation) error {
	return a.exec(ctx, tag, "SYSTEM SYNC REPLICA "+table.Quote(a.d))
}

// syncOthers waits until the replicas of table on nodes other than
// applied what applied did, skipping nodes that do not answer (they catch
// up when they return).
func syncOthers(ctx context.Context, tag adapters.Tag, nodes []*Adapter, applied *Adapter, table models.Relation) error {
	others := slices.DeleteFunc(slices.Clone(nodes), func(n *Adapter) bool { return n == applied })
	return errors.Join(onEach(others, func(_ int, n *Adapter) error {
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
func (a *Adapter) createOnCluster(ctx context.Context, tag adapters.Tag, table models.Relation, defs, engine, key string, ifNotExists bool) (models.Relation, error) {
	err := a.ensureClusterDatabase(ctx, tag, table.Schema)
	if table.Schema == a.cfg.StageSchema {
		// The coordinator has its stage database; the other nodes may not.
		err = a.exec(ctx, tag, "CREATE DATABASE IF NOT EXISTS "+a.d.QuoteIdent(table.Schema)+a.onCluster())
	}
	if err != nil {
		return models.Relation{}, err
	}
	create := "CREATE TABLE "
	if ifNotExists {
		create += "IF NOT EXISTS "
	}
	id := fmt.Sprintf("%s%d", a.suffix, a.seq.Add(1))
	local := table
	if a.sharded() {
		local.Name += LocalSuffix
	}
	repl, err := replicated(a.d, unreplicated(engine), zkPath(a.sharded(), local, id))
	if err != nil {
		return models.Relation{}, err
	}
	defer a.forget(local)
	defer a.forget(table)
	if a.sharded() {
		if info, err := a.readTable(ctx, tag, local); err != nil {
			return models.Relation{}, err
		} else if info != nil && !ifNotExists {
			return models.Relation{}, fmt.Errorf("%s exists, but not the Distributed table %s over it: drop it (ON CLUSTER %s) or create %s", local, table, a.cluster.name, table)
		}
	}
	if err := a.exec(ctx, tag, fmt.Sprintf("%s%s%s (%s) %s", create, local.Quote(a.d), a.onCluster(), defs, repl)); err != nil {
		return models.Relation{}, err
	}
	if a.sharded() {
		if err := a.exec(ctx, tag, a.distributedSQL(create, table, local, a.onCluster(), key)); err != nil {
			a.dropOnCluster(ctx, tag, local)
			return models.Relation{}, err
		}
	}
	return local, nil
}

// distributedSQL renders create (CREATE TABLE [IF NOT EXISTS]) of table,
// with on (ON CLUSTER, or ""), as a Distributed table over local with the
// sharding key key: every node's local, with local's columns.
func (a *Adapter) distributedSQL(create string, table, local models.Relation, on, key string) string {
	return fmt.Sprintf("%s%s%s AS %s ENGINE = Distributed(%s, %s, %s, %s)", create, table.Quote(a.d), on, local.Quote(a.d),
		a.d.QuoteString(a.cluster.name), a.d.QuoteString(local.Schema), a.d.QuoteString(local.Name), key)
}

// dropOnCluster drops table on every node, even when ctx is cancelled;
// errors are ignored.
func (a *Adapter) dropOnCluster(ctx context.Context, tag adapters.Tag, table models.Relation) {
	a.exec(context.WithoutCancel(ctx), tag, "DROP TABLE IF EXISTS "+table.Quote(a.d)+a.onCluster())
	a.forget(table)
}

// shardingKey is the sharding key of m's table: its clickhouse: block's
// sharding_key, else the target's.
func (a *Adapter) shardingKey(m *models.Model) (string, error) {
	o, err := parseBlock(blockOf(m))
	return cmp.Or(o.ShardingKey, a.cluster.key), err
}

// localOf returns the local table under the Distributed target t (as
// table reported it) and what its engine says, or an error if t is not a
// Distributed table of this cluster over a table that exists.
func (a *Adapter) localOf(ctx context.Context, tag adapters.Tag, t models.Relation, info *tableInfo) (models.Relation, *tableInfo, distributed, error) {
	dist, ok := distributedOf(info.EngineClause)
	if !ok {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is a %s table, but the target's layout is sharded: refill swaps the shards of a Distributed table over a replicated table (or set layout: %s)",
			t, info.Engine, LayoutReplicated)
	}
	if dist.cluster != a.cluster.name {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed over cluster %s, not the target's cluster %s", t, dist.cluster, a.cluster.name)
	}
	if dist.key == "" && len(a.cluster.shards) > 1 {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed without a sharding key, so no rows can be routed through it to %d shards", t, len(a.cluster.shards))
	}
	local := models.Relation{Schema: cmp.Or(dist.database, t.Schema), Name: dist.table}
	linfo, err := a.table(ctx, tag, local)
	if err != nil {
		return models.Relation{}, nil, dist, err
	}
	if linfo == nil {
		return models.Relation{}, nil, dist, fmt.Errorf("%s is Distributed over %s, which does not exist on %s", t, local, a.serverAddr())
	}
	return local, linfo, dist, a.swappable(linfo, local)
}

// serverAddr names the adapter's server in messages.
func (a *Adapter) serverAddr() string {
	if a.addr != "" {
		return a.addr
	}
	if opts, err := ParseDSN(a.cfg.DSN); err == nil {
		return opts.Addr[0]
	}
	return "the server"
}

// swapSharded publishes st into a sharded target (see the comment at the
// top of this file).
func (a *Adapter) swapSharded(ctx context.Context, tag adapters.Tag, st *adapters.Stage, change *adapters.SchemaChange, pending func() error) (err error) {
	changing := once(pending)
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
		key, err := a.shardingKey(st.Model)
		if err != nil {
			return err
		}
		if local, err = a.createOnCluster(ctx, tag, target, columnDefs(a.d, stage.Columns), stage.EngineClause, key, false); err != nil {
			return err
		}
		defer func() {
			if err != nil { // leave no target behind, as before the swap
				a.dropOnCluster(ctx, tag, target)
				a.dropOnCluster(ctx, tag, local)
			}
		}()
		dist = distributed{cluster: a.cluster.name, database: local.Schema, table: local.Name, key: key}
		if linfo, err = a.table(ctx, tag, local); err == nil && linfo == nil {
			err = fmt.Errorf("%s was created on cluster %s but does not exist on %s", local, a.cluster.name, a.serverAddr())
		}
		if err != nil {
			return err
		}
	} else {
		if local, linfo, dist, err = a.localOf(ctx, tag, target, info); err != nil {
			return err
		}
		if !change.Empty() {
			if err := changing(); err != nil {
				return err
			}
			if err := a.alterSharded(ctx, tag, target, local, change); err != nil {
				return fmt.Errorf("%w: changing the columns of %s: %w", adapters.ErrMaybePublished, target, err)
			}
			if linfo, err = a.table(ctx, tag, local); err != nil {
				return err
			}
		}
	}

	// Route the stage's rows to their shards.
	part := a.tableName(target, kindShard, tag.RunID)
	route := a.tableName(target, kindRoute, tag.RunID)
	engine, err := replicated(a.d, unreplicated(stage.EngineClause), zkPath(true, part, ""))
	if err != nil {
		return err
	}
	create := fmt.Sprintf("CREATE TABLE %s (%s) %s", part.Quote(a.d), columnDefs(a.d, stage.Columns), engine)
	// On every node at once: creating (and dropping) a replicated table
	// costs each node some 10 to 30 ms of ZooKeeper round trips.
	shards := make([][]*Adapter, len(a.cluster.shards)) // the nodes that have part
	defer func() {
		bg := context.WithoutCancel(ctx)
		a.drop(bg, tag, route)
		var have []*Adapter
		for _, nodes := range shards {
			have = append(have, nodes...)
		}
		onEach(have, func(_ int, n *Adapter) error { n.drop(bg, tag, part); return nil })
	}()
	errs := onEach(a.cluster.nodes(), func(_ int, n *Adapter) error {
		err := n.ensureDatabase(ctx, tag, part.Schema)
		if err == nil {
			err = n.exec(ctx, tag, create)
		}
		return err
	})
	k := 0
	for i, replicas := range a.cluster.shards {
		for _, n := range replicas {
			err := errs[k]
			k++
			if unreachable(err) {
				continue
			}
			shards[i] = append(shards[i], n)
			if err != nil {
				return fmt.Errorf("on %s: %w", n.addr, err)
			}
		}
		if len(shards[i]) == 0 {
			return fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, a.cluster.name)
		}
	}
	if err := a.exec(ctx, tag, a.distributedSQL("CREATE TABLE ", route, part, "", dist.key)); err != nil {
		return err
	}
	routeCtx := withSettings(ctx, clickhouse.Settings{"insert_distributed_sync": 1})
	if err := a.exec(routeCtx, tag, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", route.Quote(a.d), st.Relation.Quote(a.d))); err != nil {
		return err
	}
	res, err := a.query(ctx, tag, "SELECT count() FROM "+st.Relation.Quote(a.d))
	if err != nil {
		return err
	}
	want, got := adapters.Int(res.Rows[0][0]), int64(0)
	first := make([]*Adapter, len(shards)) // the replica of each shard that swaps
	for i, nodes := range shards {
		first[i] = nodes[0]
	}
	rows := make([]int64, len(shards))
	errs = onEach(first, func(i int, node *Adapter) error {
		if err := node.syncReplica(ctx, tag, part); err != nil {
			return fmt.Errorf("on %s: %w", node.addr, err)
		}
		res, err := node.query(ctx, tag, "SELECT count() FROM "+part.Quote(a.d))
		if err != nil {
			return fmt.Errorf("on %s: %w", node.addr, err)
		}
		rows[i] = adapters.Int(res.Rows[0][0])
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	counts := make([]string, len(shards))
	for i, c := range rows {
		got += c
		counts[i] = fmt.Sprintf("shard %d: %d", i+1, c)
	}
	if got != want {
		return fmt.Errorf("the stage's %d rows reached the shards as %d (%s); nothing was swapped", want, got, strings.Join(counts, ", "))
	}

	// Swap each shard's part into its local table, one shard after the
	// other (so that a crash leaves at most one shard half way).
	if err := changing(); err != nil {
		return err
	}
	for i, n := range first {
		sub := &adapters.Stage{Relation: part, Target: local, Model: st.Model, Window: st.Window, Tag: st.Tag, Columns: st.Columns,
			State: &stageState{key: linfo.PartitionKey, workEngine: unreplicated(engine)}}
		if err := n.swap(ctx, tag, sub, nil, nil); err != nil {
			if i > 0 && !errors.Is(err, adapters.ErrMaybePublished) {
				err = fmt.Errorf("%w: %w", adapters.ErrMaybePublished, err)
			}
			return fmt.Errorf("shard %d (on %s): %w", i+1, n.addr, err)
		}
		if err := syncOthers(ctx, tag, a.cluster.shards[i], n, local); err != nil {
			return fmt.Errorf("%w: shard %d: %w", adapters.ErrMaybePublished, i+1, err)
		}
	}
	return nil
}

// alterSharded applies change to the local table on one replica of each
// shard (ZooKeeper carries it to the others) and to the Distributed table
// on every node (ClickHouse refuses ALTER ... ON CLUSTER of a table that
// is not replicated on a cluster whose shards are). A node that does not
// answer fails it: run again once it is back, which applies what is
// missing.
func (a *Adapter) alterSharded(ctx context.Context, tag adapters.Tag, target, local models.Relation, change *adapters.SchemaChange) error {
	defer a.forget(local)
	defer a.forget(target)
	for i, replicas := range a.cluster.shards {
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
			return fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, a.cluster.name)
		}
	}
	return a.alterEveryNode(ctx, tag, target, change)
}

// alterEveryNode applies change to table (a Distributed table, which
// is not replicated) on every node; a node that does not answer fails it.
func (a *Adapter) alterEveryNode(ctx context.Context, tag adapters.Tag, table models.Relation, change *adapters.SchemaChange) error {
	defer a.forget(table)
	for _, n := range a.cluster.nodes() {
		if err := n.alter(ctx, tag, table, change); err != nil {
			return fmt.Errorf("on %s: %w", n.addr, err)
		}
	}
	return nil
}

// cleanNodes runs clean on every node, skipping those that do not answer.
func (a *Adapter) cleanNodes(clean func(n *Adapter) error) error {
	var errs []error
	for _, n := range a.cluster.nodes() {
		if err := clean(n); err != nil && !unreachable(err) {
			errs = append(errs, fmt.Errorf("on %s: %w", n.addr, err))
		}
	}
	return errors.Join(errs...)
}

// clusterGuarantee is Info().Guarantee on a cluster.
func clusterGuarantee(c *cluster) string {
	n := strconv.Itoa(len(c.nodes()))
	if c.layout == LayoutSharded {
		return "on cluster " + c.name + " (" + strconv.Itoa(len(c.shards)) + " shards, " + n + " nodes), each shard's physical partitions are replaced atomically " +
			"(REPLACE PARTITION on one replica, which ZooKeeper carries to the others; refill waits for every replica that answers), " +
			"but the shards of a window one after the other, so a query may briefly see one shard's new rows with another's old; " +
			"the ledger holds the window pending before any shard changes and done only after every shard has swapped, " +
			"so after a crash the next run, from any node, redoes the window on every shard"
	}
	return "on cluster " + c.name + " (" + n + " replicas of every table), each physical partition is replaced atomically " +
		"(REPLACE PARTITION on the coordinator's replica, which ZooKeeper carries to the others; refill waits for every replica " +
		"that answers), but a window spanning several partitions is not; the ledger holds the window pending before the swap " +
		"and done after it, so after a crash the next run, from any node, redoes its partitions"
}

// dropShared drops a table that every node has on a cluster (ON CLUSTER),
// or the server's.
func (a *Adapter) dropShared(ctx context.Context, tag adapters.Tag, table models.Relation) {
	if a.cluster != nil {
		a.dropOnCluster(ctx, tag, table)
		return
	}
	a.drop(ctx, tag, table)
}

// alterDistributed changes the columns of the Distributed table target on
// every node from have to want.
func (a *Adapter) alterDistributed(ctx context.Context, tag adapters.Tag, target models.Relation, have, want []adapters.TableColumn) error {
	change := &adapters.SchemaChange{Add: want, Widen: want}
	for _, h := range have {
		if !slices.ContainsFunc(want, func(c adapters.TableColumn) bool { return c.Name == h.Name }) {
			change.Drop = append(change.Drop, h.Name)
		}
	}
	return a.alterEveryNode(ctx, tag, target, change)
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
func (a *Adapter) rebuildOnCluster(ctx context.Context, tag adapters.Tag, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	defer a.forget(target)
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
	if a.sharded() {
		if key, err = a.shardingKey(stages[0].Model); err != nil {
			return err
		}
		local.Name += LocalSuffix
		if info != nil {
			l, _, dist, err := a.localOf(ctx, tag, target, info)
			if err != nil {
				return err
			}
			local, key = l, dist.key
		}
	} else if info != nil {
		if err := a.swappable(info, target); err != nil {
			return err
		}
	}

	// The new table, filled.
	fresh := a.tableName(target, adapters.KindSwap, tag.RunID)
	freshLocal, err := a.createOnCluster(ctx, tag, fresh, defs, engine, key, false)
	if err != nil {
		return err
	}
	bg := context.WithoutCancel(ctx)
	defer a.dropOnCluster(bg, tag, fresh)
	defer a.dropOnCluster(bg, tag, freshLocal)
	if err := a.insertStages(withSettings(ctx, clickhouse.Settings{"insert_distributed_sync": 1}), tag, fresh, stages); err != nil {
		return err
	}
	cols, err := a.Columns(ctx, fresh) // what the Distributed table must have
	if err != nil {
		return err
	}
	want := int64(0)
	for _, st := range stages {
		res, err := a.query(ctx, tag, "SELECT count() FROM "+st.Relation.Quote(a.d))
		if err != nil {
			return err
		}
		want += adapters.Int(res.Rows[0][0])
	}
	// Every replica that answers holds the new rows before the rename.
	got := int64(0)
	for i, replicas := range a.cluster.shards {
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
			return fmt.Errorf("no replica of shard %d of cluster %s answers", i+1, a.cluster.name)
		}
		if !a.sharded() {
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
	if a.sharded() && info != nil {
		if oldDist, err = a.Columns(ctx, target); err != nil {
			return err
		}
	}
	old := a.tableName(target, adapters.KindSwap, tag.RunID)
	renames := []string{freshLocal.Quote(a.d) + " TO " + local.Quote(a.d)}
	if info != nil {
		renames = append([]string{local.Quote(a.d) + " TO " + old.Quote(a.d)}, renames...)
	}
	defer a.forget(local)
	if err := a.exec(ctx, tag, "RENAME TABLE "+strings.Join(renames, ", ")+a.onCluster()); err != nil {
		return fmt.Errorf("%w: swapping in the rebuilt %s: %w", adapters.ErrMaybePublished, target, err)
	}
	if info != nil {
		a.dropOnCluster(bg, tag, old)
	}
	if a.sharded() {
		var err error
		if info == nil {
			err = a.exec(ctx, tag, a.distributedSQL("CREATE TABLE ", target, local, a.onCluster(), key))
		} else {
			err = a.alterDistributed(ctx, tag, target, oldDist, cols)
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
func onEach(nodes []*Adapter, fn func(i int, n *Adapter) error) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = fn(i, n) })
	}
	wg.Wait()
	return errs
}
