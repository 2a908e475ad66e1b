package duckdb

import (
	"context"
	"fmt"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// Stage creates a staging table from req.Query: CREATE TABLE ... AS, which
// DuckDB runs atomically, so a failed stage leaves nothing behind.
func (a *Adapter) Stage(ctx context.Context, req adapters.StageRequest) (*adapters.Stage, error) {
	if a.stages == "" {
		if err := a.ensureSchema(ctx, a.cfg.StageSchema); err != nil {
			return nil, err
		}
	}
	rel := a.stageRelation(req.Target, adapters.KindStage, req.Tag.RunID)
	if err := a.run(ctx, req.Tag.Step, createStageSQL(a.d, rel, req.Query)); err != nil {
		return nil, err
	}
	return &adapters.Stage{Relation: rel, Target: req.Target, Model: req.Model, Window: req.Window, Tag: req.Tag}, nil
}

func createStageSQL(d Dialect, stage models.Relation, query string) string {
	return fmt.Sprintf("CREATE TABLE %s AS\n%s", stage.Quote(d), query)
}

// Query runs a read-only query.
func (a *Adapter) Query(ctx context.Context, query string, tag adapters.Tag) (*adapters.Result, error) {
	a.log(query)
	rows, err := a.db.QueryContext(ctx, query)
	if err != nil {
		return nil, adapters.ExecFailed(tag.Step, query, located(query, err))
	}
	res, err := sqlkit.ScanRows(rows)
	return res, adapters.ExecFailed(tag.Step, query, err)
}

// DropStage drops a staging table if it exists.
func (a *Adapter) DropStage(ctx context.Context, s *adapters.Stage) error {
	return a.run(ctx, "drop", "DROP TABLE IF EXISTS "+s.Relation.Quote(a.d))
}

// CleanStages drops the stages and overlay views of runs dead reports,
// in the staging database and in the stage schema of the database file
// (where earlier versions of refill staged).
func (a *Adapter) CleanStages(ctx context.Context, dead func(runToken string) bool) error {
	rows, err := a.db.QueryContext(ctx, `SELECT database_name, table_name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = $1 AND database_name <> $2
UNION ALL SELECT database_name, view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = $1 AND database_name <> $2 AND NOT internal
ORDER BY kind DESC, table_name`, a.cfg.StageSchema, deferCatalog)
	if err != nil {
		return err
	}
	res, err := sqlkit.ScanRows(rows)
	if err != nil {
		return err
	}
	for _, row := range res.Rows {
		catalog, _ := row[0].(string)
		name, _ := row[1].(string)
		token, ok := adapters.StageRun(name)
		if !ok || !dead(token) || catalog != a.catalog && catalog != a.stages {
			continue
		}
		rel := models.Relation{Schema: a.cfg.StageSchema, Name: name}
		if catalog == a.stages {
			rel.Database = a.stages
		}
		if err := a.run(ctx, "clean", fmt.Sprintf("DROP %s IF EXISTS %s", row[2], rel.Quote(a.d))); err != nil {
			return err
		}
	}
	return nil
}
