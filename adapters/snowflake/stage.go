package snowflake

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Stage creates a TRANSIENT staging table from req.Query in the stage
// schema, on the model's warehouse. CREATE TABLE ... AS SELECT is one DDL
// statement, which Snowflake runs atomically, so a failed stage leaves
// nothing behind.
func (a *Adapter) Stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	a.rememberWarehouse(req.Model)
	s, err := a.session(ctx, req.Tag, modelWarehouse(req.Model))
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := a.ensureSchema(s, "", a.cfg.StageSchema); err != nil {
		return nil, err
	}
	rel := models.Relation{Schema: a.cfg.StageSchema, Name: a.newName(req.Target, adapters.KindStage, req.Tag.RunID)}
	if err := s.exec(createStageSQL(a.d, rel, req.Query)); err != nil {
		return nil, err
	}
	return &adapters.Stage{Relation: rel, Target: req.Target, Model: req.Model, Window: req.Window, Tag: req.Tag}, nil
}

func modelWarehouse(m *models.Model) string { return modelOptions(m).Warehouse }

// createStageSQL renders the CREATE TRANSIENT TABLE of a stage. The query
// is wrapped so that a trailing comment or ORDER BY stays inside it.
// Transient tables have no fail-safe storage, which a stage never needs.
func createStageSQL(d Dialect, stage models.Relation, query string) string {
	return fmt.Sprintf("CREATE TRANSIENT TABLE %s AS SELECT * FROM (\n%s\n)", stage.Quote(d), query)
}

// Query runs a read-only query on the warehouse of the model t names (if
// it set one) and normalizes its values (see columnValue).
func (a *Adapter) Query(ctx context.Context, query string, t adapters.Tag) (*adapters.Result, error) {
	s, err := a.session(ctx, t, a.warehouseOf(t.Model))
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.query(query)
}

