package models

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Source is a table outside the project that models read through source(),
// declared under sources: in refill.yml so that refill can tell which of
// its days changed. A scheduled run fingerprints the rows of each partition
// a model reads from it (by TimeColumn, at the model's grain) and reruns
// the partitions whose fingerprint moved since they were built, anywhere
// in history: late rows, deleted rows, rows updated in place.
type Source struct {
	// Name is the source as source() names it ("raw.orders").
	Name string
	// TimeColumn is the source's column that places each row in a reading
	// model's partition: the column the model's window filters on.
	TimeColumn string
	// LoadedAt, when set, is a column holding when each row was loaded or
	// last updated. A partition's fingerprint is then its row count and
	// the maximum of this column, and only those two columns are read;
	// otherwise it is the row count and an order-independent hash of
	// every column, which reads the whole row.
	LoadedAt string
	// Track is how far back from now a scheduled run fingerprints the
	// source; zero means the whole history (track: all, the default).
	Track time.Duration
	Line  int // of the source's key in refill.yml
}

// Tracks reports whether a scheduled run fingerprints the source.
func (s *Source) Tracks() bool { return s != nil && s.TimeColumn != "" }

var sourceKeys = []string{"time_column", "loaded_at", "track", "description"}

// decodeSources reads refill.yml's sources: block.
func decodeSources(d *yamlDoc, n *yaml.Node) map[string]*Source {
	out := map[string]*Source{}
	d.entries(n, "sources", func(k, v *yaml.Node) {
		line, _ := d.pos(k)
		s := &Source{Name: k.Value, Line: line}
		if _, err := ParseRelation(k.Value); err != nil {
			d.errAt(k, "source %q: %v", k.Value, err)
		}
		d.fields(v, "source "+k.Value, sourceKeys, func(key string, v *yaml.Node) {
			switch key {
			case "time_column", "loaded_at":
				c, ok := d.str(v, key)
				if !ok {
					return
				}
				if !identRE.MatchString(c) {
					d.errAt(v, "%s must be a column name, not %q", key, c)
					return
				}
				if key == "time_column" {
					s.TimeColumn = c
				} else {
					s.LoadedAt = c
				}
			case "track":
				t, ok := d.str(v, key)
				if !ok || t == "all" {
					return
				}
				dur, err := ParseDuration(t)
				if err != nil || dur <= 0 {
					d.errAt(v, "track must be all or a duration such as 400d, not %q", t)
					return
				}
				s.Track = dur
			}
		})
		if s.TimeColumn == "" && (s.LoadedAt != "" || s.Track != 0) {
			d.errAt(k, "source %s: loaded_at and track need time_column: the column that places each row in a partition", k.Value)
		}
		out[k.Value] = s
	})
	return out
}

// TrackedSources returns the declared sources time-partitioned model m
// reads whose changes a scheduled run finds (Source.Tracks), sorted by
// name; none for other models.
func (p *Project) TrackedSources(m *Model) []*Source {
	if m.Kind() != TimePartitioned || !m.ReadsSources() {
		return nil
	}
	var out []*Source
	for _, name := range m.SQL.Source {
		if s := p.Sources[name]; s.Tracks() && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Source) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// SourceRelation returns the relation source(name) reads under s.
func (s *Scope) SourceRelation(name string) (Relation, error) {
	r, err := ParseRelation(name)
	if err != nil {
		return Relation{}, fmt.Errorf("source(%q): %w", name, err)
	}
	if r.Schema == "" {
		r.Schema = s.Schema
	}
	return r, nil
}

// RecordsContent reports whether a publication of m records a hash of each
// partition's rows (content_hash:, the model's or the project's), for
// refill verify.
func (p *Project) RecordsContent(m *Model) bool {
	if m.Config.ContentHash != nil {
		return *m.Config.ContentHash
	}
	return p.ContentHash
}
