package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// TableOptions are the engine clauses of a table refill creates.
type TableOptions struct {
	Engine      string // e.g. MergeTree()
	PartitionBy string // empty: no PARTITION BY (one partition, "all")
	OrderBy     string
	Settings    string // appended as SETTINGS ...
	// ShardingKey is the sharding key of the Distributed table over the
	// table, on a sharded cluster; not part of Clauses.
	ShardingKey string
}

// modelTableOptions returns the table options of m (its clickhouse:
// block, see parseBlock) with defaults: engine MergeTree(); PARTITION BY
// toYYYYMMDD(col) for hour grains, toYYYYMM(col) for day, week and month,
// toYear(col) for year, the column itself for list models and nothing for
// whole tables; ORDER BY the partition column, or tuple(). When the
// partition column may be Nullable (ClickHouse refuses Nullable sorting
// and partition keys) the default keys use assumeNotNull(col).
// (Verification refuses staged rows whose partition column is NULL.)
func modelTableOptions(d Dialect, m *models.Model, nullable bool) (TableOptions, error) {
	var c models.Config
	if m != nil {
		c = m.Config
	}
	o, err := parseBlock(blockOf(m))
	if err != nil {
		return TableOptions{}, err
	}
	if o.Engine == "" {
		o.Engine = "MergeTree()"
	}
	col := ""
	if c.PartitionBy != "" {
		col = d.QuoteIdent(c.PartitionBy)
		if nullable {
			col = "assumeNotNull(" + col + ")"
		}
	}
	if o.PartitionBy == "" && col != "" {
		switch {
		case c.Values != nil:
			o.PartitionBy = col
		case c.Grain == models.Hour:
			o.PartitionBy = "toYYYYMMDD(" + col + ")"
		case c.Grain == models.Year:
			o.PartitionBy = "toYear(" + col + ")"
		case c.Grain != 0:
			o.PartitionBy = "toYYYYMM(" + col + ")"
		}
	}
	if o.OrderBy == "" {
		o.OrderBy = "tuple()"
		if col != "" {
			o.OrderBy = col
		}
	}
	return o, nil
}

// Clauses renders ENGINE = ... PARTITION BY ... ORDER BY ... SETTINGS ....
func (o TableOptions) Clauses() string {
	s := "ENGINE = " + o.Engine
	if o.PartitionBy != "" {
		s += " PARTITION BY " + o.PartitionBy
	}
	s += " ORDER BY " + o.OrderBy
	if o.Settings != "" {
		s += " SETTINGS " + o.Settings
	}
	return s
}

// subquery wraps a model's query on lines of its own, so a trailing --
// comment cannot swallow the closing parenthesis.
func subquery(query string) string { return "(\n" + query + "\n)" }

// createStageSQL renders the stage of a model whose table does not exist
// yet: CREATE TABLE ... AS SELECT, with the model's table options. Publish
// creates the target from the stage, so a stage that fails verification
// never creates the target.
func createStageSQL(d Dialect, stage models.Relation, o TableOptions, query string) string {
	return fmt.Sprintf("CREATE TABLE %s %s AS SELECT * FROM %s", stage.Quote(d), o.Clauses(), subquery(query))
}

// stageIntoStatements render the stage of a model whose table exists: a
// table like the target (same columns, engine, partition key) and an
// INSERT of the query's columns by name, in the target's order.
func stageIntoStatements(d Dialect, stage, target models.Relation, columns []string, query string) []string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = d.QuoteIdent(c)
	}
	list := strings.Join(names, ", ")
	return []string{
		fmt.Sprintf("CREATE TABLE %s AS %s", stage.Quote(d), target.Quote(d)),
		fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", stage.Quote(d), list, list, subquery(query)),
	}
}

// createStageLikeSQL renders, in one statement, the stage of a model whose
// table exists and has only ordinary columns: a table with the target's
// engine clause (so the same partition key, sorting key and settings, as
// REPLACE PARTITION needs) created from the query's columns cast to the
// target's types, in the target's order.
func createStageLikeSQL(d Dialect, stage models.Relation, engine string, columns []adapters.TableColumn, query string) string {
	exprs := make([]string, len(columns))
	for i, c := range columns {
		q := d.QuoteIdent(c.Name)
		exprs[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", q, c.Type, q)
	}
	return fmt.Sprintf("CREATE TABLE %s %s AS SELECT %s FROM %s", stage.Quote(d), engine, strings.Join(exprs, ", "), subquery(query))
}

// Stage computes req.Query into a new MergeTree table in StageSchema
// whose name starts with adapters.StagePrefix(req.Target). When the
// target exists the stage copies its structure and partition key, and the
// query's columns are inserted by name; its columns must be the target's
// (a target column with a DEFAULT may be missing). Otherwise the stage is
// created from the query with the model's table options. A failed Stage
// drops what it created.
func (a *Adapter) Stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	if req.Target.Database != "" {
		return nil, fmt.Errorf("%s: ClickHouse tables are named database.table, not database.schema.table", req.Target)
	}
	st, err := a.stage(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("staging %s: %w", req.Target, err)
	}
	return st, nil
}

