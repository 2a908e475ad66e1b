package runner

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// dag is the partition-level DAG of a run's plan, grouped into units
// (schedule). A run holds one node, unit slot and result for every
// partition of its selection at once, millions for years of daily models,
// so these are small: nodes keep their partition's window as two numbers
// and their edges as ranges of two shared arrays.
type dag struct {
	nodes   []*node           // in plan order: nodes[i].result is &results[i]
	units   []unit            // in launch order: a unit's order is its index
	results []PartitionResult // the nodes', with room for the plan's blocked steps
	deps    []*node           // the nodes' dependencies (node.deps)
	waiters []*unit           // the units waiting for each node (node.waiters)
}

// node is one planned partition in the run's DAG.
type node struct {
	// run is the plan's run the partition belongs to, shared by its
	// nodes: its Step is the node's step but for the partition, which is
	// part (a run's steps differ in nothing else). Nodes do not expand
	// the plan's runs into steps: at ten years of 1,000 daily models
	// those are 640 MB.
	run *plan.Run
	// start and end are the partition's window in Unix seconds, for the
	// partitions of runs of more than one (time partitions, whose key is
	// the result's): part rebuilds it.
	start, end int64
	// deps are the nodes this one reads (a range of dag.deps), waiters
	// the units waiting for it (a range of dag.waiters).
	deps, waiters span
	// after is a node that must finish first, whatever its outcome: the
	// previous partition of a model whose audits compare with it.
	after *node
	unit  *unit
	// result is the node's entry in the run's results (schedule), which
	// become the summary's Partitions as they are; final once it has a
	// status.
	result *PartitionResult
}

// span is a range of one of a dag's arrays.
type span struct{ lo, hi int32 }

// done reports whether n's result is final.
func (n *node) done() bool { return n.result.Status != "" }

// part returns n's partition.
func (n *node) part() models.Partition {
	if n.run.N == 1 {
		return n.run.Step.Partition
	}
	return models.Partition{Key: n.result.Partition, Start: time.Unix(n.start, 0).UTC(), End: time.Unix(n.end, 0).UTC()}
}

// depsOf returns the nodes n reads.
func (g *dag) depsOf(n *node) []*node { return g.deps[n.deps.lo:n.deps.hi] }

// waitersOf returns the units waiting for n.
func (g *dag) waitersOf(n *node) []*unit { return g.waiters[n.waiters.lo:n.waiters.hi] }

// unit is a group of consecutive partitions of one model that run as one
// statement (a batch), or a single partition.
type unit struct {
	model   *models.Model
	nodes   []*node
	waiting int32 // unfinished nodes of other units this one depends on
	order   int32 // graph position, for a stable launch order: its index in dag.units
}

// schedule builds the partition-level DAG of a plan and groups it into
// units of at most batch(m) consecutive partitions.
func schedule(p *plan.Plan, batch func(*models.Model) int) *dag {
	index(p.Len())
	g := &dag{nodes: make([]*node, p.Len()), deps: make([]*node, 0, p.Len()), results: make([]PartitionResult, p.Len(), p.Len()+p.LenBlocked())}
	all := make([]node, p.Len()) // one allocation, not one a node
	runs := p.Runs()
	i := 0
	for r := range runs {
		for st := range runs[r].Steps() {
			n := &all[i]
			n.run, n.result = &runs[r], &g.results[i]
			if runs[r].N > 1 {
				n.start, n.end = st.Partition.Start.Unix(), st.Partition.End.Unix()
			}
			*n.result = PartitionResult{Model: st.Model.Name, Partition: st.Partition.Key}
			g.nodes[i] = n
			i++
		}
	}
	nodes := g.nodes
	// The plan holds each model's steps together, in partition order
	// (plan.Plan.Runs): a model's nodes are a range of nodes.
	byModel := map[*models.Model][]*node{}
	for lo := 0; lo < len(nodes); {
		m, hi := nodes[lo].run.Model, lo+1
		for hi < len(nodes) && nodes[hi].run.Model == m {
			hi++
		}
		if byModel[m] != nil {
			panic(fmt.Sprintf("the plan holds the steps of %s apart", m.Name))
		}
		byModel[m] = nodes[lo:hi:hi]
		lo = hi
	}
	// Dependencies: a partition waits for the planned upstream partitions
	// it reads (models.DependencySpan).
	for _, n := range nodes {
		m, part := n.run.Model, n.part()
		n.deps.lo = index(len(g.deps))
		for _, up := range m.Upstream {
			upNodes := byModel[up]
			if len(upNodes) == 0 {
				continue
			}
			reach := models.DependencySpan(m, part, up)
			if reach.All || up.Kind() != models.TimePartitioned {
				g.deps = append(g.deps, upNodes...)
				continue
			}
			// Extents reach at most models.ExtentPad beyond windows.
			from := reach.Start.Add(-models.ExtentPad)
			i := sort.Search(len(upNodes), func(i int) bool { return upNodes[i].part().End.After(from) })
			for ; i < len(upNodes); i++ {
				upPart := upNodes[i].part()
				if !upPart.Start.Before(reach.End.Add(models.ExtentPad)) {
					break
				}
				if reach.Overlaps(up, upPart) {
					g.deps = append(g.deps, upNodes[i])
				}
			}
		}
		if m.Config.Self && n.run.Reason != plan.ReasonRemove {
			// Reads its own previous partition: published first (a
			// removal reads nothing; the first partition after removed
			// ones waits for them).
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].part().Start.Before(part.Start) }); i > 0 &&
				ns[i-1].part().End.Equal(part.Start) {
				g.deps = append(g.deps, ns[i-1])
			}
		} else if comparesWithPrevious(m) {
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].part().Start.Before(part.Start) }); i > 0 &&
				ns[i-1].part().End.Equal(part.Start) {
				n.after = ns[i-1]
			}
		}
		n.deps.hi = index(len(g.deps))
	}
	// Each unit is a range of its model's nodes. Counted first: a run of
	// one partition a unit, the default, holds millions.
	count := 0
	for _, m := range p.Models {
		split(p, m, byModel[m], batch, func([]*node) { count++ })
	}
	g.units = make([]unit, 0, count)
	for _, m := range p.Models {
		split(p, m, byModel[m], batch, func(ns []*node) {
			g.units = append(g.units, unit{model: m, order: index(len(g.units)), nodes: ns})
			for _, n := range ns {
				n.unit = &g.units[len(g.units)-1]
			}
		})
	}
	// Waiters, in two passes: count each node's, then place them.
	for i := range g.units {
		u := &g.units[i]
		g.eachWait(u, func(d *node) {
			d.waiters.hi++
			u.waiting++
		})
	}
	next := 0
	for _, n := range nodes {
		count := int(n.waiters.hi)
		n.waiters = span{index(next), index(next)}
		next += count
	}
	g.waiters = make([]*unit, index(next))
	for i := range g.units {
		u := &g.units[i]
		g.eachWait(u, func(d *node) {
			g.waiters[d.waiters.hi] = u
			d.waiters.hi++
		})
	}
	return g
}

