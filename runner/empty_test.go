package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestEmptyPartitionWarns: a partition published without rows while the
// upstream partitions it reads hold rows is a warning (a filter that
// matches nothing); an empty partition whose upstream is empty too is not.
func TestEmptyPartitionWarns(t *testing.T) {
	t.Parallel()
	orders, err := os.ReadFile(filepath.Join("..", "testdata", "shop", "models", "staging", "orders.sql"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, map[string]string{"models/staging/orders.sql": strings.TrimSpace(string(orders)) + "\n  AND order_date <> DATE '2024-01-03'", "models/marts/daily_revenue.sql": `/* refill
partition_by: order_date
grain: day
start: 2024-01-01
*/
SELECT order_date, count(*) AS orders, sum(amount) AS revenue
FROM {{ ref("staging.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }} AND amount < 0
GROUP BY order_date`})
	s := e.run(plan.Selection{Select: []string{"staging.orders", "marts.daily_revenue"}, From: "2024-01-02", To: "2024-01-03"}, runner.RunOptions{})
	if s.Failed != 0 {
		t.Fatalf("run: %+v", s.Partitions)
	}
	var empty []string
	for _, w := range s.Warnings {
		if strings.Contains(w, "published no rows") {
			empty = append(empty, w)
		}
	}
	// 2024-01-02 reads rows and keeps none; 2024-01-03 reads none.
	if len(empty) != 1 || !strings.Contains(empty[0], "marts.daily_revenue 2024-01-02 published no rows, though the staging.orders partitions it reads (2024-01-02) hold") {
		t.Errorf("warnings: %q", s.Warnings)
	}
}
