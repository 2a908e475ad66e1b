// Package adapters defines the contract between refill's runner and a
// warehouse. Each subpackage (duckdb, clickhouse, snowflake) implements it
// with one driver; the runner only ever sees this interface.
//
// The contract in one paragraph: the runner asks an adapter to Stage a
// rendered query into a fresh staging table, inspects the stage with Query
// (verification and audits), then asks it to Publish one or more stages.
// Publish replaces exactly the stage's Window of the target table with the
// staged rows and writes the partitions' ledger records, atomically where
// the warehouse allows (see Info.Guarantee). Everything an adapter renders
// comes from its Dialect, which does no I/O.
//
// An Adapter plays four roles, each an interface of its own: a Querier
// reads, a Stager computes stages, a Publisher swaps them into targets,
// and a Ledger keeps the records. What an engine may do beyond them is an
// optional interface of one of those roles, found by a type assertion:
//
//	role       optional             duckdb  clickhouse  snowflake
//	querier    Classifier           yes     yes         yes
//	querier    Estimator            yes     yes         yes
//	querier    RowCounter           yes     yes         yes
//	querier    ShapeDescriber       yes     yes         -
//	querier    Differ               yes     yes         yes
//	querier    CrossReader          yes     yes         -
//	querier    PartStater           -       yes         -
//	stager     StageSummarizer      -       yes         -
//	stager     StageCleaner         yes     yes         yes
//	stager     Overlayer            yes     yes         yes
//	publisher  Rebuilder            yes     yes         yes
//	publisher  DirectPublisher      yes     -           -
//	publisher  Seeder               yes     yes         yes
//	publisher  Pruner               yes     yes         yes
//	ledger     Deferrer             -       yes         -
//	ledger     LedgerSummarizer     yes     yes         yes
//
// (runner/enginetest's TestCapabilities checks this table against the
// engines.)
//
// To add an engine:
//
//  1. Create adapters/<engine>, importing its driver and no other
//     engine's; only it imports the driver.
//  2. Write its models.Dialect (dialect.go): quoting, literals, the date
//     helpers, Fit; no I/O. Pin its SQL with a golden of the example
//     project (adaptertest.RenderShop).
//  3. Implement Adapter: Querier, Stager, Publisher and Ledger, with every
//     statement going through one function that returns its failures as
//     ExecErrors (and, where the warehouse says where, StatementErrors).
//     Write Info.Guarantee as what a crash at any moment of a swap leaves.
//  4. Implement the optional interfaces the warehouse allows; the runner
//     refuses, or does without, the others.
//  5. Export Engine() (an adapters.Engine) and add its row to
//     cmd/refill/targets.go.
//  6. Run adaptertest.RunTests, the fault sweep (adaptertest.Faults,
//     through adapters/recorder) and runner/enginetest against a real
//     server, skipped with a reason when its variable is unset, and add
//     the server to .ci/run.
package adapters

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// Adapter is a connection to one warehouse target. Methods may be called
// concurrently; an adapter serializes internally whatever its warehouse
// cannot do in parallel (DuckDB's swaps, ClickHouse's swaps per table).
type Adapter interface {
	// Dialect returns the warehouse's SQL dialect.
	Dialect() models.Dialect
	// Info describes the adapter's capabilities and guarantees.
	Info() Info

	Querier
	Stager
	Publisher
	Ledger

	// Close releases the connection.
	Close() error
}

// Querier reads the warehouse: queries, and the columns of queries and
// tables.
type Querier interface {
	// Query runs a read-only query (verification, audits, watermarks) and
	// returns its rows with values normalized as described on Result.
	Query(ctx context.Context, query string, tag Tag) (*Result, error)
	// Describe returns the columns query returns, without running it.
	Describe(ctx context.Context, query string, tag Tag) ([]TableColumn, error)
	// Columns returns table's columns in order, or nil when it does not
	// exist.
	Columns(ctx context.Context, table models.Relation) ([]TableColumn, error)
	// Fit says how the values of column type from fit a column of type to
	// (types as Describe and Columns name them).
	Fit(from, to string) Fit
}

// Stager computes a model's rows for a window into a staging table, which
// nothing reads but the runner until it is published.
type Stager interface {
	// Stage runs req.Query into a new staging table and returns it. A
	// failed Stage leaves no staging table behind and never touches the
	// target.
	Stage(ctx context.Context, req StageRequest) (*Stage, error)
	// DropStage drops a staging table; dropping one already gone succeeds.
	DropStage(ctx context.Context, s *Stage) error
}

