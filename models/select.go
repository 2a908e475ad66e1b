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
	chosen := map[*Model]bool{}
	terms := splitTerms(selectors)
	if len(terms) == 0 {
		for _, m := range p.Models {
			chosen[m] = true
		}
	}
	for _, term := range terms {
		if err := p.matchTerm(term, chosen); err != nil {
			return nil, err
		}
	}
	drop := map[*Model]bool{}
	for _, term := range splitTerms(excludes) {
		if err := p.matchTerm(term, drop); err != nil {
			return nil, err
		}
	}
	var out []*Model
	for _, m := range p.Graph.Order {
		if chosen[m] && !drop[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

func splitTerms(selectors []string) []string {
	var out []string
	for _, s := range selectors {
		out = append(out, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	}
	return out
}

func (p *Project) matchTerm(term string, into map[*Model]bool) error {
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
			closure(m, func(m *Model) []*Model { return m.Upstream }, into)
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
