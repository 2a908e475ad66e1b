package duckdb_test

import (
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
)

// TestRenderShop pins the DuckDB SQL of every model of the example project.
func TestRenderShop(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, "testdata/shop.sql", adaptertest.RenderShop(t, duckdb.Engine()))
}