// DropStage drops a staging table if it exists.
func (a *Adapter) DropStage(ctx context.Context, st *adapters.Stage) error {
	s, err := a.session(ctx, adapters.Tag{RunID: st.Tag.RunID, Model: st.Tag.Model, Partition: st.Tag.Partition, Step: "drop"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	return s.exec(dropSQL(a.d, "TABLE", st.Relation))
}

// dropSQL renders DROP kind IF EXISTS for a table or a view.
func dropSQL(d Dialect, kind string, r models.Relation) string {
	return "DROP " + kind + " IF EXISTS " + r.Quote(d)
}

// CleanStages drops the staging tables and overlay views of runs dead
// reports.
func (a *Adapter) CleanStages(ctx context.Context, dead func(runToken string) bool) error {
	s, err := a.session(ctx, adapters.Tag{Step: "clean"}, "")
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.query(stagesQuery(a.d, a.cfg.StageSchema))
	if err != nil {
		return err
	}
	for _, row := range res.Rows {
		name, _ := row[0].(string)
		if token, ok := adapters.StageRun(name); !ok || !dead(token) {
			continue
		}
		kind := "TABLE"
		if row[1] == "VIEW" {
			kind = "VIEW"
		}
		// name is stored folded, so quoting folds it to itself.
		if err := s.exec(dropSQL(a.d, kind, models.Relation{Schema: a.cfg.StageSchema, Name: name})); err != nil {
			return err
		}
	}
	return nil
}

// stagesQuery renders the query listing the tables and views of the stage
// schema, views first.
func stagesQuery(d Dialect, stageSchema string) string {
	return fmt.Sprintf("SELECT TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = %s ORDER BY TABLE_TYPE DESC, TABLE_NAME",
		d.QuoteString(d.Fold(stageSchema)))
}

// infoSchema names the INFORMATION_SCHEMA of database db (the session's
// database when db is empty).
func infoSchema(d Dialect, db string) string {
	if db == "" {
		return "INFORMATION_SCHEMA"
	}
	return d.QuoteIdent(db) + ".INFORMATION_SCHEMA"
}

// tableExistsQuery renders a query counting the tables and views named r.
func tableExistsQuery(d Dialect, r models.Relation) string {
	return fmt.Sprintf("SELECT COUNT(*) FROM %s.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
		infoSchema(d, r.Database), d.QuoteString(d.Fold(r.Schema)), d.QuoteString(d.Fold(r.Name)))
}

// schemaExistsQuery renders a query counting the schemas named schema in
// database db.
func schemaExistsQuery(d Dialect, db, schema string) string {
	return fmt.Sprintf("SELECT COUNT(*) FROM %s.SCHEMATA WHERE SCHEMA_NAME = %s", infoSchema(d, db), d.QuoteString(d.Fold(schema)))
}

// createSchemaSQL renders CREATE SCHEMA IF NOT EXISTS. The adapter checks
// INFORMATION_SCHEMA first and runs it only for a missing schema, so that a
// role without the privilege to create schemas can use existing ones.
func createSchemaSQL(d Dialect, db, schema string) string {
	return "CREATE SCHEMA IF NOT EXISTS " + models.Relation{Database: db, Name: schema}.Quote(d)
}

// ensureSchema creates a missing schema, once per adapter.
func (a *Adapter) ensureSchema(s *session, db, schema string) error {
	key := db + "." + a.d.Fold(schema)
	if a.known(&a.schemas, key) {
		return nil
	}
	n, err := s.count(schemaExistsQuery(a.d, db, schema))
	if err != nil {
		return err
	}
	if n == 0 {
		if err := s.exec(createSchemaSQL(a.d, db, schema)); err != nil {
			return err
		}
	}
	a.remember(&a.schemas, key)
	return nil
}

// tableExists reports whether r exists.
func (s *session) tableExists(r models.Relation) (bool, error) {
	n, err := s.count(tableExistsQuery(s.a.d, r))
	return n > 0, err
}

// Column is a column of a staged table as Snowflake describes it.
type Column struct {
	Name string // as stored, e.g. ORDER_DATE
	Type string // the type the target table gets, e.g. NUMBER(38,0)
}

// columnsQuery renders the query whose result describes r's columns.
func columnsQuery(d Dialect, r models.Relation) string {
	return "SELECT * FROM " + r.Quote(d) + " LIMIT 0"
}

// columns reads r's columns, in order.
func (s *session) columns(r models.Relation) ([]Column, error) {
	return s.columnsOf(columnsQuery(s.a.d, r))
}

// columnsOf reads the columns of the result of query (which should return
// no rows).
func (s *session) columnsOf(q string) ([]Column, error) {
	s.a.log(q)
	rows, err := s.conn.QueryContext(s.ctx, q)
	if err != nil {
		if deadSession(err) {
			s.dead = true
		}
		return nil, adapters.ExecFailed(s.step, q, located(q, err))
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(types))
	for i, t := range types {
		_, scale, _ := t.DecimalSize()
		cols[i] = Column{Name: t.Name(), Type: targetType(t.DatabaseTypeName(), scale)}
	}
	return cols, rows.Err()
}

// targetType maps the type of a stage's column, as gosnowflake reports it
// (FIXED, REAL, TEXT, ...), to the type of the target table's column.
// Snowflake gives a CREATE TABLE ... AS SELECT the narrowest types of the
// first partition's values ('eu' is a VARCHAR(2), 1 a NUMBER(1,0)), which a
// later partition would overflow, so text is widened to VARCHAR and numbers
// to 38 digits of precision, keeping their scale.
func targetType(kind string, scale int64) string {
	switch k := strings.ToUpper(kind); k {
	case "FIXED":
		return fmt.Sprintf("NUMBER(38,%d)", scale)
	case "REAL":
		return "FLOAT"
	case "TEXT":
		return "VARCHAR"
	default:
		return k // BOOLEAN, DATE, TIME, TIMESTAMP_NTZ/LTZ/TZ, BINARY, VARIANT, OBJECT, ARRAY, ...
	}
}
