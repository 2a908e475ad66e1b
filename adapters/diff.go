package adapters

import (
	"context"

	"github.com/refill/refill/models"
)

// Differ compares, inside the warehouse, the rows a query computes with
// the rows of a table's window: refill diff. One statement scans each side
// once; nothing is written and no row leaves the warehouse but the counts,
// the sums and a few examples.
type Differ interface {
	Diff(ctx context.Context, req DiffRequest) (*DiffResult, error)
}

// DiffRequest is one comparison: the new rows (Query) against the old (the
// rows of Table inside Window).
type DiffRequest struct {
	Table  models.Relation
	Window Window
	Query  string
	// Columns are the columns compared, in both the table and the query's
	// result, with the table's types; Key, when not empty, a subset of
	// them naming a row: rows are matched by it, and a matched row whose
	// other columns differ is changed. Without Key rows are compared
	// whole, as multisets: a row is only old or only new, never changed.
	Columns []TableColumn
	Key     []string
	// Examples is how many rows of each kind to return.
	Examples int
	Tag      Tag
}

// DiffResult counts the rows of each kind. Old = OnlyOld + Changed + Same
// and New = OnlyNew + Changed + Same.
type DiffResult struct {
	OnlyOld, OnlyNew, Changed, Same int64
	// Sums are the sums of the numeric columns on each side, in the order
	// of DiffRequest.Columns.
	Sums []ColumnSums
	// Examples of each kind, at most DiffRequest.Examples each, with the
	// values of DiffRequest.Columns as text (NULL as nil): Old for only
	// old rows, New for only new ones, both for changed rows.
	Examples []DiffExample
}

// Old is how many rows the table's window holds.
func (r *DiffResult) Old() int64 { return r.OnlyOld + r.Changed + r.Same }

// New is how many rows the query returns.
func (r *DiffResult) New() int64 { return r.OnlyNew + r.Changed + r.Same }

// Differs reports whether the two sides differ in any row.
func (r *DiffResult) Differs() bool { return r.OnlyOld+r.OnlyNew+r.Changed > 0 }

// ColumnSums are a numeric column's sums on each side; nil when that side
// has no rows (or only NULLs).
type ColumnSums struct {
	Column   string
	Old, New *float64
}

// The kinds of rows in a diff.
const (
	DiffOnlyOld = "only_old"
	DiffOnlyNew = "only_new"
	DiffChanged = "changed"
)

// DiffExample is one row that differs.
type DiffExample struct {
	Kind     string
	Old, New []*string
}
