// Package enginetest runs the runner against every real adapter: the
// checks of the runner that depend on what the warehouse does with the
// adapter's statements (verification, schema changes, full refreshes, the
// example project end to end). DuckDB always runs; ClickHouse when
// CLICKHOUSE_DSN names a server, Snowflake when SNOWFLAKE_DSN names an
// account (see the README).
package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/adapters/snowflake"
)

func TestDuckDB(t *testing.T) {
	adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		a, err := duckdb.Open(t.Context(), duckdb.Config{Path: filepath.Join(t.TempDir(), "w.duckdb"),
			Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}, runnerTests)
}

func TestClickHouse(t *testing.T) {
	clickhouseDSN(t)
	adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openClickHouse(t, s, nil)
	}, runnerTests)
}

func TestSnowflake(t *testing.T) {
	dsn := adaptertest.SnowflakeAccount.Env(t)[0]
	adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		a, err := snowflake.Open(t.Context(), snowflake.Config{DSN: dsn, Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage,
			Warehouse: os.Getenv("SNOWFLAKE_WAREHOUSE")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			d := snowflake.Dialect{}
			for _, schema := range []string{s.Default, s.Ledger, s.Stage} {
				if _, err := a.DB().ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+d.QuoteIdent(schema)+" CASCADE"); err != nil {
					t.Errorf("dropping schema %s: %v", schema, err)
				}
			}
			a.Close()
		})
		return a
	}, runnerTests)
}

// clickhouseDSN returns CLICKHOUSE_DSN or skips the test.
func clickhouseDSN(t *testing.T) string {
	t.Helper()
	return adaptertest.ClickHouseServer.Env(t)[0]
}

// openClickHouse opens an adapter on fresh databases that t's cleanup
// drops; log, when set, receives its statements.
func openClickHouse(t *testing.T, s adaptertest.Schemas, log func(string)) *clickhouse.Adapter {
	t.Helper()
	a, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: clickhouseDSN(t), Schema: s.Default, LedgerSchema: s.Ledger,
		StageSchema: s.Stage, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, db := range []string{s.Default, s.Ledger, s.Stage} {
			if _, err := a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+a.Dialect().QuoteIdent(db)); err != nil {
				t.Errorf("dropping %s: %v", db, err)
			}
		}
		a.Close()
	})
	return a
}

// schemas returns fresh database names for one test.
func schemas(t *testing.T) adaptertest.Schemas {
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	suffix := fmt.Sprintf("%s_%d", name, os.Getpid())
	return adaptertest.Schemas{Default: "et_" + suffix, Ledger: "et_ledger_" + suffix, Stage: "et_stage_" + suffix}
}

func row(d string, v int64) adaptertest.Row { return adaptertest.Row{D: d, V: v} }

// TestClickHouseCluster runs the runner's checks on a ClickHouse cluster
// (.ci/cluster/start), in each layout.
func TestClickHouseCluster(t *testing.T) {
	env := adaptertest.ClusterServer.Env(t)
	dsn, name := env[0], env[1]
	for _, layout := range []string{clickhouse.LayoutReplicated, clickhouse.LayoutSharded} {
		t.Run(layout, func(t *testing.T) {
			adaptertest.RunTests(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
				a, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: dsn, Cluster: name, Layout: layout,
					Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					defer a.Close()
					for _, db := range []string{s.Default, s.Ledger, s.Stage} {
						if _, err := a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+a.Dialect().QuoteIdent(db)+" ON CLUSTER "+a.Dialect().QuoteIdent(name)); err != nil {
							t.Errorf("dropping %s: %v", db, err)
						}
					}
				})
				return a
			}, runnerTests)
		})
	}
}
