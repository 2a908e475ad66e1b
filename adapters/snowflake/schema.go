package snowflake

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Describe returns the columns query returns, as a target table would take
// them (see targetType): Snowflake compiles SELECT ... LIMIT 0 without
// reading data.
func (a *Adapter) Describe(ctx context.Context, query string, tag adapters.Tag) ([]adapters.TableColumn, error) {
	s, err := a.session(ctx, tag, a.warehouseOf(tag.Model))
	if err != nil {
		return nil, err
	}
	defer s.close()
	cols, err := s.columnsOf("SELECT * FROM (\n" + query + "\n) LIMIT 0")
	if err != nil {
		return nil, err
	}
	return tableColumns(cols), nil
}

// Columns returns table's columns, or nil when it does not exist.
func (a *Adapter) Columns(ctx context.Context, table models.Relation) ([]adapters.TableColumn, error) {
	s, err := a.session(ctx, adapters.Tag{Step: "describe"}, "")
	if err != nil {
		return nil, err
	}
	defer s.close()
	if ok, err := s.tableExists(table); err != nil || !ok {
		return nil, err
	}
	cols, err := s.columns(table)
	if err != nil {
		return nil, err
	}
	return tableColumns(cols), nil
}

func tableColumns(cols []Column) []adapters.TableColumn {
	out := make([]adapters.TableColumn, len(cols))
	for i, c := range cols {
		out[i] = adapters.TableColumn{Name: c.Name, Type: c.Type}
	}
	return out
}

// CreateTable creates table with columns (and the model's cluster_by)
// unless it exists.
func (a *Adapter) CreateTable(ctx context.Context, table models.Relation, m *models.Model, columns []adapters.TableColumn) error {
	s, err := a.session(ctx, adapters.Tag{Model: m.Name, Step: "create"}, modelWarehouse(m))
	if err != nil {
		return err
	}
	defer s.close()
	if err := a.ensureSchema(s, table.Database, table.Schema); err != nil {
		return err
	}
	return s.exec(createTableSQL(a.d, table, declaredColumns(a.d, columns), modelOptions(m).ClusterBy))
}

// declaredColumns names declared columns as Snowflake stores them.
func declaredColumns(d Dialect, cols []adapters.TableColumn) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: d.Fold(c.Name), Type: c.Type}
	}
	return out
}

// alterStatements render a schema change of table; each is idempotent.
// They are DDL, which Snowflake commits at once, so they run before the
// publish's transaction.
func alterStatements(d Dialect, table models.Relation, c *adapters.SchemaChange) []string {
	if c.Empty() {
		return nil
	}
	t := table.Quote(d)
	var out []string
	for _, col := range c.Add {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", t, d.QuoteExact(col.Name), col.Type))
	}
	for _, name := range c.Drop {
		out = append(out, fmt.Sprintf("ALTER TABLE %s DROP COLUMN IF EXISTS %s", t, d.QuoteExact(name)))
	}
	for _, col := range c.Widen {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DATA TYPE %s", t, d.QuoteExact(col.Name), col.Type))
	}
	return out
}

// Fit says how values of Snowflake type from fit a column of type to.
// Snowflake refuses numbers and strings too large for their column, so
// narrowings are checked.
func (a *Adapter) Fit(from, to string) adapters.Fit { return a.d.Fit(from, to) }

// Fit is Adapter.Fit, without a connection.
func (Dialect) Fit(from, to string) adapters.Fit {
	return adapters.FitOf(parseType(from), parseType(to), true)
}

