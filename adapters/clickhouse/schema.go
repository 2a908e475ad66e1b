package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.ShapeDescriber = (*Adapter)(nil)

// DescribesShapes marks the adapter as an adapters.ShapeDescriber: what a
// date or timestamp literal (toDate('...'), toDateTime('...', 'UTC')) takes
// part in, ClickHouse types by the literal's type, not by its day.
func (*Adapter) DescribesShapes() {}

// Describe returns the columns query returns (DESCRIBE TABLE (query)).
func (a *Adapter) Describe(ctx context.Context, query string, tag adapters.Tag) ([]adapters.TableColumn, error) {
	cols, err := a.describe(ctx, tag, query)
	if err != nil {
		return nil, err
	}
	return tableColumns(cols), nil
}

// Columns returns the columns of table that INSERTs fill (not DEFAULT,
// MATERIALIZED or ALIAS columns), or nil when it does not exist.
func (a *Adapter) Columns(ctx context.Context, table models.Relation) ([]adapters.TableColumn, error) {
	return a.columns(ctx, table)
}

// columns is Columns on the node.
func (n *node) columns(ctx context.Context, table models.Relation) ([]adapters.TableColumn, error) {
	t, err := n.table(ctx, adapters.Tag{Step: "describe"}, n.resolve(table))
	if err != nil || t == nil {
		return nil, err
	}
	var out []adapters.TableColumn
	for _, c := range t.Columns {
		if c.DefaultKind == "" {
			out = append(out, adapters.TableColumn{Name: c.Name, Type: c.Type})
		}
	}
	return out, nil
}

func tableColumns(cols []column) []adapters.TableColumn {
	out := make([]adapters.TableColumn, len(cols))
	for i, c := range cols {
		out[i] = adapters.TableColumn{Name: c.Name, Type: c.Type}
	}
	return out
}

// CreateTable creates table with columns and m's table options unless it
// exists.
func (a *Adapter) CreateTable(ctx context.Context, table models.Relation, m *models.Model, columns []adapters.TableColumn) error {
	table = a.resolve(table)
	tag := adapters.Tag{Model: m.Name, Step: "create"}
	if err := a.ensureDatabase(ctx, tag, table.Schema); err != nil {
		return err
	}
	nullable := false
	for _, c := range columns {
		nullable = nullable || c.Name == m.Config.PartitionBy && strings.HasPrefix(c.Type, "Nullable(")
	}
	opts, err := modelTableOptions(a.d, m, nullable)
	if err != nil {
		return err
	}
	defer a.forget(table)
	return a.role.createTable(ctx, tag, table, columns, opts)
}

// createTableSQL renders CREATE TABLE IF NOT EXISTS with columns and
// options.
func createTableSQL(d Dialect, table models.Relation, columns []adapters.TableColumn, o TableOptions) string {
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s) %s", table.Quote(d), columnDefs(d, plainColumns(columns)), o.Clauses())
}

// plainColumns are columns as ordinary columns (no DEFAULT expression).
func plainColumns(columns []adapters.TableColumn) []column {
	out := make([]column, len(columns))
	for i, c := range columns {
		out[i] = column{Name: c.Name, Type: c.Type}
	}
	return out
}

// alterStatements render the part of change that table (whose columns
// are have) still lacks: 18.16 knows no ADD COLUMN IF NOT EXISTS, so the
// columns are compared first, which makes applying a change twice safe.
func alterStatements(d Dialect, table models.Relation, have []adapters.TableColumn, change *adapters.SchemaChange) []string {
	if change.Empty() {
		return nil
	}
	exists := map[string]string{}
	for _, c := range have {
		exists[c.Name] = c.Type
	}
	var clauses []string
	for _, c := range change.Add {
		if _, ok := exists[c.Name]; !ok {
			clauses = append(clauses, fmt.Sprintf("ADD COLUMN %s %s", d.QuoteIdent(c.Name), c.Type))
		}
	}
	for _, name := range change.Drop {
		if _, ok := exists[name]; ok {
			clauses = append(clauses, "DROP COLUMN "+d.QuoteIdent(name))
		}
	}
	for _, c := range change.Widen {
		if t, ok := exists[c.Name]; ok && t != c.Type {
			clauses = append(clauses, fmt.Sprintf("MODIFY COLUMN %s %s", d.QuoteIdent(c.Name), c.Type))
		}
	}
	if clauses == nil {
		return nil
	}
	return []string{fmt.Sprintf("ALTER TABLE %s %s", table.Quote(d), strings.Join(clauses, ", "))}
}

