package runner

import (
	"fmt"
	"sort"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// node is one planned partition in the run's DAG.
type node struct {
	// run is the plan's run the partition belongs to, shared by its
	// nodes: its Step is the node's step but for the partition, which is
	// part (a run's steps differ in nothing else). Nodes do not expand
	// the plan's runs into steps: at ten years of 1,000 daily models
	// those are 640 MB.
	run  *plan.Run
	part models.Partition
	deps []*node
	// after is a node that must finish first, whatever its outcome: the
	// previous partition of a model whose audits compare with it.
	after   *node
	unit    *unit
	waiters []*unit // units that wait for this node
	// result is the node's entry in the run's results (schedule), which
	// become the summary's Partitions as they are; final once it has a
	// status.
	result *PartitionResult
}

// done reports whether n's result is final.
func (n *node) done() bool { return n.result.Status != "" }

// unit is a group of consecutive partitions of one model that run as one
// statement (a batch), or a single partition.
type unit struct {
	model   *models.Model
	nodes   []*node
	waiting int // unfinished nodes of other units this one depends on
	order   int // graph position, for a stable launch order
}

// schedule builds the partition-level DAG of a plan and groups it into
// units of at most batch(m) consecutive partitions. results holds a result
// for each node, in plan order, with room for the plan's blocked steps.
func schedule(p *plan.Plan, batch func(*models.Model) int) (nodes []*node, units []*unit, results []PartitionResult) {
	nodes = make([]*node, p.Len())
	results = make([]PartitionResult, p.Len(), p.Len()+p.LenBlocked())
	all := make([]node, p.Len()) // one allocation, not one a node
	runs := p.Runs()
	i := 0
	for r := range runs {
		for st := range runs[r].Steps() {
			n := &all[i]
			n.run, n.part, n.result = &runs[r], st.Partition, &results[i]
			*n.result = PartitionResult{Model: st.Model.Name, Partition: st.Partition.Key}
			nodes[i] = n
			i++
		}
	}
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
		m := n.run.Model
		for _, up := range m.Upstream {
			upNodes := byModel[up]
			if len(upNodes) == 0 {
				continue
			}
			span := models.DependencySpan(m, n.part, up)
			if span.All || up.Kind() != models.TimePartitioned {
				n.deps = append(n.deps, upNodes...)
				continue
			}
			// Extents reach at most models.ExtentPad beyond windows.
			from := span.Start.Add(-models.ExtentPad)
			i := sort.Search(len(upNodes), func(i int) bool { return upNodes[i].part.End.After(from) })
			for ; i < len(upNodes) && upNodes[i].part.Start.Before(span.End.Add(models.ExtentPad)); i++ {
				if span.Overlaps(up, upNodes[i].part) {
					n.deps = append(n.deps, upNodes[i])
				}
			}
		}
		if m.Config.Self && n.run.Reason != plan.ReasonRemove {
			// Reads its own previous partition: published first (a
			// removal reads nothing; the first partition after removed
			// ones waits for them).
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].part.Start.Before(n.part.Start) }); i > 0 &&
				ns[i-1].part.End.Equal(n.part.Start) {
				n.deps = append(n.deps, ns[i-1])
			}
		} else if comparesWithPrevious(m) {
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].part.Start.Before(n.part.Start) }); i > 0 &&
				ns[i-1].part.End.Equal(n.part.Start) {
				n.after = ns[i-1]
			}
		}
	}
	order := 0
	for _, m := range p.Models {
		size := batch(m)
		if p.Rebuild[m] {
			size = len(byModel[m]) // a rebuild is one unit: the whole table at once
		}
		// Each unit is a range of the model's nodes.
		ns := byModel[m]
		var cur *unit
		for j, n := range ns {
			removal := n.run.Reason == plan.ReasonRemove
			if cur == nil || len(cur.nodes) >= size && !removal || !adjacent(cur.nodes[len(cur.nodes)-1], n) && !p.Rebuild[m] ||
				(cur.nodes[0].run.Reason == plan.ReasonRemove) != removal {
				// (Removals are units of their own, as long as they run:
				// deleting nothing but rows, any size is batch-safe.)
				cur = &unit{model: m, order: order, nodes: ns[j:j:j]}
				order++
				units = append(units, cur)
			}
			cur.nodes = ns[j-len(cur.nodes) : j+1 : j+1]
			n.unit = cur
		}
	}
	for _, u := range units {
		// The partitions of a batch share upstream partitions: each
		// waits once. (One partition's dependencies are distinct, and a
		// unit of one, the default, needs no map.)
		var seen map[*node]bool
		if len(u.nodes) > 1 {
			seen = map[*node]bool{}
		}
		for _, n := range u.nodes {
			for i := range len(n.deps) + 1 {
				d := n.after
				if i < len(n.deps) {
					d = n.deps[i]
				}
				if d != nil && d.unit != u && !seen[d] {
					if seen != nil {
						seen[d] = true
					}
					d.waiters = append(d.waiters, u)
					u.waiting++
				}
			}
		}
	}
	return nodes, units, results
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
	pa, pb := a.part, b.part
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
