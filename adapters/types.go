package adapters

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/refill/refill/models"
)

// Comparing column types. Each adapter reads its warehouse's type names
// into a TypeInfo; FitOf then applies one set of rules to all of them.

// Family is a kind of column type.
type Family int

// Type families.
const (
	FamilyOther Family = iota // compared by name only
	FamilyBool
	FamilyInt
	FamilyDecimal
	FamilyFloat
	FamilyString
	FamilyDate
	FamilyTimestamp
)

// TypeInfo is what refill needs to know of a column type to compare it.
type TypeInfo struct {
	Name     string // the type's name, normalized
	Family   Family
	Bits     int  // integers and floats
	Unsigned bool // integers
	// Precision is a decimal's digits, or a timestamp's fractional digits;
	// Scale is a decimal's fractional digits.
	Precision, Scale int
	Zoned            bool // a timestamp with a time zone
	Nullable         bool // ClickHouse's Nullable(...)
	Length           int  // a string's maximum length; 0 for none
}

// Numeric reports whether values of t are numbers: summed by diffs.
func (t TypeInfo) Numeric() bool {
	return t.Family == FamilyInt || t.Family == FamilyDecimal || t.Family == FamilyFloat
}

// FitOf says how values of type from fit a column of type to. checked
// says whether the warehouse refuses (rather than wraps) integer and
// decimal values too large for their column.
func FitOf(from, to TypeInfo, checked bool) Fit {
	if from.Name == to.Name {
		return FitSame
	}
	if from.Nullable && !to.Nullable {
		return FitLossy // NULLs would become defaults
	}
	narrower := func(ok bool) Fit {
		if ok {
			return FitLossless
		}
		if checked {
			return FitLossless // the warehouse refuses what does not fit
		}
		return FitLossy
	}
	switch {
	case from.Family == FamilyOther || to.Family == FamilyOther:
		if strings.EqualFold(stripNullable(from.Name), stripNullable(to.Name)) {
			return FitLossless
		}
		return FitLossy
	case from.Family != to.Family:
		switch {
		case from.Family == FamilyInt && to.Family == FamilyDecimal:
			return narrower(to.Precision-to.Scale >= intDigits(from))
		case from.Family == FamilyInt && to.Family == FamilyFloat:
			if intBits(from) <= map[int]int{32: 24, 64: 53}[to.Bits] {
				return FitLossless
			}
			return FitLossy
		case from.Family == FamilyDate && to.Family == FamilyTimestamp && !to.Zoned:
			return FitLossless
		}
		return FitLossy
	}
	switch from.Family {
	case FamilyBool, FamilyDate:
		return FitLossless
	case FamilyInt:
		if from.Unsigned == to.Unsigned && to.Bits >= from.Bits || from.Unsigned && !to.Unsigned && to.Bits > from.Bits {
			return FitLossless
		}
		return narrower(false) // narrower, or signed into unsigned
	case FamilyFloat:
		if to.Bits >= from.Bits {
			return FitLossless
		}
		return FitLossy
	case FamilyDecimal:
		if to.Scale < from.Scale {
			return FitLossy // rounds
		}
		return narrower(to.Precision-to.Scale >= from.Precision-from.Scale)
	case FamilyString:
		if to.Length == 0 || from.Length != 0 && to.Length >= from.Length {
			return FitLossless
		}
		return narrower(false)
	case FamilyTimestamp:
		if from.Zoned != to.Zoned || to.Precision < from.Precision {
			return FitLossy
		}
		return FitLossless
	}
	return FitLossy
}

// intDigits is how many decimal digits an integer type's values may have.
func intDigits(t TypeInfo) int {
	return map[int]int{8: 3, 16: 5, 32: 10, 64: 19, 128: 39}[t.Bits]
}

// intBits is how many bits of magnitude an integer type has.
func intBits(t TypeInfo) int {
	if t.Unsigned {
		return t.Bits
	}
	return t.Bits - 1
}

func stripNullable(t string) string {
	if strings.HasPrefix(t, "Nullable(") && strings.HasSuffix(t, ")") {
		return t[len("Nullable(") : len(t)-1]
	}
	return t
}

// DecimalArgs reads the precision and scale of DECIMAL(p,s), NUMERIC(p, s),
// Decimal(p, s) or NUMBER(p,s).
func DecimalArgs(t string) (precision, scale int, ok bool) {
	u := strings.ToUpper(strings.ReplaceAll(t, " ", ""))
	for _, prefix := range []string{"DECIMAL(", "NUMERIC(", "NUMBER("} {
		if rest, found := strings.CutPrefix(u, prefix); found {
			rest, found = strings.CutSuffix(rest, ")")
			ps, ss, comma := strings.Cut(rest, ",")
			p, err1 := strconv.Atoi(ps)
			s := 0
			var err2 error
			if comma {
				s, err2 = strconv.Atoi(ss)
			}
			return p, s, found && err1 == nil && err2 == nil
		}
	}
	return 0, 0, false
}

// DeclaredColumns returns m's declared columns in dialect d, or nil.
func DeclaredColumns(m *models.Model, d models.Dialect) ([]TableColumn, error) {
	if len(m.Config.Columns) == 0 {
		return nil, nil
	}
	out := make([]TableColumn, len(m.Config.Columns))
	for i, c := range m.Config.Columns {
		t, err := c.Type.In(d)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %s: %v", m.Path, c.Line, c.Name, err)
		}
		out[i] = TableColumn{Name: c.Name, Type: t}
	}
	return out, nil
}
