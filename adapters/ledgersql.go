package adapters

import (
	"fmt"
	"strings"
	"time"

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

// RecordValues renders r as literals in PartitionColumns order.
func RecordValues(d models.Dialect, r Record) []string {
	rows := "NULL"
	if r.State == StateDone || r.Rows > 0 {
		rows = lit(d, r.Rows)
	}
	return []string{
		d.QuoteString(r.Model), d.QuoteString(r.Partition), d.QuoteString(string(r.State)),
		d.QuoteString(r.Fingerprint), rows, d.QuoteString(r.RunID), lit(d, r.Attempts),
		timeLit(d, r.WindowStart), timeLit(d, r.WindowEnd), timeLit(d, r.StartedAt), timeLit(d, r.FinishedAt),
		timeLit(d, r.PublishedAt), nullString(d, r.Error), nullString(d, r.Watermark),
	}
}

// RunValues renders r as literals in RunColumns order.
func RunValues(d models.Dialect, r *Run) []string {
	return []string{
		d.QuoteString(r.ID), d.QuoteString(r.Target), d.QuoteString(string(r.Status)), d.QuoteString(r.Selection),
		d.QuoteString(r.Host), lit(d, r.PID), timeLit(d, r.StartedAt), timeLit(d, r.FinishedAt),
		lit(d, r.Succeeded), lit(d, r.Failed), lit(d, r.Skipped), nullString(d, r.Error),
	}
}

// LeaseValues renders l as literals in LeaseColumns order.
func LeaseValues(d models.Dialect, l Lease) []string {
	return []string{
		d.QuoteString(l.Table), d.QuoteString(l.RunID), d.QuoteString(l.Host), lit(d, l.PID),
		timeLit(d, l.AcquiredAt), timeLit(d, l.HeartbeatAt), timeLit(d, l.ExpiresAt),
	}
}

// VersionValues renders v as literals in VersionColumns order.
func VersionValues(d models.Dialect, v Version) []string {
	accepted := "NULL"
	if v.AcceptedFrom != "" {
		accepted = lit(d, v.Accepted)
	}
	return []string{d.QuoteString(v.Model), d.QuoteString(v.Fingerprint), d.QuoteString(v.Text), timeLit(d, v.CreatedAt),
		nullString(d, v.AcceptedFrom), timeLit(d, v.AcceptedAt), accepted}
}

// VersionFromRow reads a row selected with VersionColumns.
func VersionFromRow(row []any) (Version, error) {
	if len(row) != len(VersionColumns) {
		return Version{}, fmt.Errorf("version row has %d columns, want %d", len(row), len(VersionColumns))
	}
	return Version{Model: str(row[0]), Fingerprint: str(row[1]), Text: str(row[2]), CreatedAt: when(row[3]),
		AcceptedFrom: str(row[4]), AcceptedAt: when(row[5]), Accepted: Int(row[6])}, nil
}

// VersionsFromResult reads a Query result selected with VersionColumns.
func VersionsFromResult(res *Result) ([]Version, error) {
	out := make([]Version, 0, len(res.Rows))
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
func RecordFromRow(row []any) (Record, error) {
	if len(row) != len(PartitionColumns) {
		return Record{}, fmt.Errorf("ledger row has %d columns, want %d", len(row), len(PartitionColumns))
	}
	return Record{
		Model: str(row[0]), Partition: str(row[1]), State: State(str(row[2])), Fingerprint: str(row[3]),
		Rows: Int(row[4]), RunID: str(row[5]), Attempts: int(Int(row[6])),
		WindowStart: when(row[7]), WindowEnd: when(row[8]), StartedAt: when(row[9]), FinishedAt: when(row[10]),
		PublishedAt: when(row[11]), Error: str(row[12]), Watermark: str(row[13]),
	}, nil
}

// RunFromRow reads a row selected with RunColumns.
func RunFromRow(row []any) (*Run, error) {
	if len(row) != len(RunColumns) {
		return nil, fmt.Errorf("run row has %d columns, want %d", len(row), len(RunColumns))
	}
	return &Run{
		ID: str(row[0]), Target: str(row[1]), Status: RunStatus(str(row[2])), Selection: str(row[3]),
		Host: str(row[4]), PID: int(Int(row[5])), StartedAt: when(row[6]), FinishedAt: when(row[7]),
		Succeeded: int(Int(row[8])), Failed: int(Int(row[9])), Skipped: int(Int(row[10])), Error: str(row[11]),
	}, nil
}

// LeaseFromRow reads a row selected with LeaseColumns.
func LeaseFromRow(row []any) (Lease, error) {
	if len(row) != len(LeaseColumns) {
		return Lease{}, fmt.Errorf("lease row has %d columns, want %d", len(row), len(LeaseColumns))
	}
	return Lease{
		Table: str(row[0]), RunID: str(row[1]), Host: str(row[2]), PID: int(Int(row[3])),
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
func RecordsFromResult(res *Result) ([]Record, error) {
	out := make([]Record, 0, len(res.Rows))
	for _, row := range res.Rows {
		r, err := RecordFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ModelKeys is the partitions of one model among a set of records.
type ModelKeys struct {
	Model string
	Keys  []string // as string literals of the dialect
}

// KeysByModel groups records' partition keys by model, in order of first
// appearance, for the DELETE that precedes re-inserting ledger rows.
func KeysByModel(d models.Dialect, records []Record) []ModelKeys {
	var out []ModelKeys
	index := map[string]int{}
	for _, r := range records {
		i, ok := index[r.Model]
		if !ok {
			i = len(out)
			index[r.Model] = i
			out = append(out, ModelKeys{Model: r.Model})
		}
		out[i].Keys = append(out[i].Keys, d.QuoteString(r.Partition))
	}
	return out
}
