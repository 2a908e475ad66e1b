package clickhouse_test

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
	"github.com/refill/refill/models"
)

// A run's adapter keeps the ledger's summaries, and later calls read them
// while the ledger is as it was; a hand mutation of the ledger, a keep
// whose rows are not all there, a write while they are kept and another
// query all have them computed again. A read-only adapter reads what a
// run kept and keeps nothing. Whether the ledger was summarized is told
// from the statements: only computing them groups the ledger.
func TestKeptSummaries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := make([]byte, 3)
	rand.Read(b)
	ledger := "kept_" + hex.EncodeToString(b)
	var (
		mu     sync.Mutex
		log    []string
		during func(stmt string) // called before each statement runs
	)
	open := func(readOnly bool) *clickhouse.Adapter {
		a, err := clickhouse.Open(ctx, clickhouse.Config{DSN: dsn(t), LedgerSchema: ledger, ReadOnly: readOnly, Log: func(s string) {
			mu.Lock()
			log = append(log, s)
			f := during
			mu.Unlock()
			if f != nil {
				f(s)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	a := open(false)
	t.Cleanup(func() { a.DB().Exec("DROP DATABASE IF EXISTS `" + ledger + "`") })
	exec := func(q string) {
		t.Helper()
		if _, err := a.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	q := adapters.SummaryQuery{Models: []string{"up", "down"}, Edges: []adapters.Edge{{Down: "down", Up: "up", Grain: models.Day}}}
	// summarize returns the summaries of q, their stale count, whether
	// they were computed (rather than the kept ones read) and whether
	// they were kept.
	summarize := func(a *clickhouse.Adapter) (sums []adapters.RecordSummary, stale int64, computed, kept bool) {
		t.Helper()
		mu.Lock()
		log = nil
		mu.Unlock()
		sums, err := a.SummarizePartitions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sums {
			stale += s.Stale
		}
		mu.Lock()
		defer mu.Unlock()
		computed = slices.ContainsFunc(log, func(s string) bool { return strings.Contains(s, "GROUP BY") })
		kept = slices.ContainsFunc(log, func(s string) bool { return strings.HasPrefix(s, "INSERT INTO `"+ledger+"`.`summaries`") })
		return sums, stale, computed, kept
	}

	if err := a.SetupLedger(ctx); err != nil {
		t.Fatal(err)
	}
	records := adaptertest.DailyPair(40)
	if err := a.RecordPartitions(ctx, records); err != nil {
		t.Fatal(err)
	}
	first, stale, computed, kept := summarize(a)
	if !computed || !kept || len(first) != 4 || stale != 0 {
		t.Fatalf("first summaries: computed %v, kept %v, %d summaries, %d stale; want computed, kept, 4 (2 models x 2 months), none stale",
			computed, kept, len(first), stale)
	}
	if again, _, computed, kept := summarize(a); computed || kept || !sameSummaries(again, first) {
		t.Fatalf("asked again: computed %v, kept %v, %v; want %v read from the kept ones", computed, kept, again, first)
	}

	// By hand, behind refill's back: up's 2024-02-03 republished after
	// down read it, by a mutation (which keeps the row's version).
	exec("ALTER TABLE `" + ledger + "`.`partitions` UPDATE `published_at` = `published_at` + 86400 WHERE `model` = 'up' AND `partition_key` = '2024-02-03'")
	for deadline := time.Now().Add(30 * time.Second); ; {
		var left int
		if err := a.DB().QueryRowContext(ctx, "SELECT count() FROM system.mutations WHERE database = '"+ledger+"' AND NOT is_done").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mutation did not finish in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	changed, stale, computed, _ := summarize(a)
	if !computed || stale != 1 {
		t.Fatalf("after a hand mutation: computed %v, %d stale; want computed, 1 stale: %v", computed, stale, changed)
	}

	// A keep that lost rows, or gained some, is not read.
	exec("INSERT INTO `" + ledger + "`.`summaries` (`keep_id`, `marker`, `model`) SELECT max(`keep_id`), toUInt8(0), 'x' FROM `" + ledger + "`.`summaries`")
	if got, _, computed, _ := summarize(a); !computed || !sameSummaries(got, changed) {
		t.Fatalf("with a row too many in the kept summaries: computed %v, %v; want %v computed", computed, got, changed)
	}

	// A record written while they are kept: the keep gets no marker, and
	// the summaries are computed from the ledger as it is.
	moved := records[2] // up 2024-01-02
	moved.PublishedAt = moved.PublishedAt.Add(48 * time.Hour)
	writer := open(false)
	mu.Lock()
	during = func(stmt string) {
		if strings.HasPrefix(stmt, "INSERT INTO `"+ledger+"`.`summaries`") && strings.Contains(stmt, "toUInt8(0)") {
			if err := writer.RecordPartitions(ctx, []adapters.Record{moved}); err != nil {
				t.Error(err)
			}
		}
	}
	mu.Unlock()
	exec("INSERT INTO `" + ledger + "`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `run_id`, `attempts`, `started_at`, `finished_at`, `version`) " +
		"SELECT 'other', 'k', 'done', 'f', 'r', 1, now(), now(), toUInt64(1)") // so that the kept ones are not the ledger's
	raced, stale, computed, kept := summarize(a)
	mu.Lock()
	during = nil
	mu.Unlock()
	if !computed || !kept || stale != 2 {
		t.Fatalf("with a record written while they were kept: computed %v, kept %v, %d stale; want kept, then computed, 2 stale: %v", computed, kept, stale, raced)
	}
	var markers int
	if err := a.DB().QueryRowContext(ctx, "SELECT count() FROM `"+ledger+"`.`summaries` WHERE `marker` = 1 AND `keep_id` = (SELECT max(`keep_id`) FROM `"+ledger+"`.`summaries`)").Scan(&markers); err != nil {
		t.Fatal(err)
	}
	if markers != 0 {
		t.Fatalf("the keep the write overtook has a marker")
	}
	if again, _, computed, kept := summarize(a); !computed || !kept || !sameSummaries(again, raced) {
		t.Fatalf("asked again after the race: computed %v, kept %v, %v; want %v computed and kept", computed, kept, again, raced)
	}

	// A plan's adapter reads what the run kept, and keeps nothing.
	ro := open(true)
	if got, _, computed, kept := summarize(ro); computed || kept || !sameSummaries(got, raced) {
		t.Fatalf("read-only: computed %v, kept %v, %v; want %v read from the kept ones", computed, kept, got, raced)
	}
	// Another query (the grain of the edge changed): computed, not kept.
	q.Edges[0].Grain = models.Month
	if _, _, computed, kept := summarize(ro); !computed || kept {
		t.Fatalf("another query: computed %v, kept %v; want computed, not kept", computed, kept)
	}
}

// sameSummaries reports whether a and b hold the same summaries, in any
// order (SummarizePartitions promises none).
func sameSummaries(a, b []adapters.RecordSummary) bool {
	order := func(s []adapters.RecordSummary) []adapters.RecordSummary {
		s = slices.Clone(s)
		slices.SortFunc(s, func(x, y adapters.RecordSummary) int {
			return cmp.Or(strings.Compare(x.Model, y.Model), x.Bucket.Compare(y.Bucket))
		})
		return s
	}
	return slices.Equal(order(a), order(b))
}
