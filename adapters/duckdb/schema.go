package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

var _ adapters.ShapeDescriber = (*Adapter)(nil)

// DescribesShapes marks the adapter as an adapters.ShapeDescriber: DuckDB
// types a date or timestamp literal by its kind, never by its value, and
// date arithmetic has fixed types.
func (*Adapter) DescribesShapes() {}

// Describe returns the columns query returns (DESCRIBE, which plans the
// query without running it).
func (a *Adapter) Describe(ctx context.Context, query string, tag adapters.Tag) ([]adapters.TableColumn, error) {
	res, err := a.Query(ctx, "DESCRIBE "+query, tag)
	if err != nil {
		return nil, err
	}
	out := make([]adapters.TableColumn, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = adapters.TableColumn{Name: fmt.Sprint(row[0]), Type: fmt.Sprint(row[1])}
	}
	return out, nil
}

// Columns returns table's columns, or nil when it does not exist.
func (a *Adapter) Columns(ctx context.Context, table models.Relation) ([]adapters.TableColumn, error) {
	table = a.resolve(table)
	// duckdb_columns() rather than the information_schema view over it:
	// 1.2 ms against 2 ms, in every run.
	rows, err := a.db.QueryContext(ctx, "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND "+
		databaseIs(a.d, table)+" ORDER BY column_index", table.Schema, table.Name)
	if err != nil {
		return nil, err
	}
	res, err := sqlkit.ScanRows(rows)
	if err != nil || len(res.Rows) == 0 {
		return nil, err
	}
	out := make([]adapters.TableColumn, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = adapters.TableColumn{Name: fmt.Sprint(row[0]), Type: fmt.Sprint(row[1])}
	}
	return out, nil
}

// CreateTable creates table with columns unless it exists.
func (a *Adapter) CreateTable(ctx context.Context, table models.Relation, _ *models.Model, columns []adapters.TableColumn) error {
	a.swap.Lock()
	defer a.swap.Unlock()
	table = a.resolve(table)
	return a.exec(ctx, "create", createTableStatements(a.d, table, columns)...)
}

// createTableStatements create table (schema resolved) with columns,
// unless it exists.
func createTableStatements(d Dialect, table models.Relation, columns []adapters.TableColumn) []string {
	return []string{"CREATE SCHEMA IF NOT EXISTS " + d.QuoteIdent(table.Schema), createTableSQL(d, table, columns, true)}
}

func createTableSQL(d Dialect, table models.Relation, columns []adapters.TableColumn, ifNotExists bool) string {
	defs := make([]string, len(columns))
	for i, c := range columns {
		defs[i] = d.QuoteIdent(c.Name) + " " + c.Type
	}
	ine := ""
	if ifNotExists {
		ine = "IF NOT EXISTS "
	}
	return fmt.Sprintf("CREATE TABLE %s%s (%s)", ine, table.Quote(d), strings.Join(defs, ", "))
}

// alterStatements render a schema change of table, each statement
// idempotent.
func alterStatements(d Dialect, table models.Relation, c *adapters.SchemaChange) []string {
	if c.Empty() {
		return nil
	}
	t := table.Quote(d)
	var out []string
	for _, col := range c.Add {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", t, d.QuoteIdent(col.Name), col.Type))
	}
	for _, name := range c.Drop {
		out = append(out, fmt.Sprintf("ALTER TABLE %s DROP COLUMN IF EXISTS %s", t, d.QuoteIdent(name)))
	}
	for _, col := range c.Widen {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DATA TYPE %s", t, d.QuoteIdent(col.Name), col.Type))
	}
	return out
}

// Fit says how values of DuckDB type from fit a column of type to. DuckDB
// refuses a value that overflows an integer or decimal column, so those
// narrowings are checked; rounding (to fewer decimal places, from floating
// point) and reinterpreting (a timestamp as a date, a number as text) are
// not.
func (Dialect) Fit(from, to string) adapters.Fit {
	return adapters.FitOf(parseType(from), parseType(to), true)
}

// parseType reads a DuckDB type name into its family.
func parseType(t string) adapters.TypeInfo {
	u := strings.ToUpper(strings.TrimSpace(t))
	info := adapters.TypeInfo{Name: u}
	switch u {
	case "BOOLEAN", "BOOL":
		info.Family = adapters.FamilyBool
	case "TINYINT", "INT1":
		info.Family, info.Bits = adapters.FamilyInt, 8
	case "SMALLINT", "INT2":
		info.Family, info.Bits = adapters.FamilyInt, 16
	case "INTEGER", "INT4", "INT":
		info.Family, info.Bits = adapters.FamilyInt, 32
	case "BIGINT", "INT8":
		info.Family, info.Bits = adapters.FamilyInt, 64
	case "HUGEINT", "INT128":
		info.Family, info.Bits = adapters.FamilyInt, 128
	case "UTINYINT":
		info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, 8, true
	case "USMALLINT":
		info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, 16, true
	case "UINTEGER":
		info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, 32, true
	case "UBIGINT":
		info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, 64, true
	case "UHUGEINT":
		info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, 128, true
	case "FLOAT", "REAL", "FLOAT4":
		info.Family, info.Bits = adapters.FamilyFloat, 32
	case "DOUBLE", "FLOAT8":
		info.Family, info.Bits = adapters.FamilyFloat, 64
	case "VARCHAR", "TEXT", "STRING":
		info.Family = adapters.FamilyString
	case "DATE":
		info.Family = adapters.FamilyDate
	case "TIMESTAMP_S":
		info.Family, info.Precision = adapters.FamilyTimestamp, 0
	case "TIMESTAMP_MS":
		info.Family, info.Precision = adapters.FamilyTimestamp, 3
	case "TIMESTAMP", "DATETIME":
		info.Family, info.Precision = adapters.FamilyTimestamp, 6
	case "TIMESTAMP_NS":
		info.Family, info.Precision = adapters.FamilyTimestamp, 9
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ":
		info.Family, info.Precision, info.Zoned = adapters.FamilyTimestamp, 6, true
	default:
		if p, s, ok := adapters.DecimalArgs(u); ok {
			info.Family, info.Precision, info.Scale = adapters.FamilyDecimal, p, s
		} else if strings.HasPrefix(u, "VARCHAR(") {
			info.Family = adapters.FamilyString
		}
	}
	return info
}

// Fit says how values of type from fit a column of type to (Dialect.Fit).
func (a *Adapter) Fit(from, to string) adapters.Fit { return a.d.Fit(from, to) }
