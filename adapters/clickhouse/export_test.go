package clickhouse

import "github.com/refill/refill/models"

// The package's own functions that its external tests call.
var (
	Capabilities  = capabilities
	PartitionsSQL = partitionsSQL
)

// SeedStatements renders a seed's statements for one server.
func SeedStatements(d Dialect, seed *models.Seed, tmp models.Relation) []string {
	return seedStatements(d, seed, tmp, "", seedEngine)
}

// ModelTableOptions is modelTableOptions for a partition column that is
// not Nullable.
func ModelTableOptions(d Dialect, m *models.Model) (TableOptions, error) {
	return modelTableOptions(d, m, false)
}
