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
	go vet -tags front ./cmd/faultline

# Static binaries (no cgo): without the dynamic loader and libc's start-up
# faultline starts about 4 ms sooner, which is most of what recording a
# short program costs (scripts/bench-record.sh, the "start" row). User
# names for --user are then read from /etc/passwd and /etc/group.
# Two of them: faultline-full has every command (it is what `go install`
# makes); bin/faultline, built with -tags front, runs record itself and
# hands every other command to faultline-full, so that record does not
# start the packages only the others need (cmd/faultline/front.go).
build:
	CGO_ENABLED=0 go build -o bin/faultline-full ./cmd/faultline
	CGO_ENABLED=0 go build -tags front -o bin/faultline ./cmd/faultline

# FUZZTIME=10m make fuzz
fuzz:
	go test ./parser/ -run '^$$' -fuzz FuzzParseLine -fuzztime $${FUZZTIME:-60s}

bench:
	go test ./parser/ -run '^$$' -bench . -benchmem
	scripts/bench-blockrec.sh
