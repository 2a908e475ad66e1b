package adapters

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Normalize maps a driver value to one of the types Result documents.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x
	case time.Time:
		return x.UTC()
	case []byte:
		return string(x)
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint:
		return normalizeUint(uint64(x))
	case uint64:
		return normalizeUint(x)
	case float32:
		return float64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case fmt.Stringer:
		// Decimal types of several drivers print exactly.
		s := x.String()
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return s
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
		return Normalize(rv.Elem().Interface())
	case reflect.Slice, reflect.Array, reflect.Map:
		return fmt.Sprint(v)
	}
	return v
}

func normalizeUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return u
}

// IsDateType reports whether a column type named by a driver holds
// calendar dates without a time of day: DATE, Date, Date32, Nullable(Date).
func IsDateType(typ string) bool {
	t := strings.ToUpper(typ)
	return strings.Contains(t, "DATE") && !strings.Contains(t, "TIME")
}

// Int reads an integer count from a normalized value.
func Int(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}
