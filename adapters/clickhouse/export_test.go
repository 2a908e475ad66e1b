package clickhouse

import (
	"context"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

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

// PublishedList names run runID's list of publications.
func (a *Adapter) PublishedList(runID string) models.Relation { return a.publishedList(runID) }

// ListedIn reads, as Unrecorded does once it has listed the stage
// database's tables, the lists among tables of the runs dead reports.
func (a *Adapter) ListedIn(ctx context.Context, tables []string, dead func(runToken string) bool) ([]string, error) {
	return a.node.listedHere(ctx, adapters.Tag{}, tables, dead)
}
