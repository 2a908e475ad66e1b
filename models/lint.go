package models

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Warnings returns what refill validate warns about in the project's
// models: SQL that runs, but likely computes something other than meant,
// each at its file:line:col. They are not errors: nothing stops.
func (p *Project) Warnings() ErrorList {
	var out ErrorList
	for _, m := range p.Models {
		out = append(out, m.warnings()...)
	}
	return out
}

// comparedRE matches the end of SQL text that compares a column with what
// follows: "started_at >= ", "o.ts < ".
var comparedRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)"?\s*(>=|<=|<>|!=|<|>|=)\s*$`)

// readsBackRE matches date_add(start, -N, "unit") (or end).
var readsBackRE = regexp.MustCompile(`date_add\(\s*(start|end)\s*,\s*-\s*(\d+)\s*,\s*["'](\w+)["']\s*\)`)

func (m *Model) warnings() ErrorList {
	if m.SQL == nil || m.Kind() != TimePartitioned {
		return nil
	}
	var out ErrorList
	t := m.SQL
	for i, p := range t.parts {
		if p.expr == "" {
			continue
		}
		// A local-date model's start and end are DATEs of its zone: a
		// timestamp column compared with one is compared with midnight
		// UTC, not the local midnight.
		if m.localDates() && (p.ident == "start" || p.ident == "end") && i > 0 {
			if match := comparedRE.FindStringSubmatch(t.parts[i-1].text); match != nil && !strings.EqualFold(match[1], m.Config.PartitionBy) {
				out = append(out, t.warnAt(p, "%s compares %s with {{ %s }}, a DATE of %s (partition_type: date): if %s is a timestamp, this compares it with midnight UTC, not local midnight; write {{ cast_timestamp(%s) }}",
					m.Name, match[1], p.ident, m.Config.Location, match[1], p.ident))
			}
		}
		// Reading before its own window without depends_on_past: a change
		// of the partitions read there does not make this one stale.
		for _, match := range readsBackRE.FindAllStringSubmatch(p.expr, -1) {
			n, _ := strconv.Atoi(match[2])
			g, err := ParseUnit(match[3])
			if err != nil || n == 0 {
				continue
			}
			back := time.Duration(n) * nominal(g)
			if !m.coversBack(back) {
				out = append(out, t.warnAt(p, "%s reads %d %s before its window (%s) without a depends_on_past that covers it: when those %ss change, refill does not rerun this partition; declare depends_on_past: %d (or self, to read its own earlier partition)",
					m.Name, n, plural(n, match[3]), match[0], match[3], (back+nominal(m.Config.Grain)-1)/nominal(m.Config.Grain)))
			}
		}
	}
	return out
}

// coversBack reports whether m's depends_on_past declares reading at least
// back before its window: from every ref, or itself (self, one partition).
func (m *Model) coversBack(back time.Duration) bool {
	partition := nominal(m.Config.Grain)
	if m.Config.Self && back <= partition {
		return true
	}
	most := 0
	for _, n := range m.Config.DependsOnPast {
		most = max(most, n)
	}
	return time.Duration(most)*partition >= back
}

// nominal is a grain's usual length, for comparing spans of grains.
func nominal(g Grain) time.Duration {
	switch g {
	case Hour:
		return time.Hour
	case Day:
		return 24 * time.Hour
	case Week, SundayWeek:
		return 7 * 24 * time.Hour
	case Month:
		return 30 * 24 * time.Hour
	}
	return 365 * 24 * time.Hour
}

func plural(n int, unit string) string {
	if n == 1 {
		return unit
	}
	return unit + "s"
}

// warnAt positions a warning at expression p.
func (t *Template) warnAt(p part, format string, args ...any) *Error {
	col := p.col
	if p.block {
		col = 0
	}
	return &Error{File: t.file, Line: p.line, Col: col, Msg: fmt.Sprintf(format, args...), Source: sourceLine(t.text, p.line)}
}
