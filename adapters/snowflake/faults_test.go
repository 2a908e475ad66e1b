package snowflake_test

import (
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/recorder"
	"github.com/refill/refill/adapters/snowflake"
)

// TestPublishFaults fails each statement of a publication of two tables
// in turn, against the fake account. Snowflake's guarantee: the swaps and
// their ledger records are one transaction, which a failure rolls back;
// only the DDL before it (a missing schema or table) may remain. So a
// failure before BEGIN TRANSACTION must stop the publication there, and
// one inside it must be followed by ROLLBACK and no COMMIT (which Faults
// checks for every adapter).
func TestPublishFaults(t *testing.T) {
	rec := recorder.New()
	adaptertest.Faults(t, rec, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return openFake(t, s, rec, newFakeSnowflake())
	}, func(t *testing.T, f *adaptertest.Fault) {
		began := false
		for i, e := range f.Log {
			if e.SQL == snowflake.BeginSQL {
				began = true
				if i >= f.N {
					t.Errorf("statement %d (%s) failed before the transaction, and the transaction began anyway", f.N, f.Failed.SQL)
				}
			}
		}
		if !began {
			for _, e := range f.Log {
				if strings.Contains(e.SQL, "DELETE FROM") || strings.Contains(e.SQL, "INSERT INTO") {
					t.Errorf("%s ran outside the transaction", e.SQL)
				}
			}
		}
	})
}

// TestEveryStatementFails fails each statement of adaptertest.Script in
// turn: the call that issued it must return the failure.
func TestEveryStatementFails(t *testing.T) {
	rec := recorder.New()
	adaptertest.ScriptFaults(t, rec, func(t *testing.T, s adaptertest.Schemas) (adapters.Adapter, error) {
		return openFake(t, s, rec, newFakeSnowflake()), nil
	}, func(e recorder.Entry) bool {
		return e.SQL == snowflake.CurrentWarehouseSQL // Open then keeps the DSN's warehouse
	})
}
