package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Drift: a table changed outside refill (dropped, rows deleted or added)
// no longer holds what the ledger says. Noticing it must cost little on
// every plan, so refill compares each table's total row count, which
// warehouses keep in their metadata, with the sum the ledger recorded, and
// counts rows per partition (one grouped scan) only for a table whose
// total differs or that has a pending publication.

// tableFacts checks the tables of the selected models and of the models
// they read, when the adapter can count rows cheaply (adapters.RowCounter).
func (r *Reader) tableFacts(ctx context.Context, sel Selection, totals map[string]*ledgerTotal) (map[string]*TableFacts, error) {
	rc, ok := r.Adapter.(adapters.RowCounter)
	if !ok {
		return nil, nil
	}
	selected, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	var check []*models.Model
	seen := map[*models.Model]bool{}
	for _, m := range selected {
		for _, c := range append([]*models.Model{m}, m.Upstream...) {
			if !seen[c] && totals[c.Name] != nil {
				seen[c] = true
				check = append(check, c)
			}
		}
	}
	if r.Defer != nil {
		// A deferred model's table is the other target's.
		check = slices.DeleteFunc(check, func(m *models.Model) bool { return r.Defer.Models[m.Name] })
	}
	out, err := r.countTables(ctx, rc, check, totals)
	if err != nil || r.Defer == nil {
		return out, err
	}
	var deferred []*models.Model
	for _, m := range selected {
		for _, up := range m.Upstream {
			if r.Defer.Models[up.Name] && totals[up.Name] != nil && !slices.Contains(deferred, up) {
				deferred = append(deferred, up)
			}
		}
	}
	other := r.Defer.Reader
	orc, ok := other.Adapter.(adapters.RowCounter)
	if !ok || len(deferred) == 0 {
		return out, nil
	}
	theirs, err := other.countTables(ctx, orc, deferred, totals)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]*TableFacts{}
	}
	maps.Copy(out, theirs)
	return out, nil
}

// countTables compares the tables of check with the ledger's totals.
func (r *Reader) countTables(ctx context.Context, rc adapters.RowCounter, check []*models.Model, totals map[string]*ledgerTotal) (map[string]*TableFacts, error) {
	if len(check) == 0 {
		return nil, nil
	}
	rels := make([]models.Relation, len(check))
	for i, m := range check {
		rels[i] = r.Scope.Relation(m)
	}
	counts, err := rc.CountRows(ctx, rels)
	if err != nil {
		return nil, fmt.Errorf("counting the rows of the target tables: %w", err)
	}
	out := map[string]*TableFacts{}
	for i, m := range check {
		n, exists := counts[rels[i].String()]
		tf := &TableFacts{Relation: rels[i], Exists: exists}
		out[m.Name] = tf
		// A table with a pending publication holds an unknown number of
		// rows in it, so its total proves nothing either way: its other
		// partitions are counted (a deleted partition's rows must not
		// pass unseen because a pending one's rows make up the total).
		t := totals[m.Name]
		if !exists || n < 0 || !t.pending && n == t.rows {
			continue
		}
		if tf.Rows, err = r.partitionRows(ctx, m, rels[i]); err != nil {
			return nil, fmt.Errorf("counting the rows of %s per partition: %w", rels[i], err)
		}
	}
	return out, nil
}

// partitionRows counts the rows of m's table per partition.
func (r *Reader) partitionRows(ctx context.Context, m *models.Model, rel models.Relation) (map[string]int64, error) {
	tag := adapters.Tag{Model: m.Name, Step: "drift"}
	colType := ""
	if m.Kind() != models.WholeTable {
		probe, err := r.Adapter.Query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT 0", rel.Quote(r.Adapter.Dialect())), tag)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(probe.Columns, func(c string) bool { return strings.EqualFold(c, m.Config.PartitionBy) })
		if i < 0 {
			return nil, fmt.Errorf("the table has no column %s (partition_by)", m.Config.PartitionBy)
		}
		if i < len(probe.Types) {
			colType = probe.Types[i]
		}
	}
	c, err := CountPartitions(ctx, r.Adapter, tag, m, rel, colType, nil, "")
	if err != nil {
		return nil, err
	}
	return c.Rows, nil
}

// ledgerTotal is what the ledger says one model's table holds in all.
type ledgerTotal struct {
	rows    int64 // of done, partial and failed records
	pending bool  // some publication may not have finished: rows unknown
}

func totalsOfRecords(records []adapters.Record) map[string]*ledgerTotal {
	totals := map[string]*ledgerTotal{}
	for i := range records {
		rec := &records[i]
		t := totals[rec.Model]
		if t == nil {
			t = &ledgerTotal{}
			totals[rec.Model] = t
		}
		switch rec.State {
		case adapters.RecordPending:
			t.pending = true
		case adapters.RecordDone, adapters.RecordPartial, adapters.RecordFailed:
			t.rows += rec.Rows
		}
	}
	return totals
}

func totalsOfSummaries(sums []adapters.RecordSummary) map[string]*ledgerTotal {
	totals := map[string]*ledgerTotal{}
	for _, s := range sums {
		t := totals[s.Model]
		if t == nil {
			t = &ledgerTotal{}
			totals[s.Model] = t
		}
		t.rows += s.Rows
		t.pending = t.pending || s.Pending > 0
	}
	return totals
}
