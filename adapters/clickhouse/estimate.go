package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
)

var _ adapters.Estimator = (*Adapter)(nil)

// Estimate sums the rows EXPLAIN ESTIMATE expects the query to read from
// each table, after partition and primary-key pruning. EXPLAIN ESTIMATE
// exists from ClickHouse 21.9; older servers give no estimate.
func (a *Adapter) Estimate(ctx context.Context, query string) (adapters.Estimate, error) {
	if !versionAtLeast(a.server.Version, 21, 9) {
		return adapters.Estimate{}, fmt.Errorf("EXPLAIN ESTIMATE needs ClickHouse 21.9 or later (the server is %s)", a.server.Version)
	}
	res, err := a.Query(ctx, estimateSQL(query), adapters.Tag{Step: "estimate"})
	if err != nil {
		return adapters.Estimate{}, err
	}
	return estimateFrom(res)
}

// estimateSQL renders the EXPLAIN ESTIMATE of query.
func estimateSQL(query string) string { return "EXPLAIN ESTIMATE\n" + query }

// estimateFrom reads EXPLAIN ESTIMATE's rows: database, table, parts,
// rows, marks.
func estimateFrom(res *adapters.Result) (adapters.Estimate, error) {
	col := -1
	for i, c := range res.Columns {
		if c == "rows" {
			col = i
		}
	}
	if col < 0 {
		return adapters.Estimate{}, fmt.Errorf("EXPLAIN ESTIMATE returned no rows column (columns %v)", res.Columns)
	}
	var rows int64
	for _, r := range res.Rows {
		rows += adapters.Int(r[col])
	}
	return adapters.Estimate{Rows: rows, Bytes: -1, Note: "ClickHouse EXPLAIN ESTIMATE: rows of the parts read"}, nil
}

// versionAtLeast compares a ClickHouse version such as 23.8.2.7.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
