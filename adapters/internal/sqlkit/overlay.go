package sqlkit

import (
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// OverlaySQL renders the CREATE VIEW of an overlay (adapters.Overlayer):
// the rows of target outside every stage's window, unless the target
// does not exist, then each stage's rows, each part selecting list and
// joined by union (UNION ALL, or DuckDB's UNION ALL BY NAME). Rows whose
// window column is NULL are outside every window, as a swap's DELETE
// keeps them.
func OverlaySQL(d models.Dialect, view, target models.Relation, targetExists bool, stages []*adapters.Stage, list, union string) string {
	var parts []string
	if targetExists {
		keep := make([]string, len(stages))
		for i, s := range stages {
			keep[i] = "NOT coalesce(" + s.Window.Predicate(d) + ", " + d.Bool(false) + ")"
		}
		parts = append(parts, fmt.Sprintf("SELECT %s FROM %s WHERE %s", list, target.Quote(d), strings.Join(keep, " AND ")))
	}
	for _, s := range stages {
		parts = append(parts, fmt.Sprintf("SELECT %s FROM %s", list, s.Relation.Quote(d)))
	}
	return fmt.Sprintf("CREATE VIEW %s AS\n%s", view.Quote(d), strings.Join(parts, "\n"+union+"\n"))
}
