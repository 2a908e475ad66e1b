package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
)

// recompute is the second implementation the oracle tests compare refill
// with: it recomputes every model of project p in dir into schema oracle of
// its DuckDB file, partition by partition in dependency order, from the
// current source tables, and returns how the project's tables differ from
// it (rows as multisets, column names and types). A time-partitioned model
// is recomputed over its partitions complete at now whose windows end by
// through (all of them when through is zero), and those held says the
// table holds ("model key"); a whole-table or list model's partitions that
// held names (all of them when held is nil) over those, as refill builds
// them with its horizon at through.
func recompute(t *testing.T, dir string, p *models.Project, now, through time.Time, held map[string]bool, version func(*models.Model, models.Partition) *models.Model) []string {
	t.Helper()
	return recomputeIn(t, filepath.Join(dir, "warehouse.duckdb"), false, p, now, through, held, version)
}

// recomputeIn is recompute in the DuckDB file at path. A mirror of another
// warehouse's tables (see warehouse) has types of its own: its columns are
// compared by name and type family (typeFamily).
func recomputeIn(t *testing.T, path string, mirror bool, p *models.Project, now, through time.Time, held map[string]bool, version func(*models.Model, models.Partition) *models.Model) []string {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	exec("DROP SCHEMA IF EXISTS oracle CASCADE")
	exec("CREATE SCHEMA oracle")
	refs := map[string]models.SQL{}
	for _, m := range p.Graph.Order {
		refs[m.Name] = models.SQL(`oracle."` + m.Name + `"`)
	}
	scope := &models.Scope{Dialect: duckdb.Dialect{}, Schema: "main", Vars: p.Vars, Refs: refs}
	var diffs []string
	for _, m := range p.Graph.Order {
		last, ok := m.LastComplete(now)
		if !ok {
			continue
		}
		var parts []models.Partition
		if m.Kind() == models.TimePartitioned {
			for _, part := range m.Partitions(m.Config.Start, last) {
				if through.IsZero() || !part.End.After(through) || held[m.Name+" "+part.Key] {
					parts = append(parts, part)
				}
			}
		} else {
			for _, part := range m.Partitions(time.Time{}, time.Time{}) {
				if held == nil || held[m.Name+" "+part.Key] {
					parts = append(parts, part)
				}
			}
		}
		scope := scope
		if m.Config.Self || len(parts) == 0 {
			// A cumulative model reads its own recomputation, so its table
			// exists, with its declared columns, before the first
			// partition.
			s := *scope
			s.This = refs[m.Name]
			scope = &s
			var cols []string
			for _, c := range m.Config.Columns {
				typ, err := c.Type.In(scope.Dialect)
				if err != nil {
					t.Fatal(err)
				}
				cols = append(cols, c.Name+" "+typ)
			}
			switch {
			case len(cols) > 0:
				exec(fmt.Sprintf(`CREATE TABLE oracle."%s" (%s)`, m.Name, strings.Join(cols, ", ")))
			case tableExists(t, db, m):
				// No partition, but a table (its partitions removed): empty.
				exec(fmt.Sprintf(`CREATE TABLE oracle."%s" AS SELECT * FROM %s WHERE 1 = 0`, m.Name, mainTable(m)))
			default:
				continue // nothing to recompute, nor a table refill made
			}
		}
		for i, part := range parts {
			pm := m
			if version != nil {
				pm = version(m, part) // the version its rows came from (refill accept)
			}
			q, err := pm.Render(scope, part)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && !m.Config.Self {
				exec(fmt.Sprintf(`CREATE TABLE oracle."%s" AS %s`, m.Name, q))
			} else {
				exec(fmt.Sprintf(`INSERT INTO oracle."%s" %s`, m.Name, q))
			}
		}
		schema := m.Relation.Schema
		if schema == "" {
			schema = "main"
		}
		table := func(db string) string {
			if db == "oracle" {
				return `oracle."` + m.Name + `"`
			}
			return mainTable(m)
		}
		rows := func(which string) []string {
			var out []string
			for _, r := range dbRows(t, db, fmt.Sprintf(`SELECT * FROM %s ORDER BY ALL`, table(which))) {
				out = append(out, fmt.Sprint(r))
			}
			return out
		}
		cols := func(which string) string {
			s, n := schema, m.Relation.Name
			if which == "oracle" {
				s, n = "oracle", m.Name
			}
			cols := dbRows(t, db, fmt.Sprintf(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '%s' AND table_name = '%s' ORDER BY ordinal_position`, s, n))
			if mirror {
				for _, c := range cols {
					c[1] = typeFamily(c[1].(string))
				}
			}
			return fmt.Sprint(cols)
		}
		if got, want := cols("main"), cols("oracle"); got != want {
			diffs = append(diffs, fmt.Sprintf("%s has columns %s, its recomputation %s", m.Name, got, want))
			continue
		}
		if got, want := rows("main"), rows("oracle"); !slices.Equal(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s differs from its recomputation:\n%s", m.Name, rowDiff(want, got)))
		}
	}
	return diffs
}

// mainTable is m's table as refill names it on DuckDB (default schema main).
func mainTable(m *models.Model) string {
	schema := m.Relation.Schema
	if schema == "" {
		schema = "main"
	}
	return fmt.Sprintf(`%s."%s"`, schema, m.Relation.Name)
}

// tableExists reports whether refill made m's table.
func tableExists(t *testing.T, db *sql.DB, m *models.Model) bool {
	schema := m.Relation.Schema
	if schema == "" {
		schema = "main"
	}
	return dbRows(t, db, fmt.Sprintf(`SELECT count(*) FROM information_schema.tables WHERE table_schema = '%s' AND table_name = '%s'`, schema, m.Relation.Name))[0][0] == int64(1)
}
