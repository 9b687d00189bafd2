# icesql: the two commands a newcomer needs are `make run` and `make test`.
WAREHOUSE ?= ./warehouse
ADDR      ?= 127.0.0.1:3306
SLT_LOG   ?= $(or $(TMPDIR),/tmp)/icesql-slt.log
LEDGER_LOG ?= $(or $(TMPDIR),/tmp)/icesql-ledger.log

.PHONY: run build setup check test vet lint race fmt bench bench-dml slt ledger history interop hostile clients

run:
	@echo "building icesql (the first build takes a few minutes; later ones seconds) ..."
	go run ./cmd/icesql serve --create --warehouse $(WAREHOUSE) --addr $(ADDR)

build:
	go build -o bin/icesql ./cmd/icesql

# What the tests need on a fresh Debian machine (packages, Maven jars, moto):
# .ci/setup.sh installs what is missing.
setup:
	bash .ci/setup.sh

# The README's test command, and CI's (.ci/run): installs what the tests
# need, then every test: the Go tests, the client matrix and the peers.
check: setup
	$(MAKE) lint
	$(MAKE) test
	$(MAKE) clients
	$(MAKE) interop

test: vet
	go test -count=1 -timeout 25m ./...

# Spark 3.5 with Iceberg 1.10.1, PyIceberg and DuckDB read every kind of table
# icesql writes, and icesql reads the same kinds written by Spark
# (interop/interop.py); PyIceberg and DuckDB read the final tables of two
# history-tester runs (which need MariaDB, as `make test` does) and Java or
# PyIceberg refuse the invalid fixtures icesql refuses. interop/setup.sh
# installs them once (a virtualenv in
# ~/.cache/icesql-interop, the Spark runtime jar in ~/.m2). Prints
# "interop: N passed, M failed".
#
# Then the Iceberg REST catalog of `icesql serve`: Apache Iceberg's REST
# Compatibility Kit (interop/rck.sh, "rck: N passed, M failed, K skipped")
# and PyIceberg's REST client (interop/rck_pyiceberg.py), and Spark through
# the REST catalog and the S3 API as the lakehouse tutorial connects
# (interop/rest_spark.py, "rest-spark: N passed, M failed"), and DuckDB
# attached to the REST catalog (interop/rest_duckdb.py, "rest-duckdb: N
# passed, M failed"); last, two SQL sessions, Spark, PyIceberg and DuckDB
# append to one table for 30 s and lose nothing (interop/rest_writers.py,
# "rest-writers: N passed, M failed").
interop: build
	@out=$$(bash interop/setup.sh) || exit 1; py="$$(echo "$$out" | sed -n 1p)"; \
	"$$py" interop/interop.py --icesql bin/icesql --jar "$$(echo "$$out" | sed -n 2p)"; rc=$$?; \
	bash interop/rck.sh bin/icesql || rc=1; "$$py" interop/rck_pyiceberg.py bin/icesql || rc=1; \
	"$$py" interop/rest_spark.py --icesql bin/icesql --jar "$$(echo "$$out" | sed -n 2p)" || rc=1; \
	"$$py" interop/rest_duckdb.py --icesql bin/icesql || rc=1; \
	"$$py" interop/rest_writers.py --icesql bin/icesql --jar "$$(echo "$$out" | sed -n 2p)" || rc=1; exit $$rc

# Real MySQL clients run one shared script (clients/script.json: connect-time
# statements, schema browsing, DML with parameters, transactions with
# rollback, errors 1146 and 1054) against a served icesql: PyMySQL,
# mysqlclient, Connector/Python (prepared=True), SQLAlchemy (reflection,
# engine.begin(), pandas to_sql/read_sql), Node mysql2 (query and execute),
# Connector/J (server-side prepares, DatabaseMetaData) and go-sql-driver
# (server-side prepares and interpolateParams). clients/setup.sh installs
# them once into ~/.cache/icesql-clients (and ~/.m2). Prints
# "clients: N passed, M failed".
clients: build
	bash clients/run.sh bin/icesql

# The whole sqllogictest corpus (../shared/fixtures), every file to its end;
# `make test` runs a fixed sample of it. Prints "sqllogictest: N passed, M failed".
slt:
	@ICESQL_SLT=all go test -count=1 -timeout 3h -run TestSQLLogicCorpus -v ./sqltests > $(SLT_LOG) 2>&1; rc=$$?; \
	grep -E '^sqllogictest:|queries, |new failure|fixed \(|^(--- )?FAIL' $(SLT_LOG); echo "full log: $(SLT_LOG)"; exit $$rc

