package models

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Select returns the models matched by selectors minus those matched by
// excludes, in graph order. No selectors selects every model.
//
// Each selector is a union of terms separated by spaces or commas. A term is
// a model name (marts.daily_revenue or an unambiguous daily_revenue), a path
// glob under the models folder (marts/* or marts/), tag:NAME, or any of
// those with a + before (also everything upstream) or after (also everything
// downstream).
func (p *Project) Select(selectors, excludes []string) ([]*Model, error) {
	s, err := p.SelectDetail(selectors, excludes)
	if err != nil {
		return nil, err
	}
	return s.Models, nil
}

// Selected is what a selection chose, and how.
type Selected struct {
	Models []*Model // in graph order
	// Upstream holds the models chosen because a term with a leading +
	// asked for the models its match reads (not the match itself): their
	// partitions are chosen by what the selected partitions downstream of
	// them read. Direct holds the models a term matched itself, or through
	// a trailing + (everything, with no selectors): their partitions are
	// chosen by the range. A model may be in both.
	Upstream, Direct map[*Model]bool
	// Named holds the models a term named (marts.daily_revenue,
	// daily_revenue+), not those a tag or a path matched.
	Named map[*Model]bool
}

// SelectDetail is Select, also telling which models came from a leading +.
func (p *Project) SelectDetail(selectors, excludes []string) (*Selected, error) {
	direct := map[*Model]bool{}
	upstream := map[*Model]bool{}
	named := map[*Model]bool{}
	terms := SelectorTerms(selectors)
	if len(terms) == 0 {
		for _, m := range p.Models {
			direct[m] = true
		}
	}
	for _, term := range terms {
		if err := p.matchTerm(term, direct, upstream); err != nil {
			return nil, err
		}
		if m, err := p.Model(strings.Trim(term, "+")); err == nil {
			named[m] = true
		}
	}
	drop := map[*Model]bool{}
	for _, term := range SelectorTerms(excludes) {
		if err := p.matchTerm(term, drop, drop); err != nil {
			return nil, err
		}
	}
	s := &Selected{Upstream: map[*Model]bool{}, Direct: map[*Model]bool{}, Named: map[*Model]bool{}}
	for _, m := range p.Graph.Order {
		if (direct[m] || upstream[m]) && !drop[m] {
			s.Models = append(s.Models, m)
			if named[m] {
				s.Named[m] = true
			}
			if upstream[m] {
				s.Upstream[m] = true
			}
			if direct[m] {
				s.Direct[m] = true
			}
		}
	}
	return s, nil
}

// SelectorTerms splits selectors into their terms, as Select reads them:
// separated by commas, spaces and tabs.
func SelectorTerms(selectors []string) []string {
	var out []string
	for _, s := range selectors {
		out = append(out, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	}
	return out
}

// matchTerm adds the models term matches, and those of its trailing +, to
// into, and those of its leading + to upstreamOf.
func (p *Project) matchTerm(term string, into, upstreamOf map[*Model]bool) error {
	body := term
	up := strings.HasPrefix(body, "+")
	body = strings.TrimPrefix(body, "+")
	down := strings.HasSuffix(body, "+")
	body = strings.TrimSuffix(body, "+")
	if body == "" {
		return fmt.Errorf("invalid selector %q", term)
	}
	var matched []*Model
	switch {
	case strings.HasPrefix(body, "tag:"):
		tag := strings.TrimPrefix(body, "tag:")
		for _, m := range p.Models {
			if slices.Contains(m.Config.Tags, tag) {
				matched = append(matched, m)
			}
		}
		if len(matched) == 0 {
			return fmt.Errorf("selector %q: no model has tag %q%s", term, tag, suggest(tag, p.tags()))
		}
	case strings.HasPrefix(body, "path:") || strings.ContainsAny(body, "*?[/"):
		pattern := strings.TrimPrefix(body, "path:")
		for _, m := range p.Models {
			if matchPath(pattern, m, p.ModelsDir) {
				matched = append(matched, m)
			}
		}
		if len(matched) == 0 {
			return fmt.Errorf("selector %q matches no model file under %s/", term, p.ModelsDir)
		}
	default:
		m, err := p.Model(body)
		if err != nil {
			return fmt.Errorf("selector %q: %w", term, err)
		}
		matched = []*Model{m}
	}
	for _, m := range matched {
		into[m] = true
		if up {
			reads := map[*Model]bool{}
			closure(m, func(m *Model) []*Model { return m.Upstream }, reads)
			delete(reads, m)
			for u := range reads {
				upstreamOf[u] = true
			}
		}
		if down {
			closure(m, p.Graph.Downstream, into)
		}
	}
	return nil
}

// matchPath matches a glob against a model's file path under the models
// folder (with or without .sql) and its dotted name. A pattern ending in /
// matches everything in that folder.
func matchPath(pattern string, m *Model, modelsDir string) bool {
	rel := strings.TrimPrefix(m.Path, modelsDir+"/")
	if strings.HasSuffix(pattern, "/") {
		return strings.HasPrefix(rel, pattern)
	}
	for _, s := range []string{rel, strings.TrimSuffix(rel, ".sql"), m.Name, m.Path} {
		if ok, _ := path.Match(pattern, s); ok {
			return true
		}
	}
	return false
}

func (p *Project) tags() []string {
	var out []string
	for _, m := range p.Models {
		out = append(out, m.Config.Tags...)
	}
	return out
}