func parseType(t string) adapters.TypeInfo {
	u := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(t), " ", ""))
	info := adapters.TypeInfo{Name: u}
	base, args, _ := strings.Cut(u, "(")
	args = strings.TrimSuffix(args, ")")
	switch base {
	case "BOOLEAN":
		info.Family = adapters.FamilyBool
	case "NUMBER", "DECIMAL", "NUMERIC":
		info.Family, info.Precision, info.Scale = adapters.FamilyDecimal, 38, 0
		if p, s, ok := adapters.DecimalArgs(u); ok {
			info.Precision, info.Scale = p, s
		}
	case "INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "BYTEINT":
		info.Family, info.Precision, info.Scale = adapters.FamilyDecimal, 38, 0
	case "FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "REAL":
		info.Family, info.Bits = adapters.FamilyFloat, 64
	case "VARCHAR", "TEXT", "STRING", "CHAR", "CHARACTER":
		info.Family = adapters.FamilyString
		if n, err := strconv.Atoi(args); err == nil && n < 16777216 {
			info.Length = n
		}
	case "DATE":
		info.Family = adapters.FamilyDate
	case "TIMESTAMP_NTZ", "DATETIME", "TIMESTAMP":
		info.Family, info.Precision = adapters.FamilyTimestamp, 9
	case "TIMESTAMP_LTZ", "TIMESTAMP_TZ":
		info.Family, info.Precision, info.Zoned = adapters.FamilyTimestamp, 9, true
	}
	if info.Family == adapters.FamilyTimestamp {
		if n, err := strconv.Atoi(args); err == nil {
			info.Precision = n
		}
	}
	return info
}

// Rebuild replaces target with a new table holding the stages' rows: the
// table is built in the stage schema, then exchanged with the target by
// ALTER TABLE ... SWAP WITH, which is atomic. That is DDL, which commits
// on its own, so the ledger marks the model's partitions pending before it
// and done after it: a crash in between leaves them pending, and the next
// run redoes them and what reads them.
func (a *Adapter) Rebuild(ctx context.Context, target models.Relation, stages []*adapters.Stage, records []adapters.Record, columns []adapters.TableColumn) error {
	if len(stages) == 0 {
		return nil
	}
	tag := stages[0].Tag
	tag.Step = "rebuild"
	s, err := a.session(ctx, tag, modelWarehouse(stages[0].Model))
	if err != nil {
		return err
	}
	defer s.close()
	if err := a.ensureSchema(s, target.Database, target.Schema); err != nil {
		return err
	}
	cols := declaredColumns(a.d, columns)
	if columns == nil {
		if cols, err = s.columns(stages[0].Relation); err != nil {
			return err
		}
	}
	fresh := models.Relation{Schema: a.cfg.StageSchema, Name: a.newName(target, adapters.KindSwap, tag.RunID)}
	defer func() {
		s.ctx = context.WithoutCancel(s.ctx)
		s.exec(dropSQL(a.d, "TABLE", fresh))
	}()
	exists, err := s.tableExists(target)
	if err != nil {
		return err
	}
	pending := make([]adapters.Record, len(records))
	for i, r := range records {
		r.State, r.Error = adapters.RecordPending, ""
		pending[i] = r
	}
	for _, q := range rebuildStatements(a.d, a.cfg.LedgerSchema, target, fresh, stages, cols, modelOptions(stages[0].Model).ClusterBy, exists, pending, records) {
		if len(q) > 1 && q[0] == BeginSQL {
			err = s.transaction(q)
		} else {
			err = s.exec(q[0])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rebuildStatements render Rebuild as steps: a step of one statement runs
// alone, a step from BEGIN to COMMIT as a transaction.
func rebuildStatements(d Dialect, ledgerSchema string, target, fresh models.Relation, stages []*adapters.Stage, cols []Column, clusterBy string,
	exists bool, pending, records []adapters.Record) [][]string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = d.QuoteExact(c.Name)
	}
	list := strings.Join(names, ", ")
	steps := [][]string{{createTableSQL(d, fresh, cols, clusterBy)}}
	for _, st := range stages {
		steps = append(steps, []string{fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", fresh.Quote(d), list, list, st.Relation.Quote(d))})
	}
	ledger := ledgerTable(d, ledgerSchema, sqlkit.PartitionsTable)
	model := ""
	if len(records) > 0 {
		model = records[0].Model
	}
	deleteAll := fmt.Sprintf("DELETE FROM %s WHERE %s = %s", ledger, d.QuoteIdent("model"), d.QuoteString(model))
	steps = append(steps, inTransaction(append([]string{deleteAll}, recordStatements(d, ledgerSchema, pending)...)))
	if exists {
		steps = append(steps, []string{fmt.Sprintf("ALTER TABLE %s SWAP WITH %s", target.Quote(d), fresh.Quote(d))})
	} else {
		steps = append(steps, []string{fmt.Sprintf("ALTER TABLE %s RENAME TO %s", fresh.Quote(d), target.Quote(d))})
	}
	return append(steps, inTransaction(append([]string{deleteAll}, recordStatements(d, ledgerSchema, records)...)))
}
