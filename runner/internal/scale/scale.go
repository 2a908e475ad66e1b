// Package scale makes the projects the planner's and the runner's
// benchmarks measure at scale.
package scale

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/refill/refill/models"
)

// Start is the first day of a Project's models.
const Start = "2015-01-01"

// Project generates n daily models from Start: chains of ten, each model
// reading the previous one in its chain, the first of each reading the
// source raw.events.
func Project(tb testing.TB, n int, opts models.LoadOptions) *models.Project {
	tb.Helper()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\nvars: {min: 1}\n")}}
	for i := range n {
		from := `{{ source("raw.events") }}`
		if i%10 != 0 {
			from = fmt.Sprintf(`{{ ref("m%04d") }}`, i-1)
		}
		sql := fmt.Sprintf("/* refill\npartition_by: d\ngrain: day\nstart: %s\n*/\nSELECT d, count(*) AS n FROM %s\nWHERE d >= {{ start }} AND d < {{ end }} AND n >= {{ var(\"min\") }}\nGROUP BY d",
			Start, from)
		fsys[fmt.Sprintf("models/m%04d.sql", i)] = &fstest.MapFile{Data: []byte(sql)}
	}
	p, err := models.Load(fsys, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
