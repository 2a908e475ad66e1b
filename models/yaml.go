package models

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// yamlDoc decodes one YAML document node by node, so that every error
// carries the position of the offending key or value in the original file.
type yamlDoc struct {
	file string
	text string // the whole file, for quoting offending lines
	// The YAML may be embedded in a larger file (a model's header comment):
	// line 1 of the YAML is file line line0+1, and starts at column col0+1.
	line0, col0 int
	errs        *ErrorList
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse parses src into a node tree. It returns nil, having recorded an
// error, when src is not valid YAML.
func (d *yamlDoc) parse(src string) *yaml.Node {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		msg, line := err.Error(), 0
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		msg = strings.TrimPrefix(msg, "yaml: ")
		d.errAt(&yaml.Node{Line: line}, "invalid YAML: %s", msg)
		return nil
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode}
	}
	return root.Content[0]
}

// pos maps a node's YAML position to the file position.
func (d *yamlDoc) pos(n *yaml.Node) (line, col int) {
	if n == nil || n.Line == 0 {
		return 0, 0
	}
	line, col = n.Line+d.line0, n.Column
	if n.Line == 1 {
		col += d.col0
	}
	return line, col
}

func (d *yamlDoc) errAt(n *yaml.Node, format string, args ...any) {
	line, col := d.pos(n)
	d.errs.add(&Error{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Source: sourceLine(d.text, line)})
}

// fields walks a mapping node, calling fn for every key in known and
// recording an error for every other key, for duplicates, and when n is
// not a mapping at all.
func (d *yamlDoc) fields(n *yaml.Node, what string, known []string, fn func(key string, val *yaml.Node)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return
		}
		d.errAt(n, "%s must be a mapping of keys to values", what)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		key := k.Value
		switch {
		case !slices.Contains(known, key):
			d.errAt(k, "unknown key %q in %s%s", key, what, suggest(key, known))
		case seen[key]:
			d.errAt(k, "duplicate key %q in %s", key, what)
		default:
			seen[key] = true
			fn(key, v)
		}
	}
}

// entries walks a mapping whose keys are names chosen by the user.
func (d *yamlDoc) entries(n *yaml.Node, what string, fn func(key *yaml.Node, val *yaml.Node)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if n.Tag != "!!null" {
			d.errAt(n, "%s must be a mapping", what)
		}
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			d.errAt(k, "duplicate key %q in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		fn(k, resolve(n.Content[i+1]))
	}
}

// keyNode returns the node of key in mapping n, or nil.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func (d *yamlDoc) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errAt(n, "%s must be a string", key)
		return "", false
	}
	return n.Value, true
}

func (d *yamlDoc) int(n *yaml.Node, key string, lo int) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errAt(n, "%s must be a whole number", key)
		return 0, false
	}
	if v < lo {
		d.errAt(n, "%s must be at least %d", key, lo)
		return 0, false
	}
	return v, true
}

func (d *yamlDoc) bool(n *yaml.Node, key string) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		d.errAt(n, "%s must be true or false", key)
		return false, false
	}
	return v, true
}

func (d *yamlDoc) strList(n *yaml.Node, key string) ([]string, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}, true
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, "%s must be a list of strings", key)
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		c = resolve(c)
		if c.Kind != yaml.ScalarNode {
			d.errAt(c, "%s must be a list of strings", key)
			return nil, false
		}
		out = append(out, c.Value)
	}
	return out, true
}

// duration parses Go durations plus a d suffix for days ("2h", "90m", "1d").
func (d *yamlDoc) duration(n *yaml.Node, key string) (time.Duration, bool) {
	s, ok := d.str(n, key)
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.errAt(n, "%s: %v", key, err)
		return 0, false
	}
	return v, true
}

// FormatDuration renders d as ParseDuration reads it: whole days as 1d,
// otherwise as Go does, without zero units (6h, 1h30m).
func FormatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseDuration parses a Go duration ("2h30m") or a number of days ("1d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid duration %q: %s", s, durationForms)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid duration %q: %s", s, durationForms)
	}
	return v, nil
}

// durationForms says in words what ParseDuration takes.
const durationForms = "want a whole number of days (1d), or hours, minutes and seconds (2h, 90m, 1h30m)"

// value decodes any YAML value into plain Go values: string, int, float64,
// bool, nil, []any and map[string]any.
func (d *yamlDoc) value(n *yaml.Node) any {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = d.value(c)
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = d.value(n.Content[i+1])
		}
		return out
	}
	return nil
}

func scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	}
	return n.Value
}

// ParseScalar interprets command-line text the way YAML reads a scalar, so
// that --var n=10 is the number 10 and --var name=eu the string "eu".
func ParseScalar(s string) any {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil || len(n.Content) != 1 || n.Content[0].Kind != yaml.ScalarNode {
		return s
	}
	if v := scalar(n.Content[0]); v != nil {
		return v
	}
	return s
}