// Publisher changes targets: it swaps stages in and creates tables.
type Publisher interface {
	// Publish replaces, for each swap, the rows of the target table inside
	// the stage's Window with the staged rows, creating the target from the
	// stage's schema if it does not exist, and writes each swap's ledger
	// records. With Info.MultiTable, all swaps commit together or not at all;
	// otherwise Publish accepts swaps of one target table only. On error the
	// targets and the ledger are as they were, except as Info.Guarantee
	// states. Publish must be idempotent: publishing the same stage twice
	// leaves the same rows. A swap's Change alters the target's columns
	// first, in the same transaction where the warehouse allows.
	Publish(ctx context.Context, swaps []Swap) error
	// CreateTable creates table with columns (declared, in the dialect's
	// types) and m's table options, unless it exists.
	CreateTable(ctx context.Context, table models.Relation, m *models.Model, columns []TableColumn) error
}

// What an adapter may do beyond the contract, each found by a type
// assertion, as database/sql/driver does: the runner refuses, or does
// without, what an adapter lacks.

// Rebuilder is implemented by adapters that can replace a whole table:
// full refreshes and on_schema_change: rebuild need it.
type Rebuilder interface {
	// Rebuild replaces the whole of target with the rows of stages, which
	// hold every partition of the model, and replaces all the model's
	// ledger records with records. The new table has columns when given
	// (declared), else the stages' columns. A failure leaves the old
	// table, as Info.Guarantee states.
	Rebuild(ctx context.Context, target models.Relation, stages []*Stage, records []Record, columns []TableColumn) error
}

// Seeder is implemented by adapters that can load seeds: refill seed, and
// the given rows of unit tests, need it.
type Seeder interface {
	// LoadSeed replaces table with the seed's rows, atomically where the
	// warehouse allows.
	LoadSeed(ctx context.Context, seed *models.Seed, table models.Relation) error
}

// StageCleaner is implemented by adapters that can find the tables crashed
// runs left behind; without it they stay.
type StageCleaner interface {
	// CleanStages drops the staging tables, swap tables and overlay views
	// (see StageName) of every run for which dead returns true, given the
	// run's token (RunToken). Tables whose names StageName did not make
	// are left alone.
	CleanStages(ctx context.Context, dead func(runToken string) bool) error
}

// Pruner is implemented by adapters that can clear away what a model the
// project no longer has left in the warehouse: refill prune needs it.
type Pruner interface {
	// LedgerModels returns, sorted, the names of the models of which the
	// ledger holds a record not removed (RecordRemoved). A ledger that does
	// not exist yet holds none.
	LedgerModels(ctx context.Context) ([]string, error)
	// DropTable drops a model's table (on a cluster, on every node, with
	// its shards' tables); dropping one that does not exist succeeds.
	DropTable(ctx context.Context, table models.Relation) error
}

// Classifier is implemented by adapters that know which of their
// warehouse's errors are worth retrying; see Transient.
type Classifier interface {
	// Transient reports whether err is worth retrying: lost connections,
	// timeouts, transaction conflicts, overload. SQL errors are not.
	Transient(err error) bool
}

// CrossReader is implemented by adapters whose queries can read the
// tables of another target of the same engine: deferral (--defer), where
// models a selection does not build are read from another target's tables
// (production's) rather than this one's.
type CrossReader interface {
	// ReadFrom makes other's tables readable by this adapter's queries
	// and returns how they name other's relation r; an error says why
	// they cannot (another server, an in-memory database).
	ReadFrom(ctx context.Context, other Adapter) (func(r models.Relation) string, error)
}

// ShapeDescriber is implemented by adapters whose Describe gives the same
// columns, names and types, to two queries that differ only in date and
// timestamp literals as their Dialect renders them: no column's type
// depends on such a literal's value. The runner then describes a model's
// query once per run rather than once per partition. (Snowflake may type
// a number computed from constants by its digits, NUMBER(p, s), which
// nothing here can check; it does not claim this.)
type ShapeDescriber interface {
	// DescribesShapes marks the adapter; it does nothing.
	DescribesShapes()
}

