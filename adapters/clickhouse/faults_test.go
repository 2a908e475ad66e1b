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

// TestPublishFaults fails each operation of a publication and its ledger
// write in turn. ClickHouse's guarantee: each physical partition (a month
// here; the window spans two) is entirely old or entirely new, the ledger
// is written after the swap, and a stage whose rows may be in the table
// without their records is kept, named for its run, for the next run to
// find (Unrecorded).
func TestPublishFaults(t *testing.T) {
	dsn(t)
	rec := recorder.New()
	adaptertest.Faults(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openWith(t, s, clickhouse.Config{Connector: rec.Wrap})
	}, func(t *testing.T, f *adaptertest.Fault) {
		f.WantEachPartition(func(day string) string { return day[:7] })
		changed := fmt.Sprint(f.After) != fmt.Sprint(f.Before)
		recorded := fmt.Sprint(f.LedgerAfter) != fmt.Sprint(f.LedgerBefore)
		if recorded && fmt.Sprint(f.After) != fmt.Sprint(f.Want) {
			t.Errorf("the ledger recorded the publication, but %s holds %v, want %v", f.Target, f.After, f.Want)
		}
		if changed && !recorded {
			kept, err := f.A.(adapters.Deferrer).Unrecorded(f.Ctx, func(token string) bool { return token == adapters.RunToken(adaptertest.FaultRun) })
			if err != nil || len(kept) == 0 {
				t.Errorf("%s changed without records, and no stage names it for the next run (Unrecorded: %v, %v)", f.Target, kept, err)
			}
		}
	})
}

// TestEveryStatementFails fails each operation of adaptertest.Script in
// turn: the call that made it must return the failure, but for the two
// lookups the adapter may do without.
func TestEveryStatementFails(t *testing.T) {
	dsn(t)
	rec := recorder.New()
	adaptertest.ScriptFaults(t, rec, func(t *testing.T, s adaptertest.Schemas) (adapters.Adapter, error) {
		return tryOpen(t, s, clickhouse.Config{Connector: rec.Wrap})
	}, func(e recorder.Entry) bool {
		return strings.Contains(e.SQL, "__refill_')") || // LoadSeed's cleaning of old leftovers
			strings.HasPrefix(e.SQL, "SELECT engine FROM system.databases") // without it Rebuild swaps with RENAME, which works everywhere
	})
}
