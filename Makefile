# refill's everyday commands. `make test` is what CI runs (.ci/run).
GO      ?= go
BIN     := bin/refill
SHOP    := testdata/shop

.PHONY: build test demo bench lint clean

build:
	$(GO) build -o $(BIN) ./cmd/refill

# Unit, golden and end-to-end tests against an in-process DuckDB. The
# ClickHouse tests run when CLICKHOUSE_DSN is set (.ci/run starts a server),
# the Snowflake ones when SNOWFLAKE_DSN is set; otherwise they skip.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

# Backfill January 2024 of the example shop into testdata/shop/warehouse.duckdb
# and print the status.
demo: build
	cd $(SHOP) && ../../$(BIN) seed
	cd $(SHOP) && ../../$(BIN) run --from 2024-01 --to 2024-01 --yes
	cd $(SHOP) && ../../$(BIN) status --from 2024-01 --to 2024-04

clean:
	rm -rf bin $(SHOP)/warehouse.duckdb $(SHOP)/warehouse.duckdb.wal
