package runner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

const auditedOrders = `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
audits:
  - row_count: {within: 50%}
  - sql: SELECT * FROM {{ this }} WHERE amount > {{ var("max_amount") }}
    name: no_huge_orders
  - not_null: [customer_id]
    severity: warn
*/
SELECT order_id, CASE WHEN order_id % 7 = 0 THEN NULL ELSE customer_id END AS customer_id, order_date, amount, status, region
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
  AND NOT (order_date = DATE '2024-01-05' AND order_id % 10 <> 0)`

func TestAudits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"models/staging/orders.sql": auditedOrders,
		"refill.yml": "targets:\n  dev: {adapter: duckdb}\nvars: {min_amount: 10, max_amount: 1000}\n"})
	s := e.run(plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-04"}, runner.RunOptions{})
	if s.Failed != 0 || len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], "rows have NULL customer_id") {
		t.Fatalf("days 1-4: %d failed, warnings %v", s.Failed, s.Warnings)
	}
	// The 5th has a tenth of its rows: more than 50% off the 4th's count
	// in the ledger. So is the 6th, against the 5th in the same batch.
	s = e.run(plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-05", To: "2024-01-07"}, runner.RunOptions{Batch: 3, SplitFailed: true})
	byKey := map[string]runner.PartitionResult{}
	for _, p := range s.Partitions {
		byKey[p.Partition] = p
	}
	var aerr *runner.AuditError
	if p := byKey["2024-01-05"]; p.Status != runner.Failed || !errors.As(p.Err, &aerr) || !strings.Contains(p.Err.Error(), "% off the") {
		t.Errorf("2024-01-05: %s %v", p.Status, p.Err)
	}
	if p := byKey["2024-01-07"]; p.Status != runner.Succeeded {
		t.Errorf("2024-01-07: %s %v", p.Status, p.Err)
	}
	// A custom SQL audit that returns rows blocks the swap.
	e2 := newEnv(t, map[string]string{"models/staging/orders.sql": auditedOrders,
		"refill.yml": "targets:\n  dev: {adapter: duckdb}\nvars: {min_amount: 10, max_amount: 100}\n"})
	s = e2.run(plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-01", To: "2024-01-01"}, runner.RunOptions{})
	if s.Failed != 1 || !strings.Contains(s.Partitions[0].Err.Error(), "no_huge_orders (models/staging/orders.sql:7): the audit query returned") {
		t.Errorf("sql audit: %+v", s.Partitions)
	}
	if n := e2.count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'staging' AND table_name = 'orders'`); n != 0 {
		t.Errorf("a failed first partition created the target")
	}
}

// TestUniqueAuditNamesDates: the unique audit names a duplicated date as a
// date, not as Go prints a time.
func TestUniqueAuditNamesDates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"models/staging/orders.sql": `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
audits:
  - unique: [order_date]
*/
SELECT order_date, order_id FROM {{ source("raw.orders") }} WHERE order_date >= {{ start }} AND order_date < {{ end }}`})
	s := e.run(plan.Selection{Select: []string{"staging.orders"}, From: "2024-01-03", To: "2024-01-03"}, runner.RunOptions{})
	if s.Failed != 1 {
		t.Fatalf("want the partition refused by its unique audit, got %+v", s.Partitions)
	}
	if msg := s.Partitions[0].Err.Error(); !strings.Contains(msg, "2024-01-03 (") || strings.Contains(msg, "UTC") {
		t.Errorf("unique audit message: %s", msg)
	}
}
