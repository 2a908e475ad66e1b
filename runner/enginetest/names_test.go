package enginetest

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// TestColumnsNamedLikeRefillsAliases runs, on every engine, a model whose
// columns are named as the aliases of refill's own statements used to be
// (n, lo, hi): partitioned by lo, audited unique on n and for hi's values,
// and compared with the previous partition's count; then a row added
// outside refill is found by counting the table's rows per partition. ClickHouse resolves a
// name to a SELECT alias before a column, even inside an aggregate, so
// count(*) AS n made min(lo) AS lo an aggregate of an aggregate there.
func TestColumnsNamedLikeRefillsAliases(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refill.yml"), []byte("name: names\ntargets:\n  duckdb: {adapter: duckdb, path: w.duckdb}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := `/* refill
partition_by: lo
grain: day
start: 2024-01-01
audits:
  - unique: [n]
  - accepted_values: {column: hi, values: [a, b]}
  - row_count: {within: 50%}
*/
SELECT {{ start }} AS lo, CAST(1 AS BIGINT) AS n, 'a' AS hi
UNION ALL
SELECT {{ start }} AS lo, CAST(2 AS BIGINT) AS n, 'b' AS hi
`
	if err := os.WriteFile(filepath.Join(dir, "models", "names.sql"), []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := models.Load(os.DirFS(dir), models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false },
		Adapters: []models.AdapterKeys{{Name: "duckdb", TargetKeys: []string{"path"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			if e.name == "clickhouse" {
				clickhouseDSN(t)
			}
			t.Parallel()
			a, schema := e.open(t)
			r := &runner.Runner{Reader: plan.Reader{Project: p, Adapter: a, Scope: &models.Scope{Dialect: a.Dialect(), Schema: schema, Vars: p.Vars, Target: e.name}}, Target: e.name}
			sel := plan.Selection{Now: time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC)}
			for round := range 2 {
				pl, err := r.Plan(t.Context(), sel)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := r.Run(t.Context(), pl, runner.RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, pr := range sum.Partitions {
					if pr.Err != nil {
						t.Errorf("round %d: %s %s: %v", round, pr.Model, pr.Partition, pr.Err)
					}
				}
				if want := []int{3, 0}[round]; sum.Succeeded != want {
					t.Errorf("round %d: %d partitions succeeded, want %d", round, sum.Succeeded, want)
				}
			}
			// A row added outside refill: the plan counts the table's rows
			// per partition (drift) and reruns that day alone.
			d := a.Dialect()
			table := models.Relation{Schema: schema, Name: "names"}.Quote(d)
			db := a.(interface{ DB() *sql.DB }).DB()
			if _, err := db.ExecContext(t.Context(), "INSERT INTO "+table+" SELECT CAST('2024-01-02' AS DATE), CAST(3 AS BIGINT), 'a'"); err != nil {
				t.Fatal(err)
			}
			pl, err := r.Plan(t.Context(), sel)
			if err != nil {
				t.Fatal(err)
			}
			var planned []string
			for st := range pl.AllSteps() {
				planned = append(planned, st.Partition.Key+" "+string(st.Reason))
			}
			if want := []string{"2024-01-02 drift"}; !slices.Equal(planned, want) {
				t.Errorf("after a row was added to 2024-01-02, the plan is %q, not %q", planned, want)
			}
			sum, err := r.Run(t.Context(), pl, runner.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Succeeded != 1 || sum.Failed != 0 {
				t.Errorf("the drift's rerun: %d succeeded, %d failed, want 1 and 0", sum.Succeeded, sum.Failed)
			}
			res, err := a.Query(t.Context(), "SELECT count(*) FROM "+table, adapters.Tag{})
			if err != nil {
				t.Fatal(err)
			}
			if n := adapters.Int(res.Rows[0][0]); n != 6 {
				t.Errorf("the table holds %d rows after the rerun, not 6", n)
			}
		})
	}
}
