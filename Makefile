# The test command of the README. Packages with goroutines run under the
# race detector; everything else runs once.
RACE_PKGS := ./parser/ ./blockrec/ ./tracer/ ./supervisor/ ./crash/ ./suite/

.PHONY: test check build fuzz bench
test: check
	go test -count=1 ./...
	go test -count=1 -race $(RACE_PKGS)
	scripts/check-clean.sh

check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

build:
	go build -o bin/faultline ./cmd/faultline

# FUZZTIME=10m make fuzz
fuzz:
	go test ./parser/ -run '^$$' -fuzz FuzzParseLine -fuzztime $${FUZZTIME:-60s}

bench:
	go test ./parser/ -run '^$$' -bench . -benchmem
	scripts/bench-blockrec.sh