// Transient reports whether err, from a, is worth retrying: what a's
// Classifier says, or, without one, whether err is a *TransientError.
func Transient(a Adapter, err error) bool {
	if c, ok := a.(Classifier); ok {
		return c.Transient(err)
	}
	return IsTransient(err)
}

// LoadSeed loads seed into table with a, or fails with ErrNotSupported
// when a cannot load seeds.
func LoadSeed(ctx context.Context, a Adapter, seed *models.Seed, table models.Relation) error {
	s, ok := a.(Seeder)
	if !ok {
		return fmt.Errorf("loading %s: the %s adapter cannot load seeds: %w", table, a.Info().Name, ErrNotSupported)
	}
	return s.LoadSeed(ctx, seed, table)
}

// Info describes what an adapter can do and what it guarantees.
type Info struct {
	Name string // duckdb, clickhouse, snowflake
	// Guarantee says, in a sentence, what a failure or crash at any moment
	// of a swap leaves behind. plan prints it.
	Guarantee string
	// MultiTable is true when Publish can commit swaps of several tables in
	// one transaction (--publish together).
	MultiTable bool
	// DefaultConcurrency is how many partitions to compute at once unless
	// the user says otherwise.
	DefaultConcurrency int
}

// Tag identifies the work a statement does, for warehouses that can label
// queries (ClickHouse query_id, Snowflake QUERY_TAG).
type Tag struct {
	RunID     string
	Model     string
	Partition string // a key, or "first..last" for a batch
	Step      string // stage, verify, audit, publish, ledger
}

