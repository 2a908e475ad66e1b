package models

import (
	"fmt"
	"strconv"
	"strings"
)

// ColumnType is a portable column type that every adapter maps to its own:
// boolean, integer, bigint, double, decimal(p,s), varchar, date or
// timestamp.
type ColumnType string

// The portable column types (decimal types are made by Decimal).
const (
	TypeBool      ColumnType = "boolean"
	TypeInt32     ColumnType = "integer"
	TypeInt       ColumnType = "bigint"
	TypeFloat     ColumnType = "double"
	TypeDate      ColumnType = "date"
	TypeTimestamp ColumnType = "timestamp"
	TypeString    ColumnType = "varchar"
)

// portableTypes are the names ParseColumnType accepts, for suggestions.
var portableTypes = []string{"boolean", "integer", "bigint", "double", "decimal(18,2)", "varchar", "date", "timestamp"}

// Decimal returns the type decimal(precision,scale).
func Decimal(precision, scale int) ColumnType {
	return ColumnType(fmt.Sprintf("decimal(%d,%d)", precision, scale))
}

// Decimal reports the precision and scale of a decimal type.
func (t ColumnType) Decimal() (precision, scale int, ok bool) {
	s, found := strings.CutPrefix(string(t), "decimal(")
	if !found {
		return 0, 0, false
	}
	s, found = strings.CutSuffix(s, ")")
	ps, ss, comma := strings.Cut(s, ",")
	p, err1 := strconv.Atoi(ps)
	sc, err2 := strconv.Atoi(ss)
	if !found || !comma || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return p, sc, true
}

// ParseColumnType reads a portable type name, in any case and spacing:
// "DECIMAL(18, 2)" is decimal(18,2). int, int64, float64, string, text,
// bool and datetime are accepted as the names they stand for.
func ParseColumnType(s string) (ColumnType, error) {
	t := strings.ToLower(strings.Join(strings.Fields(s), ""))
	switch t {
	case "boolean", "bool":
		return TypeBool, nil
	case "integer", "int", "int32":
		return TypeInt32, nil
	case "bigint", "int64", "long":
		return TypeInt, nil
	case "double", "float64", "float":
		return TypeFloat, nil
	case "varchar", "string", "text":
		return TypeString, nil
	case "date":
		return TypeDate, nil
	case "timestamp", "datetime":
		return TypeTimestamp, nil
	}
	if ct := ColumnType(t); strings.HasPrefix(t, "decimal(") || strings.HasPrefix(t, "numeric(") {
		ct = ColumnType(strings.Replace(t, "numeric(", "decimal(", 1))
		if p, sc, ok := ct.Decimal(); ok && p >= 1 && p <= 38 && sc >= 0 && sc <= p {
			return Decimal(p, sc), nil
		}
		return "", fmt.Errorf("%q: a decimal type needs a precision from 1 to 38 and a scale from 0 to the precision, e.g. decimal(18,2)", s)
	}
	return "", fmt.Errorf("unknown column type %q (want %s, or a map of dialect types such as {portable: varchar, <dialect>: \"<its own type>\"})%s",
		s, strings.Join(portableTypes, ", "), suggest(t, portableTypes))
}

// DeclaredType is a declared column's type: portable, or native to each
// dialect that runs the model (an escape hatch for types the portable
// vocabulary lacks).
type DeclaredType struct {
	Portable ColumnType // "" when only native types are given
	// Native are the dialects' own types, in the order of the program's
	// adapters (LoadOptions.Adapters), whatever the model file's order.
	Native []NativeType
}

// NativeType is a column's type in one dialect's own words.
type NativeType struct {
	Dialect string // the dialect's Name
	Type    string
}

// In returns the type in dialect d, or an error if the declaration has
// none for it.
func (t DeclaredType) In(d Dialect) (string, error) {
	for _, n := range t.Native {
		if n.Dialect == d.Name() {
			return n.Type, nil
		}
	}
	if t.Portable == "" {
		return "", fmt.Errorf("no %s type is declared (only %s)", d.Name(), t.String())
	}
	return d.ColumnType(t.Portable), nil
}

func (t DeclaredType) String() string {
	if len(t.Native) == 0 {
		return string(t.Portable)
	}
	var parts []string
	if t.Portable != "" {
		parts = append(parts, "portable: "+string(t.Portable))
	}
	for _, n := range t.Native {
		parts = append(parts, n.Dialect+": "+n.Type)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// ColumnDecl is a column of a model's table, declared in its config.
type ColumnDecl struct {
	Name string
	Type DeclaredType
	Line int // in the model file
}
