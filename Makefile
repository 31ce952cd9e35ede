# racelab's everyday commands. `make test` is the suite CI runs (.ci/run);
# `make check` is what to run before a commit.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build install run test test-short check lint bench services services-stop clean fuzz

all: build

## build: the racelab binary in ./bin
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/racelab ./cmd/racelab

## install: racelab into your Go bin folder (go env GOBIN, else GOPATH/bin),
## with the version git describes; `go install ./cmd/racelab` does the same
## with the version Go stamps from the clone
install:
	$(GO) install -ldflags '$(LDFLAGS)' ./cmd/racelab

## run: the README's main command, on embedded targets (no servers needed)
run:
	$(GO) run ./cmd/racelab run five-checkouts

## test: vet and the whole suite under the race detector. Real-store tests
## skip with a reason when their servers are down, and fail when CI=true.
## go test shows nothing of a package that passed, its skips included, so
## the skips are logged to a file (storetest.SkipLogVar) and said after the
## run, one line a package: "targets/redis: skipped 14 real-server tests: …".
## Three packages at a time (-p 3), not one a core: a good part of the
## suite waits (on servers, shard leads, chromium), and with two at a time
## the cores were idle 45 % of the run (CPU 321 s in 291 s wall on 2 cores).
test:
	$(GO) vet ./...
	@skips=$$(mktemp); trap 'rm -f "$$skips"' EXIT; \
	echo "$(GO) test -race -count=1 -p 3 -timeout 12m ./..."; \
	RACELAB_SKIP_LOG=$$skips $(GO) test -race -count=1 -p 3 -timeout 12m ./...; status=$$?; \
	sort "$$skips" | uniq -c | awk -F'\t' '{ n = $$1 + 0; pkg = $$1; sub(/^ *[0-9]+ /, "", pkg); \
		printf "%s: skipped %d real-server test%s: %s\n", pkg, n, n == 1 ? "" : "s", $$2 }' >&2; \
	exit $$status

## test-short: the suite without the race detector, for a quick loop
test-short:
	$(GO) test -count=1 ./...

## check: format, vet, staticcheck, race tests, and go.mod/go.sum tidy
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(MAKE) tree
	$(MAKE) lint
	$(MAKE) test
	$(GO) mod tidy -diff

## tree: the tree tracks source, not builds: no file over 1 MB and no
## executable binary (a racelab built in cmd/racelab once slipped in)
.PHONY: tree
tree:
	@bad=$$(git ls-files -z | xargs -0 -r sh -c 'for f; do [ -f "$$f" ] || continue; 		if [ $$(wc -c <"$$f") -gt 1048576 ] || head -c 4 "$$f" | grep -q "ELF"; then echo "$$f"; fi; done' sh); 	if [ -n "$$bad" ]; then echo "tracked files that are builds or over 1 MB (git rm --cached them):"; echo "$$bad"; exit 1; fi

## lint: staticcheck at a pinned version, built from the module proxy by
## `go run pkg@version`, which checks it against the checksum database and
## leaves go.mod alone (a tool's dependencies are not racelab's). The
## first run builds it (minutes); later runs take it from the build cache.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...

## fuzz: every fuzz target for FUZZTIME each (run longer by hand, e.g. make
## fuzz FUZZTIME=5m). FUZZTIME=budget runs each target for its own number of
## executions instead, about five seconds' worth on a slow machine: CI does,
## because a time-bounded fuzz run can fail with a bare "context deadline
## exceeded" and no failing input on a loaded machine, a race in Go's fuzz
## coordinator fixed only in Go 1.27 (go.dev/issue/75804). The seed corpora
## under each package's testdata/fuzz also run as plain tests in `make test`.
FUZZTIME ?= 5s
FUZZ := ./targets:FuzzParse:20000 ./targets/redis:FuzzParseURL:20000 ./targets/postgres:FuzzParseURL:5000 \
	./targets/httpapi:FuzzParseCall:3000 ./targets/httpapi:FuzzDecode:2000 ./targets/httpapi:FuzzDecodeRoundTrip:2000 \
	./report:FuzzReadJSON:20 ./scenarios/racefile:FuzzParse:2000 ./scenarios/racefile/expr:FuzzTemplate:20000 \
	./scenarios/racefile/starter:FuzzSplit:20000
fuzz:
	@set -e; for f in $(FUZZ); do pkg=$${f%%:*}; rest=$${f#*:}; name=$${rest%%:*}; budget=$${rest##*:}; \
		limit=$(FUZZTIME); if [ "$$limit" = budget ]; then limit=$${budget}x; fi; \
		echo "fuzz $$name in $$pkg for $$limit"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $$limit $$pkg 2>&1) || { echo "$$out"; exit 1; }; \
		echo "$$out"; case "$$out" in *"no fuzz tests to fuzz"*) echo "fuzz: no $$name in $$pkg; fix FUZZ in the Makefile"; exit 1;; esac; done

