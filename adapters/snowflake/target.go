package snowflake

import (
	"cmp"
	"context"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Engine describes Snowflake to a program that opens targets. A target
// connects with dsn: (gosnowflake's form); warehouse: overrides the DSN's
// warehouse; credentials come from the environment (see Config).
func Engine() adapters.Engine {
	return adapters.Engine{
		Info:       capabilities(),
		Title:      "Snowflake",
		Driver:     "github.com/snowflakedb/gosnowflake",
		DSN:        true,
		TargetKeys: []string{"warehouse"},
		Block:      checkBlock,
		Dialect: func(t *models.Target) (models.Dialect, string) {
			return Dialect{}, cmp.Or(t.Schema, defaultSchema(t.DSN))
		},
		Open: func(ctx context.Context, t *models.Target, o adapters.OpenOptions) (adapters.Adapter, error) {
			cfg := Config{DSN: t.DSN, Schema: t.Schema, LedgerSchema: t.LedgerSchema, StageSchema: t.StageSchema,
				Warehouse: t.Settings["warehouse"], Log: o.Log, LookupEnv: o.LookupEnv}
			if o.Configure != nil {
				o.Configure(&cfg)
			}
			return Open(ctx, cfg)
		},
	}
}
