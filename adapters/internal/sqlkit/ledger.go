// Package sqlkit is the SQL the adapters share, apart from the contract
// (package adapters): the ledger's tables and columns, records rendered as
// literals and read back, the summary queries of planning, and scanning
// database/sql rows into results.
package sqlkit

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Column is one column of a ledger table, in portable types that each
// adapter maps to its own.
type Column struct {
	Name    string
	Type    models.ColumnType
	NotNull bool
}

// The ledger's tables. Their names and columns are documented in the README
// and are a contract: analysts query them.
const (
	PartitionsTable = "partitions"
	RunsTable       = "runs"
	LeasesTable     = "leases"
	VersionsTable   = "versions"
)

// PartitionColumns are the columns of the partitions table, in order.
var PartitionColumns = []Column{
	{"model", models.TypeString, true},
	{"partition_key", models.TypeString, true},
	{"state", models.TypeString, true},
	{"fingerprint", models.TypeString, true},
	{"row_count", models.TypeInt, false},
	{"run_id", models.TypeString, true},
	{"attempts", models.TypeInt, true},
	{"window_start", models.TypeTimestamp, false},
	{"window_end", models.TypeTimestamp, false},
	{"started_at", models.TypeTimestamp, true},
	{"finished_at", models.TypeTimestamp, true},
	{"published_at", models.TypeTimestamp, false},
	{"error", models.TypeString, false},
	{"watermark", models.TypeString, false},
}

// RunColumns are the columns of the runs table, in order.
var RunColumns = []Column{
	{"run_id", models.TypeString, true},
	{"target", models.TypeString, true},
	{"status", models.TypeString, true},
	{"selection", models.TypeString, true},
	{"host", models.TypeString, true},
	{"pid", models.TypeInt, true},
	{"started_at", models.TypeTimestamp, true},
	{"finished_at", models.TypeTimestamp, false},
	{"succeeded", models.TypeInt, true},
	{"failed", models.TypeInt, true},
	{"skipped", models.TypeInt, true},
	{"error", models.TypeString, false},
}

// LeaseColumns are the columns of the leases table, in order.
var LeaseColumns = []Column{
	{"table_name", models.TypeString, true},
	{"run_id", models.TypeString, true},
	{"host", models.TypeString, true},
	{"pid", models.TypeInt, true},
	{"acquired_at", models.TypeTimestamp, true},
	{"heartbeat_at", models.TypeTimestamp, true},
	{"expires_at", models.TypeTimestamp, true},
}

// VersionColumns are the columns of the versions table, in order.
var VersionColumns = []Column{
	{"model", models.TypeString, true},
	{"fingerprint", models.TypeString, true},
	{"text", models.TypeString, true},
	{"created_at", models.TypeTimestamp, true},
	{"accepted_from", models.TypeString, false},
	{"accepted_at", models.TypeTimestamp, false},
	{"accepted_partitions", models.TypeInt, false},
}