func (a *Adapter) stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	req.Target.Schema = a.schema(req.Target)
	tag := req.Tag
	if tag.Step == "" {
		tag.Step = "stage"
	}
	if err := a.ensureDatabase(ctx, tag, a.cfg.StageSchema); err != nil {
		return nil, err
	}
	target, err := a.table(ctx, tag, req.Target)
	if err != nil {
		return nil, err
	}
	if req.Rebuild {
		target = nil // a stage of the new table: the query's columns
	}
	// The table whose structure the stage copies: the target, or on a
	// sharded cluster the local table under it.
	structure := req.Target
	if target != nil {
		if structure, target, err = a.role.structure(ctx, tag, req.Target, target); err != nil {
			return nil, err
		}
	}
	// The query's columns: as the runner described them, or described here.
	cols := plainColumns(req.Columns)
	if len(cols) == 0 {
		if cols, err = a.describe(ctx, tag, req.Query); err != nil {
			return nil, err
		}
	}
	// The stage's name carries its window: the evidence of what a run
	// that died after publishing it had not recorded yet (deferred.go).
	rel := a.tableName(req.Target, adapters.KindStage, req.Tag.RunID)
	rel.Name += adapters.WindowTag(req.Window)
	var stmts []string
	state := &stageState{}
	if target == nil {
		nullable, nullableString := false, false
		for _, c := range cols {
			if c.Name == req.Window.Column && strings.Contains(c.Type, "Nullable(") {
				nullable, nullableString = true, strings.Contains(c.Type, "String")
			}
		}
		opts, err := modelTableOptions(a.d, req.Model, nullable)
		if err != nil {
			return nil, err
		}
		if nullableString && a.server.nullableStringKeyCrash && strings.Contains(opts.PartitionBy, req.Window.Column) {
			q := a.d.QuoteIdent(req.Window.Column)
			return nil, fmt.Errorf("the partition column %s is a Nullable string, and ClickHouse %s crashes when a partition key is computed from one: "+
				"make it non-Nullable in the model's query (for example assumeNotNull(%s) AS %s), or set clickhouse.partition_by",
				req.Window.Column, a.server.Version, q, q)
		}
		state.key = opts.PartitionBy
		stmts = []string{createStageSQL(a.d, rel, opts, req.Query)}
	} else {
		state.key = target.PartitionKey
		if err := a.role.swappable(target, structure); err != nil {
			return nil, err
		}
		final := changed(target.Columns, req.Change)
		names, err := insertColumns(req.Target, final, cols)
		if err != nil {
			return nil, err
		}
		// The stage copies the target's structure, changed as the target
		// will be at the swap: REPLACE PARTITION needs the same columns.
		// A stage is never replicated: created AS a replicated table, it
		// would claim the table's ZooKeeper path.
		engine := unreplicated(target.EngineClause)
		if req.Change.Empty() && target.plain() && len(names) == len(final) && target.EngineClause != "" {
			stmts = []string{createStageLikeSQL(a.d, rel, engine, tableColumns(final), req.Query)}
		} else {
			into := stageIntoStatements(a.d, rel, structure, names, req.Query)
			if engine != target.EngineClause {
				into[0] += " " + engine
			}
			stmts = append(append(into[:1:1], alterStatements(a.d, rel, tableColumns(target.Columns), req.Change)...), into[1:]...)
		}
		cols = final
	}
	if err := a.checkWindowType(req, cols); err != nil {
		return nil, err
	}
	if err := a.execAll(ctx, tag, stmts); err != nil {
		a.drop(ctx, tag, rel)
		return nil, err
	}
	var selected []adapters.TableColumn // what SELECT * returns
	for _, c := range cols {
		if c.DefaultKind != "MATERIALIZED" && c.DefaultKind != "ALIAS" {
			selected = append(selected, adapters.TableColumn{Name: c.Name, Type: c.Type})
		}
	}
	return &adapters.Stage{Relation: rel, Target: req.Target, Model: req.Model, Window: req.Window, Tag: req.Tag, Columns: selected,
		State: state}, nil
}

// changed returns cols with change applied: new columns at the end,
// dropped ones gone, widened ones with their new type.
func changed(cols []column, change *adapters.SchemaChange) []column {
	if change.Empty() {
		return cols
	}
	drop := map[string]bool{}
	for _, n := range change.Drop {
		drop[n] = true
	}
	widen := map[string]string{}
	for _, c := range change.Widen {
		widen[c.Name] = c.Type
	}
	var out []column
	have := map[string]bool{}
	for _, c := range cols {
		have[c.Name] = true
		if drop[c.Name] {
			continue
		}
		if t, ok := widen[c.Name]; ok {
			c.Type = t
		}
		out = append(out, c)
	}
	for _, c := range change.Add {
		if !have[c.Name] {
			out = append(out, column{Name: c.Name, Type: c.Type})
		}
	}
	return out
}

