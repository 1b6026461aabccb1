#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins): plants
# small bugs (flipped comparisons, changed arithmetic, negated conditions)
# one at a time in a package and runs that package's tests against each.
# A mutant the tests do not notice "lives". Not part of `make test` or CI:
# it runs tests once per mutant and takes minutes to an hour a package.
#
#   scripts/mutation.sh                       # the six packages of issue 12
#   scripts/mutation.sh internal/kernel       # one package
#
# To make the store's and the web front's packages affordable (their tests
# take minutes against PostgreSQL), each mutant runs only the package's
# tests that execute its line: first every test of the package is run alone
# under coverage, giving a map from lines to the tests that execute them
# (.mutation/<package>.cover); then gremlins runs with scripts/mutation-go
# as its `go`, which looks the mutated line up in the map. A test that never
# executes a line cannot notice a change to it, so the verdicts are those of
# the whole package's tests.
#
# Results go to .mutation/<package>.json and .mutation/<package>.txt
# (ignored by git); the last lines of each .txt hold the score. The scores
# and the surviving mutants judged harmless are recorded in docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
version="v0.6.0"
bin="${GREMLINS_BIN:-$(go env GOPATH)/bin/gremlins-$version}"
if [ ! -x "$bin" ]; then
	tmp="$(mktemp -d)"
	GOBIN="$tmp" go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
	mkdir -p "$(dirname "$bin")"
	mv "$tmp/gremlins" "$bin"
	rm -rf "$tmp"
fi
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(internal/landmark internal/basis internal/kernel internal/embed internal/collect internal/http)
fi
mkdir -p .mutation
wrapdir="$(mktemp -d)"
trap 'rm -rf "$wrapdir"' EXIT
cp scripts/mutation-go "$wrapdir/go"
chmod +x "$wrapdir/go"
realgo="$(command -v go)"

# covermap PKG OUT: every test of PKG alone under coverage; OUT gets a line
# "file start end test" per block of PKG's own files the test executes.
covermap() {
	local pkg="$1" out="$2" work importpath
	work="$(mktemp -d)"
	importpath="$(go list "./$pkg")"
	go test -c -cover -coverpkg="$importpath" -o "$work/pkg.test" "./$pkg"
	: >"$out"
	local t
	for t in $(cd "$pkg" && "$work/pkg.test" -test.list '.*' | grep -E '^(Test|Fuzz|Example)'); do
		(cd "$pkg" && "$work/pkg.test" -test.run "^$t\$" -test.count=1 -test.timeout=20m \
			-test.coverprofile="$work/cover.out" >/dev/null 2>&1) || echo "   ($t failed on its own; its lines still count)"
		[ -f "$work/cover.out" ] || continue
		# mode line, then "path/file.go:l1.c1,l2.c2 statements count"
		awk -v t="$t" -F'[:, ]' 'NR > 1 && $NF > 0 {
			n = split($1, p, "/"); split($2, a, "."); split($3, b, ".")
			print p[n], a[1], b[1], t
		}' "$work/cover.out" >>"$out"
		rm -f "$work/cover.out"
	done
	sort -u -o "$out" "$out"
	rm -rf "$work"
}

status=0
for pkg in "${pkgs[@]}"; do
	name="$(echo "$pkg" | tr / _)"
	echo "== per-test coverage of $pkg"
	covermap "$pkg" ".mutation/$name.cover"
	echo "== gremlins $pkg"
	# One worker: the tests of several packages measure with all cores, and
	# two mutants at once would make their timeouts flaky on 2 cores.
	if ! PATH="$wrapdir:$PATH" MUTATION_REAL_GO="$realgo" MUTATION_ORIG_DIR="$root/$pkg" \
		MUTATION_COVER_MAP="$root/.mutation/$name.cover" MUTATION_LOG="$root/.mutation/$name.log" \
		"$bin" unleash --workers "${GREMLINS_WORKERS:-1}" --timeout-coefficient "${GREMLINS_TIMEOUT_COEFFICIENT:-10}" \
		--output ".mutation/$name.json" "./$pkg" 2>&1 | tee ".mutation/$name.txt"; then
		status=1
	fi
done
exit $status
