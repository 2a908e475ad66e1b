package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
)

var _ adapters.Estimator = (*Adapter)(nil)

// Estimate sums DuckDB's estimated cardinality of every table scan in the
// query's plan: the rows the scans return after their pushed-down filters,
// which for a model is the rows of its source windows.
func (a *Adapter) Estimate(ctx context.Context, query string) (adapters.Estimate, error) {
	a.log("EXPLAIN (FORMAT json) " + query)
	var kind, plan string
	if err := a.db.QueryRowContext(ctx, "EXPLAIN (FORMAT json) "+query).Scan(&kind, &plan); err != nil {
		return adapters.Estimate{}, err
	}
	rows, err := scanRows(plan)
	if err != nil {
		return adapters.Estimate{}, err
	}
	return adapters.Estimate{Rows: rows, Bytes: -1, Note: "DuckDB's estimated rows of its table scans"}, nil
}

type planNode struct {
	Name      string         `json:"name"`
	Children  []planNode     `json:"children"`
	ExtraInfo map[string]any `json:"extra_info"`
}

// scanRows sums "Estimated Cardinality" over the scan nodes of a JSON plan.
func scanRows(plan string) (int64, error) {
	var roots []planNode
	if err := json.Unmarshal([]byte(plan), &roots); err != nil {
		return 0, fmt.Errorf("reading DuckDB's plan: %w", err)
	}
	var total int64
	var walk func(n planNode)
	walk = func(n planNode) {
		name := strings.TrimSpace(n.Name) // DuckDB pads some names
		if strings.HasSuffix(name, "_SCAN") || strings.HasPrefix(name, "READ_") {
			if s, ok := n.ExtraInfo["Estimated Cardinality"].(string); ok {
				v, _ := strconv.ParseInt(s, 10, 64)
				total += v
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return total, nil
}
