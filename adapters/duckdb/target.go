package duckdb

import (
	"cmp"
	"path/filepath"
	"strings"

	"github.com/refill/refill/models"
)

// DefaultPath is the database file of a target without path:, relative
// to the project.
const DefaultPath = "warehouse.duckdb"

// CheckTarget refuses a target t on which project p, whose schemas on t
// are s, cannot run: DuckDB names the database after its file, so a
// schema of the same name makes every two-part name ambiguous.
func CheckTarget(t *models.Target, p *models.Project, s models.TargetSchemas) error {
	path := cmp.Or(t.Settings["path"], DefaultPath)
	catalog := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for _, schema := range append([]string{s.Default, s.Ledger, s.Stage}, p.Schemas()...) {
		if schema != "" && strings.EqualFold(schema, catalog) {
			return t.Errorf("path", "DuckDB names the database in %s %q, like the schema %s, which makes names such as %s.x ambiguous; rename the file",
				filepath.Base(path), catalog, schema, schema)
		}
	}
	return nil
}
