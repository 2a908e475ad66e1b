package models

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Version is one version of a model as a target sees it: what its
// partitions' data is computed from. Partitions built by another version
// are stale.
type Version struct {
	// Fingerprint identifies the version: a hash of the model's statement
	// with its formatting removed (comments, white space; see
	// normalizeSQL), of the configuration that shapes its table (the
	// adapters' blocks say what of theirs does: BlockFunc), and of
	// what the statement's names resolve to on the target (tables of refs
	// and sources, values of vars, the dialect). Reformatting a model
	// keeps its fingerprint; changing a literal, a name or a var does not.
	Fingerprint string
	// Text is the version for people: the same inputs, with the statement
	// as written. The ledger keeps it, so that plan --explain can show what
	// changed since a partition was built.
	Text string
}

// fingerprintVersion is refill's own part of every fingerprint: it changes
// when refill renders statements differently.
const fingerprintVersion = "refill/2"

// Version returns m's version under scope s (computed once per scope).
func (m *Model) Version(s *Scope) *Version {
	if v, ok := m.versions.Load(s); ok {
		return v.(*Version)
	}
	v := m.version(s)
	if s.cacheable() {
		m.versions.Store(s, v)
	}
	return v
}

func (m *Model) version(s *Scope) *Version {
	var head strings.Builder
	c := m.Config
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&head, "%s: %s\n", k, v)
		}
	}
	line("model", m.Name)
	line("table", s.Relation(m).Quote(s.Dialect))
	line("dialect", s.Dialect.Name())
	for _, t := range m.templates() {
		if t.UsesTarget {
			// A model that branches on target.name computes what the
			// target says: another target is another version.
			line("target", s.Target)
			break
		}
	}
	line("partition_by", c.PartitionBy)
	if c.Grain != 0 {
		line("grain", c.Grain.String())
		if c.Location != nil && c.Location != time.UTC {
			line("timezone", c.Location.String())
		}
		pt := "date"
		if c.TimestampWindow {
			pt = "timestamp"
		}
		line("partition_type", pt)
	}
	if c.Values != nil {
		line("values", fmt.Sprint(c.Values))
	}
	for _, col := range c.Columns {
		line("column "+col.Name, col.Type.String())
	}
	for _, name := range slices.Sorted(maps.Keys(c.Adapter)) {
		head.WriteString(c.Adapter[name].version)
	}
	var refs []string
	for name, up := range m.upstream {
		refs = append(refs, fmt.Sprintf("%s -> %s", name, s.refText(up)))
	}
	sort.Strings(refs)
	for _, r := range refs {
		line("ref", r)
	}
	if m.SQL != nil {
		for _, name := range m.SQL.Source {
			if r, err := ParseRelation(name); err == nil {
				if r.Schema == "" {
					r.Schema = s.Schema
				}
				line("source", name+" -> "+r.Quote(s.Dialect))
			}
		}
		for _, name := range m.SQL.Vars {
			lit, err := Literal(s.Dialect, s.Vars[name])
			if err != nil {
				lit = fmt.Sprint(s.Vars[name])
			}
			line("var", name+" = "+lit)
		}
	}
	body := ""
	if m.SQL != nil {
		body = m.SQL.Text()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s", fingerprintVersion, head.String(), normalizeSQL(body))
	var sum [sha256.Size]byte
	return &Version{
		Fingerprint: hex.EncodeToString(h.Sum(sum[:0])[:8]),
		Text:        head.String() + "\n" + strings.TrimSpace(body) + "\n",
	}
}
