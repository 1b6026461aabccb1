# closer: the two commands are `make run` and `make test`.
GO ?= go

.PHONY: run test generate lint build clean-data

## run: the app with its demo study, on $DATABASE_URL or a private PostgreSQL under .data/
run:
	./scripts/run-dev.sh

## test: everything CI runs (formatting, vet, generated code up to date, all tests)
test: lint check-generate
	$(GO) test ./...

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
