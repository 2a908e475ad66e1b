package statuspage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/runner"
)

// ModelChange is what a model's change does to its data: the diff (refill
// diff) of a sample of the partitions an earlier version of the model
// built, which a run would rebuild (refill status --html --diff).
type ModelChange struct {
	Model string
	// Stale is how many partitions an earlier version built.
	Stale int
	Diffs []runner.PartitionDiff
	// Err says why the diff could not be made, if it could not.
	Err error
}

type changeView struct {
	Model, Error                    string
	Stale, Diffed                   int
	OnlyOld, OnlyNew, Changed, Same int64
	Partitions                      []changePartView
	Sums                            []string
	Added, Dropped, Key             string
}

type changePartView struct {
	Key                                 string
	Old, New, OnlyOld, OnlyNew, Changed int64
	Examples                            []string
}

func changeViews(in []ModelChange, redact func(string) string) []changeView {
	var out []changeView
	for _, mc := range in {
		v := changeView{Model: mc.Model, Stale: mc.Stale, Diffed: len(mc.Diffs)}
		if mc.Err != nil {
			v.Error = redact(mc.Err.Error())
		}
		sums := map[string][2]float64{}
		var order []string
		for _, d := range mc.Diffs {
			res := d.Result
			v.OnlyOld += res.OnlyOld
			v.OnlyNew += res.OnlyNew
			v.Changed += res.Changed
			v.Same += res.Same
			v.Key = strings.Join(d.Key, ", ")
			v.Added, v.Dropped = strings.Join(d.Added, ", "), strings.Join(d.Dropped, ", ")
			for _, s := range res.Sums {
				if _, ok := sums[s.Column]; !ok {
					order = append(order, s.Column)
				}
				x := sums[s.Column]
				if s.Old != nil {
					x[0] += *s.Old
				}
				if s.New != nil {
					x[1] += *s.New
				}
				sums[s.Column] = x
			}
			pv := changePartView{Key: d.Partition.Key, Old: res.Old(), New: res.New(), OnlyOld: res.OnlyOld, OnlyNew: res.OnlyNew, Changed: res.Changed}
			seen := map[string]bool{}
			for _, ex := range res.Examples {
				if seen[ex.Kind] { // one of each kind
					continue
				}
				seen[ex.Kind] = true
				pv.Examples = append(pv.Examples, redact(strings.ReplaceAll(ex.Kind, "_", " ")+": "+Example(d, ex, "→")))
			}
			v.Partitions = append(v.Partitions, pv)
		}
		for _, c := range order {
			x := sums[c]
			v.Sums = append(v.Sums, fmt.Sprintf("sum(%s): %s → %s", c, Number(x[0]), Number(x[1])))
		}
		out = append(out, v)
	}
	return out
}

// Example shows an example row of d: column=value, and for a changed row
// its key and the columns that changed, old arrow new.
func Example(d runner.PartitionDiff, ex adapters.DiffExample, arrow string) string {
	val := func(v *string) string {
		if v == nil {
			return "NULL"
		}
		return *v
	}
	var parts []string
	for i, c := range d.Compared {
		switch ex.Kind {
		case adapters.DiffOnlyOld:
			parts = append(parts, c+"="+val(ex.Old[i]))
		case adapters.DiffOnlyNew:
			parts = append(parts, c+"="+val(ex.New[i]))
		default:
			o, n := val(ex.Old[i]), val(ex.New[i])
			if slices.ContainsFunc(d.Key, func(k string) bool { return strings.EqualFold(k, c) }) {
				parts = append(parts, c+"="+o)
			} else if (ex.Old[i] == nil) != (ex.New[i] == nil) || o != n {
				parts = append(parts, fmt.Sprintf("%s: %s %s %s", c, o, arrow, n))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// Number prints a sum to 12 significant digits: sums of floating-point
// columns carry rounding noise in their last ones.
func Number(f float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
