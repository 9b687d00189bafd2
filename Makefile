# icesql: the two commands a newcomer needs are `make run` and `make test`.
WAREHOUSE ?= ./warehouse
ADDR      ?= 127.0.0.1:3306

.PHONY: run build test vet fmt bench

run:
	go run ./cmd/icesql serve --warehouse $(WAREHOUSE) --addr $(ADDR)

build:
	go build -o bin/icesql ./cmd/icesql

test: vet
	go test -count=1 -timeout 15m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet ./...

# icesql beside DuckDB on TPC-H lineitem/orders (its own module: the icesql
# binary never links DuckDB). SF=1 is 6M lineitem rows.
SF ?= 1
bench:
	cd bench && go run . -sf $(SF)
