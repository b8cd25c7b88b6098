# Convenience targets; scripts/test.sh is the source of truth.
.PHONY: test build demo bench

build:
	go build -o bin/mcpdiag ./cmd/mcpdiag

test:
	./scripts/test.sh

demo:
	go run ./cmd/mcpdiag classify --text --id 1 testdata/sample-response.txt

bench:
	go test -run '^$$' -bench . -benchmem ./wire ./classify
