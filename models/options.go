package models

import (
	"errors"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// AdapterKeys is what one adapter adds to the keys of a project's files.
// The program passes those of its adapters in LoadOptions; models gives
// them no meaning, and keeps their values, with their positions, for the
// adapter that owns them.
type AdapterKeys struct {
	// Name is the adapter's name: a target's adapter: value, the key of
	// its type in a declared column's map of native types, and the key of
	// its block in a model's header.
	Name string
	// TargetKeys are the settings a target may give for the adapter,
	// beyond refill's own keys. Their values are strings, kept in
	// Target.Settings.
	TargetKeys []string
	// Block checks the adapter's block of a model's header as the model
	// loads. When it is nil the adapter has no block, and a model that
	// writes one is refused like any unknown key.
	Block BlockFunc
}

// BlockFunc checks an adapter's block of a model's header as the model
// loads. It reports every problem positioned in the block (the errors of
// Options.Strings and Options.Errorf). It returns the block's part of the
// model's version: what of the block shapes the model's table, as lines
// "key: value" of Version.Text, or "" for nothing. The model's fingerprint
// hashes those lines, so a change to them makes its partitions stale; a
// setting that only says where or how the model runs leaves them out.
type BlockFunc func(o *Options) (version string, err error)

// Options is an adapter's block of a model's header: the mapping under
// the adapter's name. models keeps the block as written, each value with
// its position, for the adapter that owns it to decode (Strings) and to
// refuse with an error that names the line (Errorf). A nil *Options is a
// block with no keys.
type Options struct {
	name      string // the block's key: the adapter's name
	file      string
	text      string // the model file, for quoting lines in errors
	line, col int    // of the block's key
	fields    []field
	// version is the block's part of the model's version, from the
	// adapter's BlockFunc.
	version string
}

// field is one key: value of a block, in the order written (duplicates
// included, for Strings to refuse).
type field struct {
	key             string
	keyLine, keyCol int
	line, col       int    // of the value
	value           string // the value's text, when it is a scalar
	scalar          bool   // a scalar other than null
}

// Name returns the block's key: the name of the adapter that owns it.
func (o *Options) Name() string {
	if o == nil {
		return ""
	}
	return o.name
}

// Strings decodes a block whose values are all strings. It returns the
// value of every key of known that the block sets, and an ErrorList
// naming the line of every key not in known, every key written twice, and
// every value that is not a string (a number is its text).
func (o *Options) Strings(known ...string) (map[string]string, error) {
	out := map[string]string{}
	if o == nil {
		return out, nil
	}
	var errs ErrorList
	seen := map[string]bool{}
	for _, f := range o.fields {
		switch {
		case !slices.Contains(known, f.key):
			errs.add(o.errorAt(f.keyLine, f.keyCol, "unknown key %q in %s options%s", f.key, o.name, suggest(f.key, known)))
		case seen[f.key]:
			errs.add(o.errorAt(f.keyLine, f.keyCol, "duplicate key %q in %s options", f.key, o.name))
		case !f.scalar:
			seen[f.key] = true
			errs.add(o.errorAt(f.line, f.col, "%s must be a string", f.key))
		default:
			seen[f.key] = true
			out[f.key] = f.value
		}
	}
	return out, errs.Err()
}

// Errorf returns an *Error positioned at key's value in the model file, or
// at the block itself when key is "" or not set. A nil Options gives an
// error with no position.
func (o *Options) Errorf(key, format string, args ...any) error {
	if o == nil {
		return &Error{Msg: fmt.Sprintf(format, args...)}
	}
	line, col := o.line, o.col
	for _, f := range o.fields {
		if key != "" && f.key == key {
			line, col = f.line, f.col
			break
		}
	}
	return o.errorAt(line, col, format, args...)
}

func (o *Options) errorAt(line, col int, format string, args ...any) *Error {
	return &Error{File: o.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Source: sourceLine(o.text, line)}
}

// positioned returns err as a list of positioned errors: those it holds,
// or err itself at the block.
func (o *Options) positioned(err error) error {
	var list ErrorList
	var e *Error
	if err == nil || errors.As(err, &list) || errors.As(err, &e) {
		return err
	}
	return o.errorAt(o.line, o.col, "%s options: %v", o.name, err)
}

// decodeOptions reads the block under key k of a model's header. It
// returns nil, having recorded an error, when the block is not a mapping;
// an empty block (the key alone) has no keys.
func decodeOptions(d *yamlDoc, k, v *yaml.Node) *Options {
	line, col := d.pos(k)
	o := &Options{name: k.Value, file: d.file, text: d.text, line: line, col: col}
	v = resolve(v)
	if v.Kind != yaml.MappingNode {
		if v.Tag == "!!null" {
			return o
		}
		d.errAt(v, "%s options must be a mapping of keys to values", k.Value)
		return nil
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		key, val := v.Content[i], resolve(v.Content[i+1])
		f := field{key: key.Value, value: val.Value, scalar: val.Kind == yaml.ScalarNode && val.Tag != "!!null"}
		f.keyLine, f.keyCol = d.pos(key)
		f.line, f.col = d.pos(val)
		o.fields = append(o.fields, f)
	}
	return o
}

// extensions is what the program's adapters add to refill's own keys
// (LoadOptions.Adapters), ready for decoding.
type extensions struct {
	names      []string // the adapters' names, in the program's order
	targetKeys []string
	blocks     map[string]BlockFunc
}

func newExtensions(adapters []AdapterKeys) *extensions {
	x := &extensions{blocks: map[string]BlockFunc{}}
	for _, a := range adapters {
		x.names = append(x.names, a.Name)
		for _, k := range a.TargetKeys {
			if !slices.Contains(x.targetKeys, k) {
				x.targetKeys = append(x.targetKeys, k)
			}
		}
		if a.Block != nil {
			x.blocks[a.Name] = a.Block
		}
	}
	return x
}

// blockNames returns the keys of the adapters' blocks, in the program's
// order.
func (x *extensions) blockNames() []string {
	var out []string
	for _, n := range x.names {
		if x.blocks[n] != nil {
			out = append(out, n)
		}
	}
	return out
}
