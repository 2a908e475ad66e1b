package snowflake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/refill/refill/adapters"
)

var _ adapters.Estimator = (*Adapter)(nil)

// Estimate asks Snowflake's optimizer, without running the query, how many
// bytes of how many micro-partitions it assigns to it (EXPLAIN USING JSON,
// GlobalStats). Snowflake does not estimate rows.
func (a *Adapter) Estimate(ctx context.Context, query string) (adapters.Estimate, error) {
	res, err := a.Query(ctx, estimateSQL(query), adapters.Tag{Step: "estimate"})
	if err != nil {
		return adapters.Estimate{}, err
	}
	if len(res.Rows) == 0 || len(res.Rows[0]) == 0 {
		return adapters.Estimate{}, fmt.Errorf("EXPLAIN returned no plan")
	}
	text, _ := res.Rows[0][0].(string)
	return estimateFrom(text)
}

// estimateSQL renders the EXPLAIN of query.
func estimateSQL(query string) string { return "EXPLAIN USING JSON\n" + query }

// estimateFrom reads the GlobalStats of an EXPLAIN USING JSON plan.
func estimateFrom(plan string) (adapters.Estimate, error) {
	var p struct {
		GlobalStats struct {
			PartitionsTotal    int64 `json:"partitionsTotal"`
			PartitionsAssigned int64 `json:"partitionsAssigned"`
			BytesAssigned      int64 `json:"bytesAssigned"`
		} `json:"GlobalStats"`
	}
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		return adapters.Estimate{}, fmt.Errorf("reading Snowflake's plan: %w", err)
	}
	g := p.GlobalStats
	return adapters.Estimate{Rows: -1, Bytes: g.BytesAssigned,
		Note: fmt.Sprintf("Snowflake EXPLAIN: %d of %d micro-partitions", g.PartitionsAssigned, g.PartitionsTotal)}, nil
}
