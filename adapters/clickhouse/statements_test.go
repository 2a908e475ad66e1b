package clickhouse_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/adapters/recorder"
)

// TestStatements records what the adapter issues for each kind of call a
// backfill makes, against the server CLICKHOUSE_DSN names: the golden file
// of the server's major version (testdata/statements-<major>.sql) is that
// log, and every statement in it ran without an error there.
func TestStatements(t *testing.T) {
	dsn(t)
	rec := recorder.New()
	var version string
	got := adaptertest.Script(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		a := openWith(t, s, clickhouse.Config{Connector: rec.Wrap})
		version = a.Server().Version
		return a
	})
	adaptertest.Golden(t, fmt.Sprintf("testdata/statements-%s.sql", strings.Split(version, ".")[0]), got)
}
