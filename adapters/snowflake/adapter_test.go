package snowflake_test

import (
	"context"
	"os"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/snowflake"
)

// TestConformance runs the shared suite against the account SNOWFLAKE_DSN
// names, which must name a database the role may create schemas in. Each
// subtest works in three fresh schemas (RT_..., RT_LEDGER_..., RT_STAGE_...)
// and drops them when it ends. Credentials the DSN leaves out come from the
// SNOWFLAKE_* variables of DriverConfig.
func TestConformance(t *testing.T) {
	dsn := adaptertest.SnowflakeAccount.Env(t)[0]
	adaptertest.Run(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		ctx := context.Background()
		a, err := snowflake.Open(ctx, snowflake.Config{DSN: dsn, Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage,
			Warehouse: os.Getenv("SNOWFLAKE_WAREHOUSE"), Log: func(q string) { t.Log(q) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			d := snowflake.Dialect{}
			for _, schema := range []string{s.Default, s.Ledger, s.Stage} {
				if _, err := a.DB().ExecContext(ctx, "DROP SCHEMA IF EXISTS "+d.QuoteIdent(schema)+" CASCADE"); err != nil {
					t.Errorf("dropping schema %s: %v", schema, err)
				}
			}
			a.Close()
		})
		return a
	})
}
