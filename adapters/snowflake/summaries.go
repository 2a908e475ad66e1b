package snowflake

import (
	"context"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
)

// The ledger's summaries (adapters.LedgerSummarizer), in the SQL DuckDB
// runs too (sqlkit): a plan reads O(models × months) rows rather than
// every record.

var _ adapters.LedgerSummarizer = (*Adapter)(nil)

// SummarizePartitions summarizes the records q asks for, per bucket.
func (a *Adapter) SummarizePartitions(ctx context.Context, q adapters.SummaryQuery) ([]adapters.RecordSummary, error) {
	if len(q.Models) == 0 {
		return nil, nil
	}
	var sums []adapters.RecordSummary
	err := a.withPartitions(ctx, func(s *session) error {
		var err error
		sums, err = a.summarize(s, q)
		return err
	})
	return sums, err
}

// summarize runs the queries of SummarizePartitions in s.
func (a *Adapter) summarize(s *session, q adapters.SummaryQuery) ([]adapters.RecordSummary, error) {
	table := ledgerTable(a.d, a.cfg.LedgerSchema, sqlkit.PartitionsTable)
	bucket := func(ts string) string {
		return sqlkit.BucketSQL(a.d, q, ts, func(unit, ts string) string { return "DATE_TRUNC('" + strings.ToUpper(unit) + "', " + ts + ")" })
	}
	res, err := s.query(sqlkit.SummarizeSQL(a.d, table, bucket, q))
	if err != nil {
		return nil, err
	}
	sums, err := sqlkit.SummariesFromResult(res)
	if err != nil || len(q.Edges) == 0 {
		return sums, err
	}
	if res, err = s.query(sqlkit.StaleSQL(a.d, table, bucket, a.d.DateTrunc, q)); err != nil {
		return nil, err
	}
	sqlkit.AddStale(sums, res)
	return sums, nil
}

// QueryPartitions returns the records q asks for.
func (a *Adapter) QueryPartitions(ctx context.Context, q adapters.RecordQuery) ([]adapters.Record, error) {
	var recs []adapters.Record
	err := a.withPartitions(ctx, func(s *session) error {
		res, err := s.query(sqlkit.RecordQuerySQL(a.d, ledgerTable(a.d, a.cfg.LedgerSchema, sqlkit.PartitionsTable), q))
		if err == nil {
			recs, err = sqlkit.RecordsFromResult(res)
		}
		return err
	})
	return recs, err
}

// withPartitions calls fn with a session of the ledger, if its partitions
// table exists; a ledger that does not exist yet holds nothing.
func (a *Adapter) withPartitions(ctx context.Context, fn func(s *session) error) error {
	s, ok, err := a.ledgerSession(ctx, sqlkit.PartitionsTable)
	if err != nil {
		return err
	}
	defer s.close()
	if !ok {
		return nil
	}
	return fn(s)
}
