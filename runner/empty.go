package runner

import (
	"fmt"
	"sort"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// warnEmpty warns about every partition the run published without rows
// although the partitions of refill models it reads hold rows: a filter
// that matches nothing looks like an empty day otherwise. (On ClickHouse
// 18.16, for one, a DateTime column compared with {{ start }}, a Date,
// matches no row, and verification, which only sees the rows staged,
// cannot tell.) The upstream rows come from this run's counts, or else
// from the ledger the plan read; sources, which refill does not count,
// give no signal, nor do whole-table and list models a time-partitioned
// one reads (a dimension holds rows whatever the window).
func (e *execution) warnEmpty() {
	e.mu.Lock()
	defer e.mu.Unlock()
	var warnings []string
	for _, n := range e.nodes {
		if n.result.Status != Succeeded || n.result.Rows != 0 || n.run.Reason == plan.ReasonRemove || n.result.Unchanged {
			continue
		}
		m, p := n.run.Model, n.part()
		for _, up := range m.Upstream {
			if up == m || m.Kind() == models.TimePartitioned && up.Kind() != models.TimePartitioned {
				// Its own past, or a whole table it looks things up in,
				// which holds rows whatever the window.
				continue
			}
			last, _ := up.LastComplete(e.plan.Selection.Now)
			var rows int64
			var read []string
			for _, q := range models.ReadPartitions(m, p, up, last) {
				n, ok := e.counts[up.Name][q.Key]
				if !ok {
					if rec := e.plan.Record(up.Name, q.Key); rec != nil && rec.State.Published() {
						n, ok = rec.Rows, true
					}
				}
				if ok && n > 0 {
					rows += n
					read = append(read, q.Key)
				}
			}
			if rows > 0 {
				warnings = append(warnings, fmt.Sprintf("%s %s published no rows, though the %s partitions it reads (%s) hold %s: "+
					"check the model's filters (on ClickHouse 18.16, a DateTime column compared with {{ start }}, a Date, matches nothing)",
					m.Name, p.Key, up.Name, models.KeyRange(read[0], read[len(read)-1]), plan.Plural(int(rows), "row")))
				break
			}
		}
	}
	sort.Strings(warnings)
	for _, w := range warnings {
		e.summary.Warnings = append(e.summary.Warnings, w)
		e.observe(Event{Kind: EventWarning, Message: w})
	}
}
