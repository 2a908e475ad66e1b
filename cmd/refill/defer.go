package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// deferTo makes s read the models sel does not build, and its selected
// models read, from target other's tables (--defer): production's data
// for a change built or diffed in a development target, without building
// its upstream there. The other target must use the same engine, and the
// adapter must be able to read its tables; its ledger says which of those
// models' partitions are built, so a partition reading one that is not is
// blocked as usual. It notes on stderr what it deferred.
func (a *app) deferTo(s *session, other string, sel plan.Selection) error {
	if other == "" {
		return nil
	}
	if other == s.target.Name {
		return usagef("--defer %s: that is the command's own target", other)
	}
	t, err := s.project.LookupTarget(other)
	if err != nil {
		return usageError{err}
	}
	if t.Adapter != s.target.Adapter {
		return usagef("--defer %s: target %s is %s and target %s is %s; deferral reads another target's tables in the same warehouse engine", other, other, t.Adapter, s.target.Name, s.target.Adapter)
	}
	cross, ok := s.adapter.(adapters.CrossReader)
	if !ok {
		return usagef("--defer %s: the %s adapter cannot read another target's tables", other, s.info.Name)
	}
	selected, err := s.project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return usageError{err}
	}
	isSelected := map[*models.Model]bool{}
	for _, m := range selected {
		isSelected[m] = true
	}
	var deferred []*models.Model
	for _, m := range selected {
		for _, up := range m.Upstream {
			if !isSelected[up] && !slices.Contains(deferred, up) {
				deferred = append(deferred, up)
			}
		}
	}
	if len(deferred) == 0 {
		fmt.Fprintf(a.stderr, "note: --defer %s: the selected models read no model the selection leaves out; nothing is deferred\n", other)
		return nil
	}
	saved := a.target
	a.target = other
	o, err := a.session(readOnly, false, "refill (deferred to)", nil)
	a.target = saved
	if err != nil {
		return err
	}
	s.deferred = o
	name, err := cross.ReadFrom(a.ctx, o.adapter)
	if err != nil {
		return usagef("--defer %s: %v", other, err)
	}
	s.scope.Defer = map[string]models.SQL{}
	names := map[string]bool{}
	var lines []string
	for _, m := range deferred {
		text := models.SQL(name(o.scope.Relation(m)))
		s.scope.Defer[m.Name], names[m.Name] = text, true
		lines = append(lines, fmt.Sprintf("  %s -> %s", m.Name, text))
	}
	s.runner.Reader.Defer = &plan.Deferral{Target: other, Reader: &o.runner.Reader, Models: names}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "deferred to target %s (read from its tables, as its ledger records them):\n%s\n", other, strings.Join(lines, "\n"))
	}
	return nil
}
