package sqlkit

import (
	"database/sql"
	"time"

	"github.com/refill/refill/adapters"
)

// ScanRows reads all of rows into a adapters.Result, normalizing values (see adapters.Result).
// Drivers return many numeric types; normalize maps them to int64, uint64
// and float64 so the runner compares values one way.
func ScanRows(rows *sql.Rows) (*adapters.Result, error) {
	return ScanRowsFunc(rows, nil)
}

// ScanRowsFunc is ScanRows for drivers whose values need their column type
// to be read right: convert, when not nil, maps each value given its
// column instead of adapters.Normalize.
func ScanRowsFunc(rows *sql.Rows, convert func(col *sql.ColumnType, v any) any) (*adapters.Result, error) {
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &adapters.Result{Columns: make([]string, len(types)), Types: make([]string, len(types))}
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
				vals[i] = adapters.Normalize(v)
			}
		}
		res.Rows = append(res.Rows, vals)
	}
	return res, rows.Err()
}

// ScanRecords reads rows selected with PartitionColumns into records,
// scanning into typed values: the fast path for large ledgers, for drivers
// that convert their column types to Go strings, integers and times.
func ScanRecords(rows *sql.Rows) ([]adapters.Record, error) {
	defer rows.Close()
	var out []adapters.Record
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
		out = append(out, adapters.Record{Model: model, Partition: key, State: adapters.RecordState(state), Fingerprint: fp,
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
