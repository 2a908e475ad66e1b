package adaptertest

import (
	"testing"

	"github.com/refill/refill/adapters"
)

// DiffCase is what a diff must find when rows are matched by Key (compared
// whole when it is empty): the rows of each kind, and the old and new sums
// of the column named x.
type DiffCase struct {
	Key                             []string
	OnlyOld, OnlyNew, Changed, Same int64
	SumOld, SumNew                  float64
}

// CheckDiffs runs req once per case, with the case's key, and checks the
// counts, the sums of x, and the examples: one for each row of each kind
// (req.Examples must cover them), each with its values (an only-new row's
// first value read from the new side, not left empty).
func CheckDiffs(t *testing.T, d adapters.Differ, req adapters.DiffRequest, cases []DiffCase) {
	t.Helper()
	for _, tc := range cases {
		req.Key = tc.Key
		res, err := d.Diff(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.OnlyOld != tc.OnlyOld || res.OnlyNew != tc.OnlyNew || res.Changed != tc.Changed || res.Same != tc.Same {
			t.Errorf("key %v: %+v, want only old %d, only new %d, changed %d, same %d", tc.Key, res, tc.OnlyOld, tc.OnlyNew, tc.Changed, tc.Same)
		}
		var x *adapters.ColumnSums
		for i := range res.Sums {
			if res.Sums[i].Column == "x" {
				x = &res.Sums[i]
			}
		}
		if x == nil || x.Old == nil || x.New == nil || *x.Old != tc.SumOld || *x.New != tc.SumNew {
			t.Errorf("key %v: sums %+v, want x %v -> %v", tc.Key, res.Sums, tc.SumOld, tc.SumNew)
		}
		kinds := map[string]int64{}
		for _, ex := range res.Examples {
			kinds[ex.Kind]++
			if ex.Kind == adapters.DiffOnlyNew && (len(ex.New) == 0 || ex.New[0] == nil || *ex.New[0] == "0") {
				t.Errorf("key %v: an only new example without its first value: %v", tc.Key, ex.New)
			}
		}
		if kinds[adapters.DiffOnlyOld] != tc.OnlyOld || kinds[adapters.DiffOnlyNew] != tc.OnlyNew || kinds[adapters.DiffChanged] != tc.Changed {
			t.Errorf("key %v: examples %v", tc.Key, kinds)
		}
	}
}
