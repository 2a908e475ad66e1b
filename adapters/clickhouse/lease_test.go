package clickhouse_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/clickhouse"
)

// TestLeaseClaimsRace: runs claiming one table at once, through their own
// connections, within one second (ClickHouse's ledger keeps whole
// seconds, and has no transaction) never both take it.
func TestLeaseClaimsRace(t *testing.T) {
	t.Parallel()
	s := schemas(t)
	const runs = 4
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	var ads [runs]*clickhouse.Adapter
	for i := range ads {
		if i == 0 {
			ads[i] = open(t, s, nil)
			continue
		}
		a, err := clickhouse.Open(t.Context(), clickhouse.Config{DSN: dsn(t), Schema: s.Default, LedgerSchema: s.Ledger, StageSchema: s.Stage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		ads[i] = a
	}
	if err := ads[0].SetupLedger(t.Context()); err != nil {
		t.Fatal(err)
	}
	won := 0
	for round := range rounds {
		table := fmt.Sprintf("s.t%d", round)
		now := time.Now().UTC()
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
		)
		start := make(chan struct{})
		for i, a := range ads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run := fmt.Sprintf("r%d", i)
				<-start
				err := a.AcquireLease(t.Context(), adapters.Lease{Table: table, RunID: run, Host: "h", PID: i,
					AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(time.Minute)})
				var held *adapters.LeaseHeldError
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, run)
					mu.Unlock()
				case !errors.As(err, &held):
					t.Errorf("round %d, %s: %v", round, run, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(winners) > 1 {
			t.Errorf("round %d: %v all took %s", round, winners, table)
		}
		won += len(winners)
		// A run that did not take the table is refused it while the
		// winner holds it.
		for i, a := range ads {
			run := fmt.Sprintf("r%d", i)
			if len(winners) == 1 && run != winners[0] {
				later := now.Add(time.Second)
				err := a.AcquireLease(t.Context(), adapters.Lease{Table: table, RunID: run, Host: "h", PID: i,
					AcquiredAt: later, HeartbeatAt: later, ExpiresAt: later.Add(time.Minute)})
				var held *adapters.LeaseHeldError
				if !errors.As(err, &held) || held.Held.RunID != winners[0] {
					t.Errorf("round %d: %s after %s took the table: %v", round, run, winners[0], err)
				}
				break
			}
		}
	}
	t.Logf("%d of %d rounds had a winner", won, rounds)
	if won == 0 {
		t.Errorf("no round of %d had a winner: claims that all lose lock everyone out", rounds)
	}
}
