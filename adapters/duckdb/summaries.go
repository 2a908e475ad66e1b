package duckdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Kept summaries. Summarizing a ledger of millions of records scans it
// twice, once for the summaries and once to pair the records with their
// upstream's (0.6 s of a 1.1 s plan at 3.65 M records). A writable adapter
// (a run's) computes them into the ledger's summaries table, stamped with
// the query's key and the ledger's state: its number of records and the
// sum of a hash of the columns the summaries read, read by the same
// statement as the summaries. A plan whose query and ledger state are the
// same reads the kept rows instead, which are what it would compute: the
// summaries are a function of those columns and the query alone. Any
// change to the partitions table, by this or another version of refill or
// by hand, changes its state (but for a collision of 64-bit hashes), so
// kept rows are only ever read for the ledger they were computed from. The
// query's key is a hash of the statements that compute the summaries, so a
// version of refill that computes them differently never reads another's.
// Plans open the file read-only: they compute, and keep nothing.

// keptTable is the ledger's table of kept summaries. A change to its
// columns takes a new name: older versions of refill read it too.
const keptTable = "summaries"

// stateColumns are the columns of the partitions table that
// sqlkit.SummarizeSQL and sqlkit.StaleSQL read.
const stateColumns = `"model", "window_start", "state", "fingerprint", "started_at", "published_at", "row_count"`

// ledgerStateSQL selects the ledger's state: its records and the sum of
// their hashes (NULL when empty).
func ledgerStateSQL(table string) string {
	return fmt.Sprintf("SELECT count(*), sum(hash(%s)::HUGEINT)::VARCHAR FROM %s", stateColumns, table)
}

// summaryStatements returns the statements that compute q's summaries
// over table, the pairing's "" without edges.
func (a *Adapter) summaryStatements(table string, q adapters.SummaryQuery) (summarize, stale string) {
	bucket := func(ts string) string {
		return sqlkit.BucketSQL(a.d, q, ts, func(unit, ts string) string { return "date_trunc('" + unit + "', " + ts + ")" })
	}
	summarize = sqlkit.SummarizeSQL(a.d, table, bucket, q)
	if len(q.Edges) > 0 {
		trunc := func(g models.Grain, ts string) string { return a.d.DateTrunc(g, ts) }
		stale = sqlkit.StaleSQL(a.d, table, bucket, trunc, q)
	}
	return summarize, stale
}

// SummarizePartitions summarizes the records q asks for, per bucket: the
// kept summaries when they are the ledger's, or else computed (and kept
// when the adapter may write).
func (a *Adapter) SummarizePartitions(ctx context.Context, q adapters.SummaryQuery) ([]adapters.RecordSummary, error) {
	if ok, err := a.ledgerExists(ctx); err != nil || !ok || len(q.Models) == 0 {
		return nil, err
	}
	// The key is of the statements over a table of fixed name: the same
	// in every ledger schema.
	ks, kst := a.summaryStatements(`"ledger"."partitions"`, q)
	sum := sha256.Sum256([]byte(stateColumns + "\x00" + ks + "\x00" + kst))
	key := hex.EncodeToString(sum[:])
	if sums, err := a.keptSummaries(ctx, key); err != nil || sums != nil {
		return sums, err
	}
	table := a.ledgerTable(sqlkit.PartitionsTable)
	summarize, stale := a.summaryStatements(table, q)
	if !a.cfg.ReadOnly {
		// Computed into the kept table, and read from it.
		if err := a.keep(ctx, key, summarizeSQL(table, summarize, stale)); err != nil {
			return nil, err
		}
		if sums, err := a.keptSummaries(ctx, key); err != nil || sums != nil {
			return sums, err
		}
		// (None: the models have no records, or the ledger changed since.)
	}
	tag := adapters.Tag{Step: "ledger"}
	res, err := a.Query(ctx, summarize, tag)
	if err != nil {
		return nil, err
	}
	sums, err := sqlkit.SummariesFromResult(res)
	if err != nil || stale == "" {
		return sums, err
	}
	if res, err = a.Query(ctx, stale, tag); err != nil {
		return nil, err
	}
	sqlkit.AddStale(sums, res)
	return sums, nil
}