// ColumnNames returns the quoted, comma-separated names of cols.
func ColumnNames(d models.Dialect, cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = d.QuoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

func lit(d models.Dialect, v any) string {
	s, err := models.Literal(d, v)
	if err != nil {
		panic(err) // ledger values are strings, integers and times
	}
	return s
}

func timeLit(d models.Dialect, t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return d.Timestamp(t)
}

func nullString(d models.Dialect, s string) string {
	if s == "" {
		return "NULL"
	}
	return d.QuoteString(s)
}

// RecordFields returns r's values in PartitionColumns order as the ledger
// stores them: strings, integers and times, nil for NULL (the row count of
// a partition neither done nor holding rows, a zero time, an empty error
// or watermark).
func RecordFields(r adapters.Record) []any {
	var rows any
	if r.State == adapters.RecordDone || r.Rows > 0 {
		rows = r.Rows
	}
	nullTime := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	nullText := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return []any{r.Model, r.Partition, string(r.State), r.Fingerprint, rows, r.RunID, r.Attempts,
		nullTime(r.WindowStart), nullTime(r.WindowEnd), nullTime(r.StartedAt), nullTime(r.FinishedAt),
		nullTime(r.PublishedAt), nullText(r.Error), nullText(r.Watermark)}
}

// RecordValues renders r as literals in PartitionColumns order.
func RecordValues(d models.Dialect, r adapters.Record) []string {
	fields := RecordFields(r)
	out := make([]string, len(fields))
	for i, v := range fields {
		out[i] = lit(d, v)
	}
	return out
}

// RunValues renders r as literals in RunColumns order.
func RunValues(d models.Dialect, r *adapters.Run) []string {
	return []string{
		d.QuoteString(r.ID), d.QuoteString(r.Target), d.QuoteString(string(r.Status)), d.QuoteString(r.Selection),
		d.QuoteString(r.Host), lit(d, r.PID), timeLit(d, r.StartedAt), timeLit(d, r.FinishedAt),
		lit(d, r.Succeeded), lit(d, r.Failed), lit(d, r.Skipped), nullString(d, r.Error),
	}
}

// LeaseValues renders l as literals in LeaseColumns order.
func LeaseValues(d models.Dialect, l adapters.Lease) []string {
	return []string{
		d.QuoteString(l.Table), d.QuoteString(l.RunID), d.QuoteString(l.Host), lit(d, l.PID),
		timeLit(d, l.AcquiredAt), timeLit(d, l.HeartbeatAt), timeLit(d, l.ExpiresAt),
	}
}

// VersionValues renders v as literals in VersionColumns order.
func VersionValues(d models.Dialect, v adapters.Version) []string {
	accepted := "NULL"
	if v.AcceptedFrom != "" {
		accepted = lit(d, v.Accepted)
	}
	return []string{d.QuoteString(v.Model), d.QuoteString(v.Fingerprint), d.QuoteString(v.Text), timeLit(d, v.CreatedAt),
		nullString(d, v.AcceptedFrom), timeLit(d, v.AcceptedAt), accepted}
}

// VersionFromRow reads a row selected with VersionColumns.
func VersionFromRow(row []any) (adapters.Version, error) {
	if len(row) != len(VersionColumns) {
		return adapters.Version{}, fmt.Errorf("version row has %d columns, want %d", len(row), len(VersionColumns))
	}
	return adapters.Version{Model: str(row[0]), Fingerprint: str(row[1]), Text: str(row[2]), CreatedAt: when(row[3]),
		AcceptedFrom: str(row[4]), AcceptedAt: when(row[5]), Accepted: adapters.Int(row[6])}, nil
}

// VersionsFromResult reads a Query result selected with VersionColumns.
func VersionsFromResult(res *adapters.Result) ([]adapters.Version, error) {
	out := make([]adapters.Version, 0, len(res.Rows))
	for _, row := range res.Rows {
		v, err := VersionFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// RecordFromRow reads a row selected with PartitionColumns.
func RecordFromRow(row []any) (adapters.Record, error) {
	if len(row) != len(PartitionColumns) {
		return adapters.Record{}, fmt.Errorf("ledger row has %d columns, want %d", len(row), len(PartitionColumns))
	}
	return adapters.Record{
		Model: str(row[0]), Partition: str(row[1]), State: adapters.RecordState(str(row[2])), Fingerprint: str(row[3]),
		Rows: adapters.Int(row[4]), RunID: str(row[5]), Attempts: int(adapters.Int(row[6])),
		WindowStart: when(row[7]), WindowEnd: when(row[8]), StartedAt: when(row[9]), FinishedAt: when(row[10]),
		PublishedAt: when(row[11]), Error: str(row[12]), Watermark: str(row[13]),
	}, nil
}

// RunFromRow reads a row selected with RunColumns.
func RunFromRow(row []any) (*adapters.Run, error) {
	if len(row) != len(RunColumns) {
		return nil, fmt.Errorf("run row has %d columns, want %d", len(row), len(RunColumns))
	}
	return &adapters.Run{
		ID: str(row[0]), Target: str(row[1]), Status: adapters.RunStatus(str(row[2])), Selection: str(row[3]),
		Host: str(row[4]), PID: int(adapters.Int(row[5])), StartedAt: when(row[6]), FinishedAt: when(row[7]),
		Succeeded: int(adapters.Int(row[8])), Failed: int(adapters.Int(row[9])), Skipped: int(adapters.Int(row[10])), Error: str(row[11]),
	}, nil
}

// LeaseFromRow reads a row selected with LeaseColumns.
func LeaseFromRow(row []any) (adapters.Lease, error) {
	if len(row) != len(LeaseColumns) {
		return adapters.Lease{}, fmt.Errorf("lease row has %d columns, want %d", len(row), len(LeaseColumns))
	}
	return adapters.Lease{
		Table: str(row[0]), RunID: str(row[1]), Host: str(row[2]), PID: int(adapters.Int(row[3])),
		AcquiredAt: when(row[4]), HeartbeatAt: when(row[5]), ExpiresAt: when(row[6]),
	}, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func when(v any) time.Time {
	if t, ok := v.(time.Time); ok && t.Year() > 1971 {
		return t.UTC()
	}
	return time.Time{}
}

// ValuesList renders rows of literals as "(a, b), (c, d)".
func ValuesList(rows [][]string) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = "(" + strings.Join(r, ", ") + ")"
	}
	return strings.Join(parts, ",\n  ")
}

// SeedLiteral renders one seed value of column type t.
func SeedLiteral(d models.Dialect, t models.ColumnType, v any) string {
	if tm, ok := v.(time.Time); ok {
		if t == models.TypeDate {
			return d.Date(tm)
		}
		return d.Timestamp(tm)
	}
	return lit(d, v)
}

// RecordsFromResult reads a Query result selected with PartitionColumns.
func RecordsFromResult(res *adapters.Result) ([]adapters.Record, error) {
	out := make([]adapters.Record, 0, len(res.Rows))
	for _, row := range res.Rows {
		r, err := RecordFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// modelKeys is the partitions of one model among a set of records.
type modelKeys struct {
	Model string
	Keys  []string
}

// keysByModel groups records' partition keys by model, in order of first
// appearance, for the DELETE that precedes re-inserting ledger rows.
func keysByModel(records []adapters.Record) []modelKeys {
	var out []modelKeys
	index := map[string]int{}
	for _, r := range records {
		i, ok := index[r.Model]
		if !ok {
			i = len(out)
			index[r.Model] = i
			out = append(out, modelKeys{Model: r.Model})
		}
		out[i].Keys = append(out[i].Keys, r.Partition)
	}
	return out
}

// summaryColumns is how many columns SummarizeSQL selects, in
// RecordSummary's order.
const summaryColumns = 12

// SummarizeSQL renders the query behind LedgerSummarizer.SummarizePartitions
// over table, the partitions table: bucket renders the dialect's
// expression for the first instant of a timestamp's bucket (see
// adapters.RecordSummary; NULL for NULL).
// Records of the models in q.Self are numbered with a window function (lag)
// to count SelfStale; the others are not sorted.
func SummarizeSQL(d models.Dialect, table string, bucket func(string) string, sq adapters.SummaryQuery) string {
	q := d.QuoteIdent
	isSelf := map[string]bool{}
	for _, n := range sq.Self {
		isSelf[n] = true
	}
	var plain []string
	for _, n := range sq.Models {
		if !isSelf[n] {
			plain = append(plain, n)
		}
	}
	count := func(state adapters.RecordState) string {
		return fmt.Sprintf("sum(CASE WHEN %s = %s THEN 1 ELSE 0 END)", q("state"), d.QuoteString(string(state)))
	}
	rows := fmt.Sprintf("sum(CASE WHEN %s IN (%s, %s, %s) THEN %s ELSE 0 END)", q("state"),
		d.QuoteString(string(adapters.RecordDone)), d.QuoteString(string(adapters.RecordPartial)), d.QuoteString(string(adapters.RecordFailed)), q("row_count"))
	aggregate := func(from, selfStale string, of []string) string {
		return fmt.Sprintf("SELECT %s, %s AS %s, count(*), %s, %s, %s, min(%s), max(%s), min(%s), max(%s), %s, %s FROM %s WHERE %s IN %s GROUP BY %s, %s",
			q("model"), bucket(q("window_start")), q("bucket"), count(adapters.RecordDone), count(adapters.RecordPending), count(adapters.RecordRemoved), q("fingerprint"), q("fingerprint"),
			q("started_at"), q("published_at"), rows, selfStale, from, q("model"), lit(d, anyStrings(of)), q("model"), q("bucket"))
	}
	var parts []string
	if len(plain) > 0 {
		parts = append(parts, aggregate(table, "0", plain))
	}
	if len(sq.Self) > 0 {
		prev := fmt.Sprintf("lag(%s) OVER (PARTITION BY %s ORDER BY %s)", q("published_at"), q("model"), q("window_start"))
		numbered := fmt.Sprintf("(SELECT *, CASE WHEN %s > %s AND (%s IS NULL OR %s <> %s) THEN 1 ELSE 0 END AS %s FROM %s WHERE %s IN %s) AS %s",
			prev, q("started_at"), q("published_at"), prev, q("published_at"), q("self_stale"), table, q("model"), lit(d, anyStrings(sq.Self)), q("numbered"))
		parts = append(parts, aggregate(numbered, "sum("+q("self_stale")+")", sq.Self))
	}
	return strings.Join(parts, " UNION ALL ")
}

// BucketSQL renders, for dialects with CASE, the first instant of the
// bucket holding the timestamp ts (adapters.SummaryQuery.Bucket), NULL for
// NULL; trunc renders the truncation of ts to a "year" or a "month".
func BucketSQL(d models.Dialect, sq adapters.SummaryQuery, ts string, trunc func(unit, ts string) string) string {
	var cases string
	if !sq.Yearly.IsZero() {
		cases += fmt.Sprintf(" WHEN %s < %s THEN %s", ts, d.Timestamp(sq.Yearly), trunc("year", ts))
	}
	if !sq.Recent.IsZero() {
		cases += fmt.Sprintf(" WHEN %s >= %s AND %s < %s THEN %s", ts, d.Timestamp(sq.Recent), ts, d.Timestamp(sq.RecentEnd()), d.Timestamp(sq.Recent))
	}
	if cases == "" {
		return trunc("month", ts)
	}
	return "CASE" + cases + " ELSE " + trunc("month", ts) + " END"
}

// StaleSQL renders the query that counts, per model and bucket, the
// records that read through one of q's edges an upstream record published
// after they started (and not with them): one hash join per grain, pairing
// records on their windows truncated to it. trunc renders the dialect's
// truncation of a timestamp to a grain. It returns "" when q has no edges.
func StaleSQL(d models.Dialect, table string, bucket func(string) string, trunc func(models.Grain, string) string, sq adapters.SummaryQuery) string {
	q := d.QuoteIdent
	byGrain := map[models.Grain][]adapters.Edge{}
	var grains []models.Grain
	for _, e := range sq.Edges {
		if byGrain[e.Grain] == nil {
			grains = append(grains, e.Grain)
		}
		byGrain[e.Grain] = append(byGrain[e.Grain], e)
	}
	slices.Sort(grains)
	var parts []string
	for _, g := range grains {
		pairs := make([]string, len(byGrain[g]))
		for i, e := range byGrain[g] {
			pairs[i] = fmt.Sprintf("(%s, %s)", d.QuoteString(e.Down), d.QuoteString(e.Up))
		}
		parts = append(parts, fmt.Sprintf(
			"SELECT r.%s, %s AS %s, count(*) FROM %s AS r JOIN (VALUES %s) AS e(down_model, up_model) ON r.%s = e.down_model "+
				"JOIN %s AS u ON u.%s = e.up_model AND %s = %s "+
				"WHERE u.%s > r.%s AND (r.%s IS NULL OR u.%s <> r.%s) GROUP BY r.%s, %s",
			q("model"), bucket("r."+q("window_start")), q("bucket"), table, strings.Join(pairs, ", "), q("model"),
			table, q("model"), trunc(g, "u."+q("window_start")), trunc(g, "r."+q("window_start")),
			q("published_at"), q("started_at"), q("published_at"), q("published_at"), q("published_at"), q("model"), q("bucket")))
	}
	return strings.Join(parts, " UNION ALL ")
}

// AddStale adds the counts of a StaleSQL result to sums.
func AddStale(sums []adapters.RecordSummary, res *adapters.Result) {
	at := map[string]int{}
	for i, s := range sums {
		at[s.Model+"\x00"+s.Bucket.String()] = i
	}
	for _, row := range res.Rows {
		if i, ok := at[str(row[0])+"\x00"+when(row[1]).String()]; ok {
			sums[i].Stale += adapters.Int(row[2])
		}
	}
}

// RecordQuerySQL renders the query behind LedgerSummarizer.QueryPartitions
// over table, the partitions table: a hash join with the models asked for
// and the instant each is asked from.
func RecordQuerySQL(d models.Dialect, table string, rq adapters.RecordQuery) string {
	q := d.QuoteIdent
	names := slices.Sorted(maps.Keys(rq.Since))
	rows := make([]string, 0, len(rq.All)+len(names))
	for _, n := range rq.All {
		rows = append(rows, fmt.Sprintf("(%s, CAST(NULL AS %s))", d.QuoteString(n), d.ColumnType(models.TypeTimestamp)))
	}
	for _, n := range names {
		rows = append(rows, fmt.Sprintf("(%s, %s)", d.QuoteString(n), d.Timestamp(rq.Since[n])))
	}
	cols := make([]string, len(PartitionColumns))
	for i, c := range PartitionColumns {
		cols[i] = "p." + q(c.Name)
	}
	if len(rows) == 0 {
		return fmt.Sprintf("SELECT %s FROM %s AS p WHERE 1 = 0", strings.Join(cols, ", "), table)
	}
	return fmt.Sprintf("SELECT %s FROM %s AS p JOIN (VALUES %s) AS s(model_name, since) ON p.%s = s.model_name "+
		"WHERE s.since IS NULL OR p.%s IS NULL OR p.%s > s.since",
		strings.Join(cols, ", "), table, strings.Join(rows, ", "), q("model"), q("window_end"), q("window_end"))
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// SummariesFromResult reads a Query result of SummarizeSQL.
func SummariesFromResult(res *adapters.Result) ([]adapters.RecordSummary, error) {
	return summariesFromResult(res, summaryColumns)
}

// KeptSummaryColumns name the columns of a table of kept summaries (a
// warehouse's cache of them, next to its ledger) that hold the summaries,
// in the order KeptSummariesFromResult reads them.
var KeptSummaryColumns = []string{"model", "bucket", "records", "done", "pending", "removed", "min_fingerprint", "max_fingerprint",
	"min_started", "max_published", "row_count", "self_stale", "stale"}

// KeptSummariesFromResult reads summaries as SummariesFromResult does,
// each row followed by its Stale count: summaries with their pairing's
// counts, as a warehouse that keeps them stores them.
func KeptSummariesFromResult(res *adapters.Result) ([]adapters.RecordSummary, error) {
	return summariesFromResult(res, summaryColumns+1)
}

func summariesFromResult(res *adapters.Result, columns int) ([]adapters.RecordSummary, error) {
	out := make([]adapters.RecordSummary, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) != columns {
			return nil, fmt.Errorf("summary row has %d columns, want %d", len(row), columns)
		}
		s := adapters.RecordSummary{Model: str(row[0]), Bucket: when(row[1]), Records: adapters.Int(row[2]), Done: adapters.Int(row[3]),
			Pending: adapters.Int(row[4]), Removed: adapters.Int(row[5]), MinFingerprint: str(row[6]), MaxFingerprint: str(row[7]),
			MinStarted: when(row[8]), MaxPublished: when(row[9]), Rows: adapters.Int(row[10]), SelfStale: adapters.Int(row[11])}
		if columns > summaryColumns {
			s.Stale = adapters.Int(row[summaryColumns])
		}
		out = append(out, s)
	}
	return out, nil
}

// LedgerTablesSQL renders the CREATE TABLE IF NOT EXISTS of each of the
// ledger's tables in schema, with the dialect's types, for warehouses
// whose tables need nothing more (the schema itself is the caller's).
func LedgerTablesSQL(d models.Dialect, schema string) []string {
	create := func(name string, cols []Column) string {
		defs := make([]string, len(cols))
		for i, c := range cols {
			defs[i] = d.QuoteIdent(c.Name) + " " + d.ColumnType(c.Type)
			if c.NotNull {
				defs[i] += " NOT NULL"
			}
		}
		return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)", models.Relation{Schema: schema, Name: name}.Quote(d), strings.Join(defs, ",\n  "))
	}
	return []string{
		create(PartitionsTable, PartitionColumns),
		create(RunsTable, RunColumns),
		create(LeasesTable, LeaseColumns),
		create(VersionsTable, VersionColumns),
	}
}

// ReplaceRecordsSQL renders the statements that replace the ledger records
// of records' partitions in the partitions table of schema, for
// warehouses with transactions to run them in: the DELETEs of every
// model's partitions, then the INSERTs, at most chunk partitions each.
func ReplaceRecordsSQL(d models.Dialect, schema string, records []adapters.Record, chunk int) []string {
	if len(records) == 0 {
		return nil
	}
	table := models.Relation{Schema: schema, Name: PartitionsTable}.Quote(d)
	rows := make([][]string, len(records))
	for i, r := range records {
		rows[i] = RecordValues(d, r)
	}
	stmts := DeleteRecordsSQL(d, schema, records, chunk, func(keys []string) string {
		lits := make([]string, len(keys))
		for i, k := range keys {
			lits[i] = d.QuoteString(k)
		}
		return strings.Join(lits, ", ")
	})
	for part := range slices.Chunk(rows, chunk) {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES\n  %s", table, ColumnNames(d, PartitionColumns), ValuesList(part)))
	}
	return stmts
}

// DeleteRecordsSQL renders the DELETEs of the ledger records of records'
// partitions from the partitions table of schema, at most chunk partitions
// each: partition_key IN (in(keys)), where in renders a list of the keys'
// literals or a subquery of them.
func DeleteRecordsSQL(d models.Dialect, schema string, records []adapters.Record, chunk int, in func(keys []string) string) []string {
	table := models.Relation{Schema: schema, Name: PartitionsTable}.Quote(d)
	var stmts []string
	for _, mk := range keysByModel(records) {
		for keys := range slices.Chunk(mk.Keys, chunk) {
			stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE %s = %s AND %s IN (%s)", table,
				d.QuoteIdent("model"), d.QuoteString(mk.Model), d.QuoteIdent("partition_key"), in(keys)))
		}
	}
	return stmts
}

// LedgerModelsSQL renders the query behind adapters.Pruner.LedgerModels
// over table, the partitions table (final: its FINAL, or "").
func LedgerModelsSQL(d models.Dialect, table, final string) string {
	return fmt.Sprintf("SELECT DISTINCT %s FROM %s%s WHERE %s <> %s ORDER BY %s", d.QuoteIdent("model"), table, final,
		d.QuoteIdent("state"), d.QuoteString(string(adapters.RecordRemoved)), d.QuoteIdent("model"))
}

// Strings reads the first column of a result as strings.
func Strings(res *adapters.Result) []string {
	out := make([]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return out
}
