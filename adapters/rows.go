package adapters

import (
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ScanRows reads all of rows into a Result, normalizing values (see Result).
// Drivers return many numeric types; normalize maps them to int64, uint64
// and float64 so the runner compares values one way.
func ScanRows(rows *sql.Rows) (*Result, error) {
	return ScanRowsFunc(rows, nil)
}

// ScanRowsFunc is ScanRows for drivers whose values need their column type
// to be read right: convert, when not nil, maps each value given its
// column instead of Normalize.
func ScanRowsFunc(rows *sql.Rows, convert func(col *sql.ColumnType, v any) any) (*Result, error) {
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: make([]string, len(types)), Types: make([]string, len(types))}
	for i, t := range types {
		res.Columns[i], res.Types[i] = t.Name(), t.DatabaseTypeName()
	}
	for rows.Next() {
		vals := make([]any, len(types))
		ptrs := make([]any, len(types))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if convert != nil {
				vals[i] = convert(types[i], v)
			} else {
				vals[i] = Normalize(v)
			}
		}
		res.Rows = append(res.Rows, vals)
	}
	return res, rows.Err()
}

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

// ScanRecords reads rows selected with PartitionColumns into records,
// scanning into typed values: the fast path for large ledgers, for drivers
// that convert their column types to Go strings, integers and times.
func ScanRecords(rows *sql.Rows) ([]Record, error) {
	defer rows.Close()
	var out []Record
	var (
		model, key, state, fp, runID string
		rowCount                     sql.NullInt64
		attempts                     int64
		wStart, wEnd, published      sql.NullTime
		started, finished            time.Time
		errText, watermark           sql.NullString
	)
	for rows.Next() {
		if err := rows.Scan(&model, &key, &state, &fp, &rowCount, &runID, &attempts, &wStart, &wEnd,
			&started, &finished, &published, &errText, &watermark); err != nil {
			return nil, err
		}
		out = append(out, Record{Model: model, Partition: key, State: State(state), Fingerprint: fp,
			Rows: rowCount.Int64, RunID: runID, Attempts: int(attempts),
			WindowStart: nullTime(wStart), WindowEnd: nullTime(wEnd), StartedAt: started.UTC(), FinishedAt: finished.UTC(),
			PublishedAt: nullTime(published), Error: errText.String, Watermark: watermark.String})
	}
	return out, rows.Err()
}

func nullTime(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}
