# closer: the two commands are `make run` and `make test`.
GO ?= go

.PHONY: run test test-race test-plain test-bench-fuzz fuzz generate lint golangci-lint bench-smoke build clean-data $(GOLANGCI_LINT)

## run: the app with its demo study, on $DATABASE_URL or a private PostgreSQL under .data/
run:
	./scripts/run-dev.sh

# The store, the study files and the HTTP front run under the race detector
# (their tests drive many requests and replicas at once, and the study files'
# tests ran with the store's before they had a package); every other package
# runs plainly.
RACE_PKGS := ./internal/collect/... ./internal/studyfile/... ./internal/web/...
FUZZTIME ?= 5s
# make test fuzzes each target for a count of executions, not a time: a
# time limit fails ("context deadline exceeded") when a busy machine has not
# replayed the cached corpus within it, as a CI run did beside the race run.
FUZZ_SMOKE ?= 2000x
# golangci-lint is pinned; `make lint` installs it into $(GOBIN) (default
# $HOME/go/bin, which .ci/run puts on PATH) when that version is missing.
GOLANGCI_LINT_VERSION := v2.15.0
GOBIN ?= $(shell $(GO) env GOPATH)/bin
GOLANGCI_LINT := $(GOBIN)/golangci-lint

## test: everything CI runs (formatting, vet, golangci-lint, generated code
## up to date, all tests, the store and HTTP packages with -race, every
## benchmark once, every fuzz target briefly)
#
# Three runs go side by side (make -j3; each one's output is printed whole
# when it ends, --output-sync): the race run; the plain run with the
# browser tests; the benchmark smoke run and then the fuzz targets. On 2
# cores each waits on PostgreSQL, Chromium or timers part of its time,
# which the others fill; the fuzz targets run FUZZ_SMOKE executions each
# whatever the CPU they get.
test: lint check-generate
	$(MAKE) --no-print-directory -j3 --output-sync=target test-race test-plain test-bench-fuzz

# test-race: the race run of make test. Four tests of a package at a time
# rather than two (GOMAXPROCS): many of them wait on PostgreSQL or timers
# rather than use the CPU. The browser tests (TestBrowser*, CLOSER_BROWSER=1)
# run in the plain run instead: under -race they took half of the race
# run's time, most of it Chromium's, and the server code they drive is
# raced by the package's other tests.
test-race:
	$(GO) test -race -parallel 4 -skip '^TestBrowser' -timeout 30m $(RACE_PKGS)

# test-plain: every other package's tests, and internal/web's browser tests.
test-plain:
	$(GO) test -timeout 30m $$($(GO) list ./... | grep -v -e /internal/collect -e /internal/studyfile -e /internal/web)
	$(GO) test -run '^TestBrowser' -timeout 30m ./internal/web/

# test-bench-fuzz: bench-smoke, then the fuzz targets.
test-bench-fuzz: bench-smoke
	FUZZTIME=$(FUZZ_SMOKE) ./scripts/fuzz.sh

## bench-smoke: every benchmark once (-benchtime 1x), so none can rot;
## -short shrinks the fixtures of the few that take minutes to build
bench-smoke:
	$(GO) test -short -run '^$$' -bench . -benchtime 1x -timeout 30m $$(grep -rl --include='*_test.go' '^func Benchmark' . | xargs -n1 dirname | sort -u)

## fuzz: every fuzz target for FUZZTIME (default 5s; e.g. make fuzz FUZZTIME=5m)
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## generate: regenerate the templ components (*_templ.go are committed)
generate:
	$(GO) tool templ generate

## check-generate: fail if `templ generate` would change a committed file
check-generate:
	./scripts/check-generate.sh

## lint: gofmt, go vet and golangci-lint (.golangci.yml; its cache keeps
## a second run to seconds)
lint: $(GOLANGCI_LINT)
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

## golangci-lint: install the pinned golangci-lint (.ci/run calls it)
golangci-lint: $(GOLANGCI_LINT)

# The pinned golangci-lint, installed when missing or another version.
$(GOLANGCI_LINT):
	@if ! "$@" version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) "; then \
		echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(GOBIN)"; \
		GOBIN=$(GOBIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi

## build: the server and the CLI into bin/
build:
	$(GO) build -o bin/web ./cmd/web
	$(GO) build -o bin/closer ./cmd/closer

## clean-data: stop and delete the private PostgreSQL cluster of `make run`
clean-data:
	./scripts/dev-postgres.sh stop || true
	rm -rf .data
