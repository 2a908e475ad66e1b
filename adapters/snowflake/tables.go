package snowflake

import (
	"context"
	"fmt"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

var _ adapters.RowCounter = (*Adapter)(nil)

// rowCountsQuery renders the read of the row counts Snowflake keeps for
// the base tables of the given schemas (folded) of the session's database.
func rowCountsQuery(d Dialect, schemas []string) string {
	quoted := make([]string, len(schemas))
	for i, s := range schemas {
		quoted[i] = d.QuoteString(d.Fold(s))
	}
	return fmt.Sprintf("SELECT TABLE_SCHEMA, TABLE_NAME, ROW_COUNT FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN (%s)",
		strings.Join(quoted, ", "))
}

// CountRows reads the tables' row counts from INFORMATION_SCHEMA.TABLES,
// which Snowflake keeps exact for standard tables without a scan.
func (a *Adapter) CountRows(ctx context.Context, tables []models.Relation) (map[string]int64, error) {
	out := map[string]int64{}
	var schemas []string
	seen := map[string]bool{}
	for _, t := range tables {
		if t.Database != "" {
			out[t.String()] = -1 // another database's INFORMATION_SCHEMA: not counted
			continue
		}
		if sc := a.d.Fold(t.Schema); !seen[sc] {
			seen[sc] = true
			schemas = append(schemas, t.Schema)
		}
	}
	if len(schemas) == 0 {
		return out, nil
	}
	s, err := a.session(ctx, adapters.Tag{Step: "drift"}, "")
	if err != nil {
		return nil, err
	}
	defer s.close()
	res, err := s.query(rowCountsQuery(a.d, schemas))
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, row := range res.Rows {
		counts[fmt.Sprint(row[0])+"."+fmt.Sprint(row[1])] = adapters.Int(row[2])
	}
	for _, t := range tables {
		if n, ok := counts[a.d.Fold(t.Schema)+"."+a.d.Fold(t.Name)]; ok && t.Database == "" {
			out[t.String()] = n
		}
	}
	return out, nil
}
