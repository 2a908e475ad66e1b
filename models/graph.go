package models

import (
	"fmt"
	"sort"
	"strings"
)

// Graph is the DAG of models formed by ref(): an edge runs from each model
// to every model that reads it.
type Graph struct {
	// Order lists every model so that each comes after all it reads.
	// Among models with no order between them, names sort.
	Order      []*Model
	index      map[*Model]int
	downstream map[*Model][]*Model
}

// CycleError reports models whose refs form a loop.
type CycleError struct {
	Cycle []*Model // the loop, starting and ending with the same model
}

func (e *CycleError) Error() string {
	parts := make([]string, len(e.Cycle))
	for i, m := range e.Cycle {
		parts[i] = fmt.Sprintf("%s (%s)", m.Name, m.Path)
	}
	return "models form a cycle through ref(): " + strings.Join(parts, " -> ")
}

func newGraph(models []*Model) (*Graph, error) {
	g := &Graph{index: map[*Model]int{}, downstream: map[*Model][]*Model{}}
	if c := findCycle(models); c != nil {
		err := &CycleError{Cycle: c}
		return nil, &Error{File: c[0].Path, Msg: err.Error(), Err: err}
	}
	indegree := map[*Model]int{}
	for _, m := range models {
		indegree[m] += 0
		for _, up := range m.Upstream {
			g.downstream[up] = append(g.downstream[up], m)
			indegree[m]++
		}
	}
	var ready []*Model
	for _, m := range models {
		if indegree[m] == 0 {
			ready = append(ready, m)
		}
	}
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool { return ready[i].Name < ready[j].Name })
		m := ready[0]
		ready = ready[1:]
		g.index[m] = len(g.Order)
		g.Order = append(g.Order, m)
		for _, down := range g.downstream[m] {
			if indegree[down]--; indegree[down] == 0 {
				ready = append(ready, down)
			}
		}
	}
	for _, list := range g.downstream {
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	return g, nil
}

// findCycle returns one cycle among models, or nil.
func findCycle(models []*Model) []*Model {
	const (
		unvisited = iota
		active
		finished
	)
	state := map[*Model]int{}
	var stack []*Model
	var visit func(m *Model) []*Model
	visit = func(m *Model) []*Model {
		state[m] = active
		stack = append(stack, m)
		for _, up := range m.Upstream {
			switch state[up] {
			case active:
				for i, s := range stack {
					if s == up {
						cycle := append([]*Model{}, stack[i:]...)
						// Print the loop in data-flow order (upstream first),
						// starting from the first name, so it reads the same
						// whichever model the search started from.
						for l, r := 0, len(cycle)-1; l < r; l, r = l+1, r-1 {
							cycle[l], cycle[r] = cycle[r], cycle[l]
						}
						first := 0
						for j, c := range cycle {
							if c.Name < cycle[first].Name {
								first = j
							}
						}
						cycle = append(cycle[first:], cycle[:first]...)
						return append(cycle, cycle[0])
					}
				}
			case unvisited:
				if c := visit(up); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[m] = finished
		return nil
	}
	for _, m := range models {
		if state[m] == unvisited {
			if c := visit(m); c != nil {
				return c
			}
		}
	}
	return nil
}

// Index returns m's position in Order.
func (g *Graph) Index(m *Model) int { return g.index[m] }

// Downstream returns the models that read m directly, sorted by name.
func (g *Graph) Downstream(m *Model) []*Model { return g.downstream[m] }

// Sort orders models as in g.Order.
func (g *Graph) Sort(models []*Model) {
	sort.Slice(models, func(i, j int) bool { return g.index[models[i]] < g.index[models[j]] })
}

// closure returns m and everything reachable from it through next.
func closure(m *Model, next func(*Model) []*Model, into map[*Model]bool) {
	into[m] = true
	for _, n := range next(m) {
		if !into[n] {
			closure(n, next, into)
		}
	}
}
