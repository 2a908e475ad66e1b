package snowflake

import (
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
)

// scanRows reads rows into a Result. gosnowflake hands back NUMBER columns
// as decimal strings (and FLOAT and BOOLEAN columns as strings in its JSON
// result format), so values are converted by the column's Snowflake type
// before adapters.Normalize: see columnValue.
func scanRows(rows *sql.Rows) (*adapters.Result, error) {
	return sqlkit.ScanRowsFunc(rows, func(col *sql.ColumnType, v any) any {
		_, scale, _ := col.DecimalSize()
		return columnValue(col.DatabaseTypeName(), scale, v)
	})
}

// columnValue normalizes one value gosnowflake returned for a column of
// Snowflake type kind (as sql.ColumnType.DatabaseTypeName reports it:
// FIXED, REAL, TEXT, BOOLEAN, DATE, TIMESTAMP_NTZ, ...) and scale: NUMBER
// with scale 0 to int64 (uint64 or float64 beyond int64's range), other
// numbers to float64, booleans to bool, dates and timestamps to time.Time
// in UTC, anything else as adapters.Normalize does.
func columnValue(kind string, scale int64, v any) any {
	if v == nil {
		return nil
	}
	s, isString := v.(string)
	switch strings.ToUpper(kind) {
	case "FIXED":
		if !isString {
			break
		}
		if scale == 0 {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
			if u, err := strconv.ParseUint(s, 10, 64); err == nil && u > math.MaxInt64 {
				return u
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case "REAL", "DECFLOAT":
		if isString {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f
			}
		}
	case "BOOLEAN":
		if isString {
			if b, err := strconv.ParseBool(s); err == nil {
				return b
			}
		}
	case "DATE", "TIME", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "TIMESTAMP_TZ":
		if t, ok := v.(time.Time); ok {
			return t.UTC()
		}
	}
	return adapters.Normalize(v)
}
