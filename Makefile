# icesql: the two commands a newcomer needs are `make run` and `make test`.
WAREHOUSE ?= ./warehouse
ADDR      ?= 127.0.0.1:3306

.PHONY: run build test vet fmt

run:
	go run ./cmd/icesql serve --warehouse $(WAREHOUSE) --addr $(ADDR)

build:
	go build -o bin/icesql ./cmd/icesql

test: vet
	go test -count=1 -timeout 15m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet ./...
