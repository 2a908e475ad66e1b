package runner

import (
	"sort"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// node is one planned partition in the run's DAG.
type node struct {
	step  *plan.Step
	index int // position in the plan
	deps  []*node
	// after are nodes that must finish first, whatever their outcome: the
	// previous partition of a model whose audits compare with it.
	after   []*node
	unit    *unit
	waiters []*unit // units that wait for this node
	result  PartitionResult
	done    bool // result is final
}

// unit is a group of consecutive partitions of one model that run as one
// statement (a batch), or a single partition.
type unit struct {
	model   *models.Model
	nodes   []*node
	waiting int // unfinished nodes of other units this one depends on
	order   int // graph position, for a stable launch order
}

// schedule builds the partition-level DAG of a plan and groups it into
// units of at most batch(m) consecutive partitions.
func schedule(p *plan.Plan, batch func(*models.Model) int) (nodes []*node, units []*unit) {
	steps := p.Steps()
	nodes = make([]*node, len(steps))
	byModel := map[*models.Model][]*node{}
	for i := range steps {
		n := &node{step: &steps[i], index: i}
		n.result = PartitionResult{Model: n.step.Model.Name, Partition: n.step.Partition.Key}
		nodes[i] = n
		byModel[n.step.Model] = append(byModel[n.step.Model], n)
	}
	// Dependencies: a partition waits for the planned upstream partitions
	// it reads (models.DependencySpan).
	for _, n := range nodes {
		m := n.step.Model
		for _, up := range m.Upstream {
			upNodes := byModel[up]
			if len(upNodes) == 0 {
				continue
			}
			span := models.DependencySpan(m, n.step.Partition, up)
			if span.All || up.Kind() != models.TimePartitioned {
				n.deps = append(n.deps, upNodes...)
				continue
			}
			// Extents reach at most models.ExtentPad beyond windows.
			from := span.Start.Add(-models.ExtentPad)
			i := sort.Search(len(upNodes), func(i int) bool { return upNodes[i].step.Partition.End.After(from) })
			for ; i < len(upNodes) && upNodes[i].step.Partition.Start.Before(span.End.Add(models.ExtentPad)); i++ {
				if span.Overlaps(up, upNodes[i].step.Partition) {
					n.deps = append(n.deps, upNodes[i])
				}
			}
		}
		if m.Config.Self && n.step.Reason != plan.ReasonRemove {
			// Reads its own previous partition: published first (a
			// removal reads nothing; the first partition after removed
			// ones waits for them).
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].step.Partition.Start.Before(n.step.Partition.Start) }); i > 0 &&
				ns[i-1].step.Partition.End.Equal(n.step.Partition.Start) {
				n.deps = append(n.deps, ns[i-1])
			}
		} else if comparesWithPrevious(m) {
			ns := byModel[m]
			if i := sort.Search(len(ns), func(i int) bool { return !ns[i].step.Partition.Start.Before(n.step.Partition.Start) }); i > 0 &&
				ns[i-1].step.Partition.End.Equal(n.step.Partition.Start) {
				n.after = append(n.after, ns[i-1])
			}
		}
	}
	order := 0
	for _, m := range p.Models {
		size := batch(m)
		if p.Rebuild[m] {
			size = len(byModel[m]) // a rebuild is one unit: the whole table at once
		}
		var cur *unit
		for _, n := range byModel[m] {
			removal := n.step.Reason == plan.ReasonRemove
			if cur == nil || len(cur.nodes) >= size && !removal || !adjacent(cur.nodes[len(cur.nodes)-1], n) && !p.Rebuild[m] ||
				(cur.nodes[0].step.Reason == plan.ReasonRemove) != removal {
				// (Removals are units of their own, as long as they run:
				// deleting nothing but rows, any size is batch-safe.)
				cur = &unit{model: m, order: order}
				order++
				units = append(units, cur)
			}
			cur.nodes = append(cur.nodes, n)
			n.unit = cur
		}
	}
	for _, u := range units {
		seen := map[*node]bool{}
		for _, n := range u.nodes {
			for _, d := range append(n.deps[:len(n.deps):len(n.deps)], n.after...) {
				if d.unit != u && !seen[d] {
					seen[d] = true
					d.waiters = append(d.waiters, u)
					u.waiting++
				}
			}
		}
	}
	return nodes, units
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
	pa, pb := a.step.Partition, b.step.Partition
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
