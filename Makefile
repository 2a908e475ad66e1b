# refill's everyday commands. `make test` is what CI runs (.ci/run).
GO      ?= go
# gosnowflake otherwise extracts and loads a native helper library at
# startup; refill does not need it.
TAGS    ?= minicore_disabled
BIN     := bin/refill
# The commit a build is of, for refill --version and bug reports.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X main.version=$(VERSION)
SHOP    := testdata/shop

.PHONY: build test short race oracle demo bench clean ldflags

build:
	$(GO) build -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/refill

# The linker flags of build, for the tests that build the binary.
ldflags:
	@echo '$(LDFLAGS)'

# Unit, golden and end-to-end tests against an in-process DuckDB, and the
# real refill binary under SIGKILL and SIGINT. The ClickHouse tests run when
# CLICKHOUSE_DSN is set (.ci/run starts an 18.16 server), and once more
# against ClickHouse 26 when CHDB_DSN is set (.ci/chdb/start, whose front
# end's own tests run then too); the cluster
# tests when CLICKHOUSE_CLUSTER_DSN and CLICKHOUSE_CLUSTER are set
# (.ci/cluster/start), and those that stop its nodes (the test of a
# replica stopped mid-run, and the oracle's cases on the cluster, which
# stop replicas among their steps) on their own, afterwards, when
# CLICKHOUSE_CLUSTER_DIR is set too (its nodes restarted first: an 18.16 node
# whose DDL worker stopped after a ZooKeeper error answers no ON CLUSTER
# statement again, and each then waits 180 s); the Snowflake ones when SNOWFLAKE_DSN
# is set; otherwise they skip, saying why.
test:
	$(GO) vet -tags $(TAGS) ./...
	CLICKHOUSE_CLUSTER_DIR= $(GO) test -tags $(TAGS) -count=1 -timeout 50m $(if $(CLICKHOUSE_CLUSTER_DIR),-skip '^TestOracleCluster$$') ./...
	@if [ -n "$$CLICKHOUSE_CLUSTER_DIR" ]; then \
		echo "ClickHouse cluster at $$CLICKHOUSE_CLUSTER_DIR: stopping a replica mid-run, and the oracle's cases stopping replicas"; \
		for n in node1 node2 node3 node4; do \
			.ci/cluster/node "$$CLICKHOUSE_CLUSTER_DIR" $$n stop && .ci/cluster/node "$$CLICKHOUSE_CLUSTER_DIR" $$n start || exit 1; \
		done; \
		$(GO) test -tags $(TAGS) -count=1 -timeout 40m -run 'TestClusterReplicaStoppedMidRun|TestOracleCluster' ./cmd/refill/; \
	fi
	@if [ -n "$$CHDB_DSN" ]; then \
		echo "ClickHouse 26 (chDB) at $$CHDB_DSN"; \
		export CLICKHOUSE_CLUSTER_DSN= CLICKHOUSE_CLUSTER_DIR=; \
		(cd .ci/chdb && $(GO) test -count=1 ./...) && \
		CLICKHOUSE_DSN=$$CHDB_DSN $(GO) test -tags $(TAGS) -count=1 -timeout 30m ./adapters/clickhouse/ ./runner/enginetest/ && \
		CLICKHOUSE_DSN=$$CHDB_DSN $(GO) test -tags $(TAGS) -count=1 -timeout 30m -run ClickHouse ./cmd/refill/ && \
		CLICKHOUSE_DSN=$$CHDB_DSN $(GO) test -tags $(TAGS) -count=1 -timeout 30m -run 'TestRunStatements/clickhouse' ./cmd/refill/; \
	fi

# The inner loop of a developer: every package with -short (fault sweeps
# fail a sample of the operations, every kind at least once; the oracle
# runs two cases in-process; tests that build and kill the binary skip).
short:
	$(GO) test -tags $(TAGS) -short -count=1 ./...

# The race detector over the scheduler, the heartbeat and the signal
# handling (runner and the CLI), with -short.
race:
	$(GO) test -tags $(TAGS) -race -short -count=1 -timeout 30m ./runner/ ./runner/plan/ ./cmd/refill/

# Many more random cases of the oracle test than make test runs (see
# cmd/refill/oracle_test.go): ORACLE_CASES of them on ENGINE, one of
# duckdb (the default), clickhouse (the server CLICKHOUSE_DSN names),
# chdb (ClickHouse 26 at CHDB_DSN) or cluster (both layouts of the cluster
# CLICKHOUSE_CLUSTER_DSN names). Every case writes its steps and its replay
# command to ORACLE_LOG as it ends (go test -v), so that
# grep -c 'replay: go test' ORACLE_LOG counts the cases of a long run
# stopped before its end, and a failed case's steps are there; the
# command prints the tally of passed and failed cases when the run ends.
ORACLE_CASES ?= 200
ORACLE_LOG ?= oracle-$(ENGINE).log
ENGINE ?= duckdb
oracle_test_duckdb = ^TestOracle$$
oracle_test_clickhouse = ^TestOracleClickHouse$$
oracle_test_chdb = ^TestOracleClickHouse$$
oracle_test_cluster = ^TestOracleCluster$$
oracle_env_clickhouse = CLICKHOUSE_DSN
oracle_env_chdb = CHDB_DSN
oracle_env_cluster = CLICKHOUSE_CLUSTER_DSN
oracle:
	@test -n '$(oracle_test_$(ENGINE))' || { echo "unknown ENGINE=$(ENGINE): want duckdb, clickhouse, chdb or cluster"; exit 2; }
	@$(if $(oracle_env_$(ENGINE)),test -n "$$$(oracle_env_$(ENGINE))" || { echo "ENGINE=$(ENGINE) needs $(oracle_env_$(ENGINE)) set (see README: Testing)"; exit 2; })
	$(if $(filter chdb,$(ENGINE)),CLICKHOUSE_DSN=$$CHDB_DSN) $(GO) test -v -tags $(TAGS) -count=1 -timeout 240m -run '$(oracle_test_$(ENGINE))' ./cmd/refill/ -oracle.cases $(ORACLE_CASES) > $(ORACLE_LOG) 2>&1; \
	status=$$?; \
	echo "$$(grep -cE '^ +--- PASS: .*/[0-9]+ \(' $(ORACLE_LOG)) cases passed, $$(grep -cE '^ +--- FAIL: .*/[0-9]+ \(' $(ORACLE_LOG)) failed (log: $(ORACLE_LOG))"; \
	grep -E '^ +--- FAIL: .*/[0-9]+ \(' $(ORACLE_LOG) | sed 's/^ *//'; \
	exit $$status

# Backfill the example shop (January to April 2024) into
# testdata/shop/warehouse.duckdb and print its status.
demo: build
	cd $(SHOP) && ../../$(BIN) seed
	cd $(SHOP) && ../../$(BIN) plan
	cd $(SHOP) && ../../$(BIN) run --yes --quiet
	cd $(SHOP) && ../../$(BIN) status

# Go benchmarks (rendering, planning 1,000 models x 3,650 days) and the
# end-to-end backfill harness on 10 million rows, on DuckDB and, when
# CLICKHOUSE_DSN is set, on ClickHouse; see docs/benchmarks.md.
bench:
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem ./models/
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 1x -benchmem -timeout 60m ./runner/ ./runner/plan/ ./cmd/refill/

clean:
	rm -rf bin $(SHOP)/warehouse.duckdb $(SHOP)/warehouse.duckdb.wal $(SHOP)/warehouse.duckdb.refill-holder
