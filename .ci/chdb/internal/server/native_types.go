package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file walks the data of one column in the Native format: it parses
// the column's type and reads past its values, which is how the server
// finds where the next column of a block starts.

// errUnsupportedType is returned for a column type whose data the server
// cannot walk (Variant, Dynamic, JSON, AggregateFunction, ...).
var errUnsupportedType = errors.New("type not supported by the chDB front end")

// skipColumn reads past one column of rows values of type typ: the state
// prefixes of its LowCardinality parts, then its data.
func skipColumn(r byteSource, typ string, rows int) error {
	t, err := parseType(typ)
	if err != nil {
		return err
	}
	if err := checkType(t); err != nil {
		return err
	}
	if err := skipPrefix(r, t); err != nil {
		return err
	}
	return skipData(r, t, rows)
}

// dataType is a parsed type name: Array(Nullable(String)) is {Array,
// [{Nullable, [{String}]}]}. Only the arguments of containers (see
// containers) are parsed; all are kept as written in raw.
type dataType struct {
	name string
	args []dataType // the type arguments of a container
	raw  []string   // the arguments as written
}

// parseType parses a type name as chDB writes it.
func parseType(s string) (dataType, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return dataType{name: s}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return dataType{}, fmt.Errorf("cannot parse type %q", s)
	}
	t := dataType{name: s[:open], raw: splitArgs(s[open+1 : len(s)-1])}
	if !containers[t.name] {
		return t, nil
	}
	for i, a := range t.raw {
		switch {
		case t.name == "Tuple" || t.name == "Nested":
			a = stripElementName(a)
		case t.name == "SimpleAggregateFunction" && i == 0:
			continue // the function
		}
		at, err := parseType(a)
		if err != nil {
			return dataType{}, err
		}
		t.args = append(t.args, at)
	}
	return t, nil
}

// containers are the types whose arguments are types.
var containers = map[string]bool{"Array": true, "Nullable": true, "LowCardinality": true, "Tuple": true, "Map": true,
	"Nested": true, "SimpleAggregateFunction": true}

// splitArgs splits a type's arguments at top-level commas, minding
// parentheses and quotes.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// stripElementName removes the name of a named tuple element: "a
// Nullable(String)" is "Nullable(String)"; "`a b` UInt8" is "UInt8".
func stripElementName(s string) string {
	if strings.HasPrefix(s, "`") {
		l := &lexer{s: s}
		if t, ok, err := l.next(); err == nil && ok && t.kind == tokenQuoted {
			return strings.TrimSpace(l.rest())
		}
		return s
	}
	sp := strings.IndexByte(s, ' ')
	if sp < 0 || strings.ContainsAny(s[:sp], "(),'") {
		return s
	}
	return strings.TrimSpace(s[sp+1:])
}

// fixedSizes are the widths of one value of the fixed-width types.
var fixedSizes = map[string]int{
	"UInt8": 1, "Int8": 1, "Bool": 1, "Enum8": 1, "Nothing": 1,
	"UInt16": 2, "Int16": 2, "Enum16": 2, "Date": 2, "BFloat16": 2,
	"UInt32": 4, "Int32": 4, "Float32": 4, "Date32": 4, "DateTime": 4, "IPv4": 4, "Decimal32": 4, "Time": 4,
	"UInt64": 8, "Int64": 8, "Float64": 8, "DateTime64": 8, "Decimal64": 8, "Time64": 8,
	"UInt128": 16, "Int128": 16, "Decimal128": 16, "UUID": 16, "IPv6": 16,
	"UInt256": 32, "Int256": 32, "Decimal256": 32,
}

// aliases are types written by name that are other types.
var aliases = map[string]string{
	"Point":           "Tuple(Float64, Float64)",
	"Ring":            "Array(Point)",
	"LineString":      "Array(Point)",
	"MultiLineString": "Array(Ring)",
	"Polygon":         "Array(Ring)",
	"MultiPolygon":    "Array(Polygon)",
}

// valueSize is the width of one value of t, or 0 for types of variable
// width.
func valueSize(t dataType) int {
	if n, ok := fixedSizes[t.name]; ok {
		return n
	}
	if strings.HasPrefix(t.name, "Interval") && len(t.args) == 0 {
		return 8
	}
	if t.name == "Decimal" && len(t.raw) > 0 {
		p, _ := strconv.Atoi(t.raw[0])
		switch {
		case p <= 9:
			return 4
		case p <= 18:
			return 8
		case p <= 38:
			return 16
		}
		return 32
	}
	if t.name == "FixedString" && len(t.raw) == 1 {
		n, _ := strconv.Atoi(t.raw[0])
		return n
	}
	return 0
}

// checkType returns errUnsupportedType if t or a type in it is not one the
// walker knows, whether or not the column holds values of it.
func checkType(t dataType) error {
	if a, ok := aliases[t.name]; ok {
		at, _ := parseType(a)
		return checkType(at)
	}
	want := -1 // the number of type arguments
	switch t.name {
	case "String":
		want = 0
	case "Nullable", "Array", "LowCardinality", "SimpleAggregateFunction":
		want = 1
	case "Map":
		want = 2
	case "Tuple", "Nested":
		want = len(t.args)
	default:
		if valueSize(t) > 0 {
			return nil
		}
	}
	if want < 0 || len(t.args) != want || want == 0 && len(t.raw) > 0 {
		return fmt.Errorf("%w: %s", errUnsupportedType, t.name)
	}
	for _, a := range t.args {
		if err := checkType(a); err != nil {
			return err
		}
	}
	return nil
}

