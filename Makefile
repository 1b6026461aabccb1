# closer: the two commands are `make run` and `make test`.
GO ?= go

.PHONY: run test fuzz generate lint build clean-data

## run: the app with its demo study, on $DATABASE_URL or a private PostgreSQL under .data/
run:
	./scripts/run-dev.sh

# The store, the study files and the HTTP front run under the race detector
# (their tests drive many requests and replicas at once, and the study files'
# tests ran with the store's before they had a package); every other package
# runs plainly.
RACE_PKGS := ./internal/collect/... ./internal/studyfile/... ./internal/http/...
FUZZTIME ?= 5s

## test: everything CI runs (formatting, vet, generated code up to date, all
## tests, the store and HTTP packages with -race, every fuzz target briefly)
test: lint check-generate
	$(GO) test -race -timeout 30m $(RACE_PKGS)
	$(GO) test -timeout 30m $$($(GO) list ./... | grep -v -e /internal/collect -e /internal/studyfile -e /internal/http)
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## fuzz: every fuzz target for FUZZTIME (default 5s; e.g. make fuzz FUZZTIME=5m)
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## generate: regenerate the templ components (*_templ.go are committed)
generate:
	$(GO) tool templ generate

## check-generate: fail if `templ generate` would change a committed file
check-generate:
	./scripts/check-generate.sh

## lint: gofmt and go vet
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## build: the server and the CLI into bin/
build:
	$(GO) build -o bin/web ./cmd/web
	$(GO) build -o bin/closer ./cmd/closer

## clean-data: stop and delete the private PostgreSQL cluster of `make run`
clean-data:
	./scripts/dev-postgres.sh stop || true
	rm -rf .data