## bench: Go benchmarks of the engine's hot paths and the embedded stores
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./scenarios ./targets/...

## services: Redis, PostgreSQL and MariaDB on loopback for the real-store targets
services:
	bash .ci/services start

## services-stop: stop exactly the servers `make services` started
services-stop:
	bash .ci/services stop

clean:
	rm -rf bin

## bench-http: arrival spread at the server of racelab's bursts (each --sync) at
## N=10 and N=100 next to `hey -n N -c N`, in one run against one `racelab serve
## --store actor` on loopback, with the ratios (cmd/arrivalbench; needs hey:
## apt-get install -y hey). ARGS passes flags, e.g. ARGS='-trials 100'.
.PHONY: bench-http
bench-http: build
	$(GO) run ./cmd/arrivalbench -racelab bin/racelab $(ARGS)

## bench-floor: the spread of bursts of N=10, 100 and 1,000 at a neutral
## HTTP/2 referee (golang.org/x/net/http2; stamps each request when its body
## is read, then runtime.Gosched(), as ../shared/tools/spread's does),
## racelab --sync h2 next to the referee's own single-packet client (the
## floor, as spread's h2-single) and `hey -n N -c N`, 3 runs of 5 bursts
## each, unpinned and then pinned (referee under taskset -c 1, clients under
## taskset -c 0), with racelab ÷ floor against the goal of 1.5× and hey ÷
## racelab against 8× (N=10) and 5× (cmd/arrivalbench -referee; needs hey:
## apt-get install -y hey). With SPREAD=path/to/spread (built from
## ../shared/tools/spread) the unpinned run also takes every burst through
## `spread proxy` (1 ms + U(0, 3 ms) a chunk) against hey ÷ racelab ≥ 20×.
## ARGS passes flags, e.g. ARGS='-baseline /work/main/bin/racelab'.
.PHONY: bench-floor
bench-floor: build
	$(GO) run ./cmd/arrivalbench -referee -racelab bin/racelab $(if $(SPREAD),-spread $(SPREAD)) $(ARGS)
	$(GO) run ./cmd/arrivalbench -referee -pin -racelab bin/racelab $(ARGS)

## bench-load: racelab load next to hey, wrk and vegeta against one `racelab
## serve --store sqlite`, closed model at C=50 and 256, the pinned,
## client-bound table (server on core 0, each client on core 1, C=50, 3
## rounds; ratios against issue 24's goals), the open model's achieved
## rate, peak RSS at C=1000 for 30s, and coordinated omission against a
## server that stalls 1s every 5s (cmd/loadbench; needs hey and wrk:
## apt-get install -y hey wrk; vegeta: go install
## github.com/tsenart/vegeta/v12@v12.13.0). ARGS passes flags, e.g.
## ARGS='-d 5s', or ARGS='-only pinned' for the pinned table alone.
.PHONY: bench-load
bench-load: build
	$(GO) run ./cmd/loadbench -racelab bin/racelab $(ARGS)

## bench-trial: a virtual ten-hits trial of 10 requests (history check on) on
## kv and actor, timed beside a bare barrier + mutex trial in the same run,
## three runs of 20,000 trials; each run prints the CPU ratio against its
## goal (5× kv, 10× actor), the wall ratio and the load average (issue 24).
## ARGS passes flags, e.g. ARGS='-count 5'.
.PHONY: bench-trial
bench-trial:
	$(GO) test -run '^$$' -bench '^BenchmarkTrialRatio$$' -benchtime 20000x -count=3 ./scenarios $(ARGS)

## bench-background: break and inconclusive rates of ten-hits-one-view bursts
## on kv, sqlite, postgres:serializable and redis:watch with no background
## load, 200/s and 1,000/s (20 trials each; needs `make services`)
.PHONY: bench-background
bench-background: build
	@for t in kv sqlite postgres:serializable redis:watch; do for bg in "" 200/s 1000/s; do \
		echo "== $$t background $${bg:-none}"; \
		bin/racelab run ten-hits-one-view -t $$t --clock real --trials 20 --seed 1 -q $${bg:+--background $$bg} | grep -E 'broken in|holds in|inconclusive|^background'; \
	done; done

## bench-shards: 4 local racelab shards against one `racelab serve`, merged
## by racelab verify, next to one process's bursts (deploy/local-shards.sh)
.PHONY: bench-shards
bench-shards: build
	RACELAB=bin/racelab deploy/local-shards.sh $(ARGS)