// summarizeSQL renders one statement, so that it reads one snapshot of the
// ledger, selecting the summaries with their stale counts (the columns
// sqlkit.KeptSummaryColumns name, as sqlkit.AddStale adds them), and then the
// ledger's state: its records and their hash (ledgerStateSQL). Without a
// summary it selects one row of NULLs and the state.
func summarizeSQL(table, summarize, stale string) string {
	cols := sqlkit.KeptSummaryColumns[:len(sqlkit.KeptSummaryColumns)-1]
	withStale, staleCount, join := "", "0", ""
	if stale != "" {
		withStale = fmt.Sprintf(", sl(model, bucket, n) AS (%s), x AS (SELECT model, bucket, sum(n) AS n FROM sl GROUP BY model, bucket)", stale)
		staleCount, join = "coalesce(x.n, 0)", " LEFT JOIN x ON x.model = su.model AND x.bucket = su.bucket"
	}
	return fmt.Sprintf("WITH st(n, h) AS (%s), su(%s) AS (%s)%s SELECT su.%s, %s AS stale, st.n AS n, st.h AS h FROM st LEFT JOIN su ON true%s",
		ledgerStateSQL(table), strings.Join(cols, ", "), summarize, withStale, strings.Join(cols, ", su."), staleCount, join)
}

// keptSummaries returns the summaries kept under key when the ledger is
// in the state they were computed from, or nil.
func (a *Adapter) keptSummaries(ctx context.Context, key string) ([]adapters.RecordSummary, error) {
	kept := models.Relation{Schema: a.cfg.LedgerSchema, Name: keptTable}
	if ok, err := a.ledgerHas(ctx, keptTable); err != nil || !ok {
		return nil, err
	}
	res, err := a.Query(ctx, fmt.Sprintf("WITH state AS (%s) SELECT %s FROM %s AS k, state AS s(n, h) WHERE k.query_key = %s AND k.ledger_records = s.n AND k.ledger_state = s.h",
		ledgerStateSQL(a.ledgerTable(sqlkit.PartitionsTable)), strings.Join(sqlkit.KeptSummaryColumns, ", "), kept.Quote(a.d), a.d.QuoteString(key)), adapters.Tag{Step: "ledger"})
	if err != nil || len(res.Rows) == 0 {
		return nil, err
	}
	return sqlkit.KeptSummariesFromResult(res)
}

// keptTableSQL creates the kept table.
func keptTableSQL(d Dialect, schema string) string {
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
  query_key VARCHAR NOT NULL, ledger_records BIGINT NOT NULL, ledger_state VARCHAR NOT NULL,
  model VARCHAR NOT NULL, bucket TIMESTAMP, records BIGINT, done BIGINT, pending BIGINT, removed BIGINT,
  min_fingerprint VARCHAR, max_fingerprint VARCHAR, min_started TIMESTAMP, max_published TIMESTAMP,
  row_count BIGINT, self_stale BIGINT, stale BIGINT
)`, models.Relation{Schema: schema, Name: keptTable}.Quote(d))
}

// keep computes query's summaries (summarizeSQL) into the kept table
// under key, and drops those of other ledger states, in one transaction.
func (a *Adapter) keep(ctx context.Context, key, query string) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	t := models.Relation{Schema: a.cfg.LedgerSchema, Name: keptTable}.Quote(a.d)
	cols := strings.Join(sqlkit.KeptSummaryColumns, ", ")
	return a.exec(ctx, "ledger",
		keptTableSQL(a.d, a.cfg.LedgerSchema),
		fmt.Sprintf("DELETE FROM %s WHERE query_key = %s OR NOT EXISTS (SELECT 1 FROM (%s) AS s(n, h) WHERE s.n = ledger_records AND s.h = ledger_state)",
			t, a.d.QuoteString(key), ledgerStateSQL(a.ledgerTable(sqlkit.PartitionsTable))),
		fmt.Sprintf("INSERT INTO %s (query_key, ledger_records, ledger_state, %s)\nSELECT %s, n, h, %s FROM (%s) WHERE model IS NOT NULL", t, cols, a.d.QuoteString(key), cols, query))
}