// split calls f with each unit of model m's nodes ns, in order: at most
// batch(m) adjacent partitions, removals apart from the rest, or with a
// rebuild all of them, the whole table at once. (Removals are units of
// their own, as long as they run: deleting nothing but rows, any size is
// batch-safe.)
func split(p *plan.Plan, m *models.Model, ns []*node, batch func(*models.Model) int, f func([]*node)) {
	rebuild, size := p.Rebuild[m], len(ns)
	if !rebuild {
		size = batch(m)
	}
	lo := 0
	for j := 1; j <= len(ns); j++ {
		if j < len(ns) {
			removal := ns[j].run.Reason == plan.ReasonRemove
			if (j-lo < size || removal) && (adjacent(ns[j-1], ns[j]) || rebuild) &&
				(ns[lo].run.Reason == plan.ReasonRemove) == removal {
				continue
			}
		}
		f(ns[lo:j:j])
		lo = j
	}
}

// eachWait calls f once for each node of another unit that u waits for:
// its nodes' dependencies and the nodes they must follow. The partitions
// of a batch share upstream partitions: each is waited for once.
func (g *dag) eachWait(u *unit, f func(d *node)) {
	var seen map[*node]bool // one partition's dependencies are distinct, and a unit of one, the default, needs no map
	if len(u.nodes) > 1 {
		seen = map[*node]bool{}
	}
	for _, n := range u.nodes {
		deps := g.depsOf(n)
		for i := range len(deps) + 1 {
			d := n.after
			if i < len(deps) {
				d = deps[i]
			}
			if d != nil && d.unit != u && !seen[d] {
				if seen != nil {
					seen[d] = true
				}
				f(d)
			}
		}
	}
}

// index returns i as an index of a dag's arrays, which a node holds as
// 32 bits.
func index(i int) int32 {
	if i > math.MaxInt32 {
		panic(fmt.Sprintf("a run's DAG of %d nodes or edges: more than a run can schedule", i))
	}
	return int32(i)
}

// comparesWithPrevious reports whether m has an audit that compares each
// partition's rows with the previous partition's: its partitions are then
// staged in order, so the previous count is this run's.
func comparesWithPrevious(m *models.Model) bool {
	if m.Kind() != models.TimePartitioned {
		return false
	}
	for _, a := range m.Config.Audits {
		if a.Kind == models.AuditRowCount && a.Within != nil {
			return true
		}
	}
	return false
}

// adjacent reports whether b's window starts where a's ends.
func adjacent(a, b *node) bool {
	pa, pb := a.part(), b.part()
	return !pa.Start.IsZero() && pa.End.Equal(pb.Start)
}

// runs splits nodes into maximal runs of adjacent partitions.
func runs(nodes []*node) [][]*node {
	var out [][]*node
	for i, n := range nodes {
		if i == 0 || !adjacent(nodes[i-1], n) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], n)
	}
	return out
}