// insertColumns returns the target's columns to insert from a query
// returning cols, or an error naming the columns that do not match.
func insertColumns(target models.Relation, tcols, qcols []column) ([]string, error) {
	have := map[string]bool{}
	for _, c := range qcols {
		have[c.Name] = true
	}
	known := map[string]bool{}
	var names, missing, extra []string
	for _, c := range tcols {
		known[c.Name] = true
		switch {
		case c.DefaultKind == "MATERIALIZED" || c.DefaultKind == "ALIAS":
		case have[c.Name]:
			names = append(names, c.Name)
		case c.DefaultKind == "":
			missing = append(missing, c.Name)
		}
	}
	for _, c := range qcols {
		if !known[c.Name] {
			extra = append(extra, c.Name)
		}
	}
	var problems []string
	if len(extra) > 0 {
		problems = append(problems, "returns columns the table lacks: "+strings.Join(extra, ", "))
	}
	if len(missing) > 0 {
		problems = append(problems, "lacks columns of the table: "+strings.Join(missing, ", "))
	}
	if problems != nil {
		return nil, fmt.Errorf("the query %s (refill does not alter existing tables: ALTER TABLE %s yourself, or drop it to rebuild)",
			strings.Join(problems, "; "), target)
	}
	return names, nil
}

// checkWindowType refuses, on servers that compare DateTime with Date by
// their raw numbers (18.16), a time window whose literals would not have
// the partition column's type: DATE bounds on a DateTime column match
// nothing there, and the window would be verified and swapped wrongly.
func (a *Adapter) checkWindowType(req adapters.StageRequest, cols []column) error {
	w := req.Window
	if a.server.DateTimeCompare || w.Whole() || w.Values != nil {
		return nil
	}
	for _, c := range cols {
		if c.Name != w.Column {
			continue
		}
		t := baseType(c.Type)
		switch {
		case strings.HasPrefix(t, "DateTime") && !w.Timestamp:
			return fmt.Errorf("column %s is a %s, but the model's windows are dates, which ClickHouse %s compares wrongly with DateTime values; set partition_type: timestamp in the model (or make the column a Date)",
				w.Column, c.Type, a.server.Version)
		case strings.HasPrefix(t, "Date") && !strings.HasPrefix(t, "DateTime") && w.Timestamp:
			return fmt.Errorf("column %s is a %s, but the model's windows are timestamps, which ClickHouse %s compares wrongly with Date values; set partition_type: date in the model (or make the column a DateTime)",
				w.Column, c.Type, a.server.Version)
		}
	}
	return nil
}

// column is a column as system.columns or DESCRIBE report it.
type column struct {
	Name, Type  string
	DefaultKind string // "", DEFAULT, MATERIALIZED or ALIAS
	Default     string // its expression
}

// tableInfo is what the server says about a table.
type tableInfo struct {
	Engine       string // the engine's name, e.g. MergeTree
	EngineClause string // ENGINE = ... through the end of SHOW CREATE TABLE
	PartitionKey string // the PARTITION BY expression, or ""
	Columns      []column
}

// column returns the column named name, if t has it.
func (t *tableInfo) column(name string) (column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return column{}, false
}

// plain reports whether every column of t is an ordinary one (no DEFAULT,
// MATERIALIZED or ALIAS expression).
func (t *tableInfo) plain() bool {
	for _, c := range t.Columns {
		if c.DefaultKind != "" {
			return false
		}
	}
	return true
}

// stageGone is the error of a staging table that is not there.
func stageGone(r models.Relation) error {
	return fmt.Errorf("the staging table %s does not exist (dropped, or cleaned by another run)", r)
}

// engineOf returns the engine name of a CREATE TABLE statement.
func engineOf(create string) string {
	i := strings.LastIndex(create, "ENGINE = ")
	if i < 0 {
		return ""
	}
	name := create[i+len("ENGINE = "):]
	if j := strings.IndexAny(name, "( \n"); j >= 0 {
		name = name[:j]
	}
	return name
}

// describedKept is how many query descriptions describe keeps.
const describedKept = 64

// Query runs a read-only query tagged with tag. Values are normalized as
// adapters.Result documents: UInt64 becomes int64 unless it is beyond
// int64's range, Nullable NULL becomes nil, Date and DateTime become
// time.Time in UTC (a Date at midnight UTC), Decimal becomes int64 or
// float64.
func (a *Adapter) Query(ctx context.Context, query string, tag adapters.Tag) (*adapters.Result, error) {
	return a.query(ctx, tag, query)
}

// DropStage drops a staging table; dropping one already gone succeeds. A
// published stage whose records are not written yet is dropped by the
// Flush that writes them; one whose publication failed half-way is kept
// for the next run (deferred.go).
func (a *Adapter) DropStage(ctx context.Context, s *adapters.Stage) error {
	if a.held(s) {
		return nil
	}
	tag := s.Tag
	tag.Step = "drop"
	return a.exec(ctx, tag, "DROP TABLE IF EXISTS "+s.Relation.Quote(a.d))
}

// CleanStages drops the stages and swap tables of runs dead reports, on
// a cluster from every node that answers.
func (a *Adapter) CleanStages(ctx context.Context, dead func(runToken string) bool) error {
	return a.role.onStageHosts(func(h *node) error { return h.cleanStagesHere(ctx, dead) })
}