// JSON renders t as the object warehouses file with a statement (Snowflake's
// QUERY_TAG, ClickHouse's log_comment), such as {"app":"refill",
// "run_id":"...","model":"marts.daily","partition":"2024-01-02",
// "step":"publish"}, with empty fields left out, so that cost can be
// attributed to a backfill. With max > 0 the fields are shortened (ending
// in …) until the object is at most max characters.
func (t Tag) JSON(max int) string {
	type object struct {
		App       string `json:"app"`
		RunID     string `json:"run_id,omitempty"`
		Model     string `json:"model,omitempty"`
		Partition string `json:"partition,omitempty"`
		Step      string `json:"step,omitempty"`
	}
	// JSON escaping can double a field's length: shorten the fields until
	// the object fits.
	for limit := 400; ; limit /= 2 {
		cut := func(s string) string {
			if r := []rune(s); max > 0 && len(r) > limit {
				return string(r[:limit]) + "…"
			}
			return s
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(object{"refill", cut(t.RunID), cut(t.Model), cut(t.Partition), cut(t.Step)}) // strings only: cannot fail
		if out := strings.TrimSuffix(b.String(), "\n"); max <= 0 || len([]rune(out)) <= max || limit == 0 {
			return out
		}
	}
}

// StageRequest asks for one staging table.
type StageRequest struct {
	Model  *models.Model
	Target models.Relation // the model's table, schema resolved
	Query  string          // the rendered SELECT
	Window Window          // the rows the stage will replace
	Tag    Tag
	// Change is the change of the target's columns the stage will be
	// published with (nil for none); adapters whose stages copy the
	// target's structure apply it to the stage too.
	Change *SchemaChange
	// Rebuild says the stage is for a new table that replaces the target
	// (Adapter.Rebuild): its columns are the query's, not the target's.
	Rebuild bool
	// Create, for DirectPublisher.PublishQuery, are the columns of the
	// target to create, in the same transaction, when it does not exist.
	Create []TableColumn
	// Columns, when set, are Query's columns as Describe named them for
	// the runner's schema check (which describes a model's query once per
	// run on a ShapeDescriber): an adapter that needs them takes them
	// rather than describing the query again.
	Columns []TableColumn
}

// TableColumn is a column of a table or of a query's result, with its type
// as the warehouse names it (DECIMAL(18,2), Nullable(DateTime),
// NUMBER(38,2), ...).
type TableColumn struct {
	Name string
	Type string
}

// Fit says how the values of one column type fit a column of another.
type Fit int

// How values fit.
const (
	// FitSame: the same type.
	FitSame Fit = iota
	// FitLossless: every value is stored unchanged (a wider type), or the
	// warehouse refuses a value that does not fit (a checked narrowing).
	FitLossless
	// FitLossy: values would be truncated, rounded, wrapped or
	// reinterpreted without an error.
	FitLossy
)

// SchemaChange alters a target's columns before a publication.
type SchemaChange struct {
	Add   []TableColumn // new columns, appended in order
	Drop  []string      // columns to drop
	Widen []TableColumn // columns whose type becomes Type
}

// Empty reports whether c changes nothing.
func (c *SchemaChange) Empty() bool {
	return c == nil || len(c.Add) == 0 && len(c.Drop) == 0 && len(c.Widen) == 0
}

// Stage is a staging table holding one computed window.
type Stage struct {
	Relation models.Relation // where the staged rows are
	Target   models.Relation
	Model    *models.Model
	Window   Window
	Tag      Tag
	// Columns, when the adapter knows them, are the columns SELECT * from
	// the stage returns, with their types as the driver names them; the
	// runner then need not probe the stage for them.
	Columns []TableColumn
	// State is the adapter's own bookkeeping for this stage.
	State any
}

// Swap is one stage to publish, with the ledger records to write with it.
type Swap struct {
	Stage   *Stage
	Records []Record
	// Change alters the target's columns before the rows are swapped in.
	// Adapters apply it idempotently (a column already added is not added
	// again), as concurrent units of one model carry the same change.
	Change *SchemaChange
}

// Result is the rows of a Query. Values are nil, bool, int64, uint64 (only
// beyond int64's range), float64, string or time.Time (UTC).
type Result struct {
	Columns []string
	// Types are the warehouse's names of the columns' types, as the driver
	// reports them (DATE, Nullable(DateTime), TIMESTAMP_NTZ, ...).
	Types []string
	Rows  [][]any
}

// Window selects the rows of a table that a publication replaces: a
// half-open time range of the partition column, a list of its values, or
// the whole table.
type Window struct {
	Column string // the partition column; empty for the whole table
	// A time window, in UTC. Timestamp selects TIMESTAMP literals rather
	// than DATE; Location is the zone whose calendar dates DATE literals use.
	Start, End time.Time
	Timestamp  bool
	Location   *time.Location
	// A list window.
	Values []any
}

// Whole reports whether w is a whole-table window.
func (w Window) Whole() bool { return w.Column == "" }

// Bounds renders the window's bounds as literals of d.
func (w Window) Bounds(d models.Dialect) (start, end string) {
	return w.Literal(d, w.Start), w.Literal(d, w.End)
}

// Literal renders instant t as a literal of the window's type: a TIMESTAMP,
// or the DATE of t in the window's location.
func (w Window) Literal(d models.Dialect, t time.Time) string {
	if w.Timestamp {
		return d.Timestamp(t)
	}
	loc := w.Location
	if loc == nil {
		loc = time.UTC
	}
	return d.Date(t.In(loc))
}

// Predicate renders the condition that selects the window's rows. A whole
// table window renders as 1 = 1.
func (w Window) Predicate(d models.Dialect) string {
	col := d.QuoteIdent(w.Column)
	switch {
	case w.Whole():
		return "1 = 1"
	case w.Values != nil:
		list, err := models.Literal(d, w.Values)
		if err != nil {
			panic(err) // values were validated when the model loaded
		}
		return col + " IN " + list
	}
	start, end := w.Bounds(d)
	return col + " >= " + start + " AND " + col + " < " + end
}

// ModelWindow returns the window of model m covering parts, which must be
// consecutive partitions of m.
func ModelWindow(m *models.Model, parts []models.Partition) Window {
	switch m.Kind() {
	case models.TimePartitioned:
		return Window{Column: m.Config.PartitionBy, Start: parts[0].Start, End: parts[len(parts)-1].End,
			Timestamp: m.Config.TimestampWindow, Location: m.Config.Location}
	case models.ListPartitioned:
		values := make([]any, len(parts))
		for i, p := range parts {
			values[i] = p.Value
		}
		return Window{Column: m.Config.PartitionBy, Values: values}
	}
	return Window{}
}

// Deferrer is implemented by adapters that write a publication's ledger
// records after its swap, in batches, rather than in the swap's
// transaction (ClickHouse, whose swaps are not transactions). Until its
// records are written, a published stage is kept: the stages a dead run
// left behind name what it may have published without recording it (the
// partitions of each stage's window, WindowTag), and the runner records
// those partitions pending before anything else reads the ledger.
type Deferrer interface {
	// Flush writes the records of every publication so far.
	Flush(ctx context.Context) error
	// Unrecorded lists, by name, the staging tables (KindStage) of the
	// runs whose tokens dead reports.
	Unrecorded(ctx context.Context, dead func(runToken string) bool) ([]string, error)
}

// StageSummarizer is implemented by adapters that can count a stage's rows
// from the warehouse's metadata, without scanning them (ClickHouse, whose
// parts record their row counts and the range of their partition key).
type StageSummarizer interface {
	// SummarizeStage returns groups of the stage's rows, each with its
	// count and the least and greatest value of the window's column; ok is
	// false when the metadata cannot tell, and the runner scans instead.
	SummarizeStage(ctx context.Context, st *Stage) (groups []RowGroup, ok bool, err error)
}

// RowGroup is some rows of a stage: how many, and the range of their
// partition column's values (as Result documents values).
type RowGroup struct {
	Rows   int64
	Lo, Hi any
}

// Overlayer is implemented by adapters that can show a table as it will
// read before it is published. Overlay creates a view of target as it
// will read once stages are published: its rows outside the stages'
// windows plus the staged rows. Downstream models of a run publishing
// together read upstream models through it, and a rebuild of a model
// reading its own past reads its earlier partitions through one.
type Overlayer interface {
	// With replace, the view holds the staged rows only: the target as a
	// full refresh (Rebuild) will leave it.
	Overlay(ctx context.Context, target models.Relation, stages []*Stage, replace bool) (models.Relation, error)
	// DropOverlay drops a view Overlay created; dropping one gone succeeds.
	DropOverlay(ctx context.Context, view models.Relation) error
}

// PartStater is implemented by adapters whose tables keep, per physical
// partition, a state that changes whenever the partition's rows do and
// stays the same otherwise (ClickHouse's parts: an insert or a mutation
// makes new block numbers or data versions, a merge keeps them). A
// scheduled run proves the partitions of a tracked source unchanged from
// it since the last check, and reads only the others.
type PartStater interface {
	// PartStates returns table's physical partitions, each with its state
	// and the least and greatest value of column its rows hold; nil when
	// the table's partitions say nothing of column (the table is not
	// partitioned by it alone among its time columns, or keeps no parts).
	PartStates(ctx context.Context, table models.Relation, column string) ([]PartState, error)
}

// PartState is one physical partition of a table (PartStater).
type PartState struct {
	ID    string
	State string
	// Min and Max are the least and greatest value of the column its rows
	// hold; for a DATE column, midnights UTC of the least and greatest day.
	Min, Max time.Time
}

// RowCounter is implemented by adapters that can count tables' rows
// cheaply, from the warehouse's metadata. The runner compares the counts
// with the ledger to notice tables changed outside refill.
type RowCounter interface {
	// CountRows returns the number of rows of each of tables that exists,
	// keyed by the table's Relation.String(); -1 where the warehouse cannot
	// count them reliably (engines that merge rows away). Tables that do
	// not exist are absent from the result.
	CountRows(ctx context.Context, tables []models.Relation) (map[string]int64, error)
}

// Estimator is implemented by adapters that can say, without running a
// query, roughly how much it reads (from EXPLAIN or system tables).
type Estimator interface {
	Estimate(ctx context.Context, query string) (Estimate, error)
}

// Estimate is how much a query is expected to read; -1 means unknown.
type Estimate struct {
	Rows  int64
	Bytes int64
	Note  string // where the figures come from
}

// DirectPublisher is implemented by adapters whose warehouse can compute,
// check and publish a unit in one transaction, writing its rows once:
// PublishQuery deletes req.Window from req.Target and inserts the rows of
// req.Query, failing with an error wrapping ErrOutsideWindow (and writing
// nothing) when a row lies outside the window; it then groups the inserted
// rows as SummarizeStage does (with one partition, one group of all the
// rows with nil bounds may do), asks records for the ledger records of
// those counts, and writes them before it commits. When records fails,
// nothing is written and its error is returned. A missing target is
// created from req.Create in the same transaction.
// The runner publishes this way only units that need no stage: no audits,
// no change of the target's columns, not published together.
type DirectPublisher interface {
	PublishQuery(ctx context.Context, req StageRequest, partitions int, records func(groups []RowGroup) ([]Record, error)) error
}

// ErrOutsideWindow reports a row of a direct publication outside its
// window; the runner stages the unit to say which rows.
var ErrOutsideWindow = errors.New("a row lies outside the window")