// alter applies change to table, as far as it is not applied yet.
func (n *node) alter(ctx context.Context, tag adapters.Tag, table models.Relation, change *adapters.SchemaChange) error {
	if change.Empty() {
		return nil
	}
	have, err := n.columns(ctx, table)
	if err != nil {
		return err
	}
	defer n.forget(table)
	return n.execAll(ctx, tag, alterStatements(n.d, table, have, change))
}

// Fit says how values of ClickHouse type from fit a column of type to.
// ClickHouse converts integers by wrapping them (Int64 5000000000 into
// Int32 is 705032704) and NULL into a non-Nullable column by its default,
// so no narrowing fits.
func (a *Adapter) Fit(from, to string) adapters.Fit { return a.d.Fit(from, to) }

// Fit is Adapter.Fit, without a connection.
func (Dialect) Fit(from, to string) adapters.Fit {
	return adapters.FitOf(parseType(from), parseType(to), false)
}

// parseType reads a ClickHouse type name into its family. LowCardinality
// changes storage, not values.
func parseType(t string) adapters.TypeInfo {
	info := adapters.TypeInfo{}
	t = strings.TrimSpace(t)
	for {
		switch {
		case strings.HasPrefix(t, "Nullable(") && strings.HasSuffix(t, ")"):
			t, info.Nullable = t[len("Nullable("):len(t)-1], true
			continue
		case strings.HasPrefix(t, "LowCardinality(") && strings.HasSuffix(t, ")"):
			t = t[len("LowCardinality(") : len(t)-1]
			continue
		}
		break
	}
	info.Name = t
	if info.Nullable {
		info.Name = "Nullable(" + t + ")"
	}
	switch {
	case t == "Bool":
		info.Family = adapters.FamilyBool
	case strings.HasPrefix(t, "Int") || strings.HasPrefix(t, "UInt"):
		bits, err := strconv.Atoi(strings.TrimLeft(t, "UInt"))
		if err == nil {
			info.Family, info.Bits, info.Unsigned = adapters.FamilyInt, bits, strings.HasPrefix(t, "U")
		}
	case t == "Float32":
		info.Family, info.Bits = adapters.FamilyFloat, 32
	case t == "Float64":
		info.Family, info.Bits = adapters.FamilyFloat, 64
	case strings.HasPrefix(t, "Decimal("):
		if p, s, ok := adapters.DecimalArgs(t); ok {
			info.Family, info.Precision, info.Scale = adapters.FamilyDecimal, p, s
		}
	case strings.HasPrefix(t, "Decimal32(") || strings.HasPrefix(t, "Decimal64(") || strings.HasPrefix(t, "Decimal128(") || strings.HasPrefix(t, "Decimal256("):
		open := strings.IndexByte(t, '(')
		p := map[string]int{"Decimal32": 9, "Decimal64": 18, "Decimal128": 38, "Decimal256": 76}[t[:open]]
		if s, err := strconv.Atoi(strings.TrimSuffix(t[open+1:], ")")); err == nil {
			info.Family, info.Precision, info.Scale = adapters.FamilyDecimal, p, s
		}
	case t == "String":
		info.Family = adapters.FamilyString
	case strings.HasPrefix(t, "FixedString("):
		if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(t, "FixedString("), ")")); err == nil {
			info.Family, info.Length = adapters.FamilyString, n
		}
	case t == "Date" || t == "Date32":
		info.Family = adapters.FamilyDate
	case t == "DateTime" || strings.HasPrefix(t, "DateTime("):
		info.Family = adapters.FamilyTimestamp // the zone only displays
	case strings.HasPrefix(t, "DateTime64("):
		args := strings.TrimSuffix(strings.TrimPrefix(t, "DateTime64("), ")")
		p, _, _ := strings.Cut(args, ",")
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
			info.Family, info.Precision = adapters.FamilyTimestamp, n
		}
	}
	return info
}