// skipPrefix reads past the state prefixes ClickHouse writes before a
// column's data: one key-serialization version per LowCardinality part.
func skipPrefix(r byteSource, t dataType) error {
	switch t.name {
	case "LowCardinality":
		v, err := r.UInt64()
		if err != nil {
			return err
		}
		if v != 1 {
			return fmt.Errorf("LowCardinality key serialization version %d, want 1", v)
		}
	case "Array", "Nullable", "Tuple", "Map", "Nested":
		for _, a := range t.args {
			if err := skipPrefix(r, a); err != nil {
				return err
			}
		}
	case "SimpleAggregateFunction":
		if len(t.args) == 1 {
			return skipPrefix(r, t.args[0])
		}
	default:
		if a, ok := aliases[t.name]; ok {
			at, _ := parseType(a)
			return skipPrefix(r, at)
		}
	}
	return nil
}

// LowCardinality serialization flags (SerializationLowCardinality.cpp).
const (
	lcIndexTypeMask        = 0xff
	lcNeedGlobalDictionary = 1 << 8
	lcHasAdditionalKeys    = 1 << 9
)

// skipData reads past rows values of t in the bulk binary serialization.
func skipData(r byteSource, t dataType, rows int) error {
	if rows == 0 {
		return nil
	}
	if n := valueSize(t); n > 0 {
		return skipBytes(r, uint64(n)*uint64(rows))
	}
	switch t.name {
	case "String":
		for i := 0; i < rows; i++ {
			n, err := r.UVarInt()
			if err != nil {
				return err
			}
			if err := skipBytes(r, n); err != nil {
				return err
			}
		}
		return nil
	case "Nullable":
		if len(t.args) != 1 {
			break
		}
		if err := skipBytes(r, uint64(rows)); err != nil {
			return err
		}
		return skipData(r, t.args[0], rows)
	case "Array", "Map", "Nested":
		// Offsets (the end of each row's elements), then the elements.
		var elem dataType
		switch {
		case t.name == "Array" && len(t.args) == 1:
			elem = t.args[0]
		case t.name == "Map" && len(t.args) == 2, t.name == "Nested":
			elem = dataType{name: "Tuple", args: t.args}
		default:
			return fmt.Errorf("cannot parse type %s(%s)", t.name, strings.Join(t.raw, ", "))
		}
		var last uint64
		for i := 0; i < rows; i++ {
			v, err := r.UInt64()
			if err != nil {
				return err
			}
			last = v
		}
		if last > 1<<40 {
			return fmt.Errorf("implausible array size %d", last)
		}
		return skipData(r, elem, int(last))
	case "Tuple":
		for _, a := range t.args {
			if err := skipData(r, a, rows); err != nil {
				return err
			}
		}
		return nil
	case "LowCardinality":
		if len(t.args) != 1 {
			break
		}
		return skipLowCardinality(r, t.args[0], rows)
	case "SimpleAggregateFunction":
		if len(t.args) == 1 {
			return skipData(r, t.args[0], rows)
		}
	default:
		if a, ok := aliases[t.name]; ok {
			at, _ := parseType(a)
			return skipData(r, at, rows)
		}
	}
	return fmt.Errorf("%w: %s", errUnsupportedType, t.name)
}

// skipLowCardinality reads past the data of a LowCardinality column of
// rows values: flags, the keys added by this block (of the dictionary's
// type without Nullable), and one index per row.
func skipLowCardinality(r byteSource, dict dataType, rows int) error {
	flags, err := r.UInt64()
	if err != nil {
		return err
	}
	if flags&lcNeedGlobalDictionary != 0 {
		return errors.New("LowCardinality with a global dictionary is not supported")
	}
	if flags&lcHasAdditionalKeys != 0 {
		keys, err := r.UInt64()
		if err != nil {
			return err
		}
		if dict.name == "Nullable" && len(dict.args) == 1 {
			dict = dict.args[0]
		}
		if keys > 1<<40 {
			return fmt.Errorf("implausible dictionary of %d keys", keys)
		}
		if err := skipData(r, dict, int(keys)); err != nil {
			return err
		}
	}
	n, err := r.UInt64()
	if err != nil {
		return err
	}
	if n != uint64(rows) {
		return fmt.Errorf("LowCardinality column has %d indexes for %d rows", n, rows)
	}
	width := uint64(1) << (flags & lcIndexTypeMask)
	if width > 8 {
		return fmt.Errorf("LowCardinality index type %d", flags&lcIndexTypeMask)
	}
	return skipBytes(r, n*width)
}

// skipBytes reads past n bytes.
func skipBytes(r byteSource, n uint64) error {
	for n > 0 {
		chunk := min(n, 1<<20)
		if _, err := r.ReadRaw(int(chunk)); err != nil {
			return err
		}
		n -= chunk
	}
	return nil
}