# 16 clients move money by read-then-write transactions over the MySQL wire
# for 60 seconds; prints transfers committed, conflicts and lost updates
# (`make test` runs the same for a few seconds).
ledger:
	@ICESQL_LEDGER_SECONDS=60 go test -count=1 -timeout 30m -run 'TestLedger$$' -v ./engine/ > $(LEDGER_LOG) 2>&1; rc=$$?; \
	grep -E 'ledger_test.go|^(--- )?FAIL' $(LEDGER_LOG); echo "full log: $(LEDGER_LOG)"; exit $$rc

# The generated-history differential tester (sqltests/history) with random
# seeds against MariaDB: SEEDS=1,2,3 runs those seeds first, TIME=2h then
# draws random seeds until it is spent; KNOWN=on generates the shapes of the
# known issues too. Prints "history: ..." and "shapes: ..." lines.
SEEDS ?=
TIME  ?= 10m
KNOWN ?=
HISTORY_LOG ?= $(or $(TMPDIR),/tmp)/icesql-history.log
history:
	@HISTORY_SEEDS=$(SEEDS) HISTORY_TIME=$(TIME) HISTORY_KNOWN=$(KNOWN) go test -count=1 -timeout 0 -v ./sqltests/history > $(HISTORY_LOG) 2>&1; rc=$$?; \
	grep -E 'history: |shapes: |known issue|difference|slow:|^(--- )?FAIL' $(HISTORY_LOG); echo "full log: $(HISTORY_LOG)"; exit $$rc

# Hostile statements against a served binary with --memory-limit-mib 512:
# error codes, peak RSS within the limit + 10%, KILL QUERY and
# max_execution_time (cmd/icesql/hostile_test.go; `make test` runs it too).
hostile:
	go test -count=1 -timeout 30m -run 'TestHostileStatements$$' -v ./cmd/icesql/

# staticcheck (its default checks) and errorlint (errors matched with
# errors.Is/As and wrapped with %w, so that a wrapped error keeps its MySQL
# code), installed by .ci/setup.sh at pinned versions. A finding that is
# right as written carries a //lint:ignore with its reason.
TOOLS ?= $(HOME)/.cache/icesql-tools
lint:
	$(TOOLS)/staticcheck ./...
	$(TOOLS)/go-errorlint ./...

# The engine's and the SQL tests under the race detector (about ten times
# slower than make test's run of them).
race:
	go test -count=1 -race -timeout 60m ./engine/... ./sqltests

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet ./...

# icesql beside DuckDB on TPC-H lineitem/orders (its own module: the icesql
# binary never links DuckDB). SF=1 is 6M lineitem rows. DuckDB's iceberg_scan
# on icesql's own tables runs through PYTHON when it has the duckdb package
# and its extensions: pip install duckdb==1.5.5 duckdb-extension-iceberg==1.5.5
# duckdb-extension-avro==1.5.5 (else the bench says it skipped them, and why).
# Then GET of a 128 MiB object through the S3 API against reading the file
# (bench/s3get.go), single-row INSERT commits (bench/commits.go), LOAD DATA
# LOCAL and icesql import of a 1M-row CSV (bench/load.go), commits through
# the Iceberg REST catalog against SQL with loadTable's p50/p99 (bench/rest.go),
# and point lookups on a table of 1,000 single-row commits against one file,
# and from 16 wire clients (bench/smallq.go).
#
# Then TPC-H's 8 tables from DuckDB's dbgen at TPCH_SF and its 22 queries on
# both engines, each icesql answer checked against DuckDB's (bench/tpchall.go;
# the tpch extension comes from PyPI into ~/.cache/icesql-tpch through
# interop/venv.sh): a "bench tpch_qNN ..." line per query and "bench tpch
# geomean=..".
#
# Last, issue 16's query shapes over its three tables at 100 times the
# differential test's rows (SHAPES_ROWS each), on both engines over the same
# Parquet files, rows checked (bench/shapes.go): a "bench shapes_NAME ..."
# line per shape and "bench shapes geomean=..", each query stopped after
# SHAPES_TIMEOUT.
SF ?= 1
TPCH_SF ?= 0.1
PYTHON ?= python3
SHAPES_ROWS ?= 300000
SHAPES_TIMEOUT ?= 60s
bench:
	cd bench && go run . -sf $(SF) -python $(PYTHON)
	cd bench && go run . -tpch -sf $(TPCH_SF)
	cd bench && go run . -s3get
	cd bench && go run . -commits
	cd bench && go run . -load
	cd bench && go run . -rest
	cd bench && go run . -smallq
	cd bench && go run . -shapes -shapesrows $(SHAPES_ROWS) -timeout $(SHAPES_TIMEOUT)

# UPDATE and DELETE of 1% of a 10M-row, 100-file table in each write mode
# (bench/dml.go); DML_ROWS=100000 for a quick run.
DML_ROWS ?= 10000000
bench-dml:
	cd bench && go run . -dml -dmlrows $(DML_ROWS)
