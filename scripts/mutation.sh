#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins): plants
# small bugs (flipped comparisons, changed arithmetic, negated conditions)
# one at a time in a package and runs that package's tests against each.
# A mutant the tests do not notice "lives". Not part of `make test` or CI:
# it runs the package's tests once per mutant and takes minutes to hours.
#
#   scripts/mutation.sh                       # the algorithm packages
#   scripts/mutation.sh internal/kernel       # one package
#
# Results go to .mutation/<package>.json and .mutation/<package>.txt
# (ignored by git); the last lines of each .txt hold the score. The scores
# and the surviving mutants judged harmless are recorded in docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
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
	pkgs=(internal/kernel internal/landmark internal/basis internal/embed)
fi
mkdir -p .mutation
status=0
for pkg in "${pkgs[@]}"; do
	name="$(echo "$pkg" | tr / _)"
	echo "== gremlins $pkg"
	# One worker: the tests of several packages measure with all cores, and
	# two mutants at once would make their timeouts flaky on 2 cores.
	if ! "$bin" unleash --workers "${GREMLINS_WORKERS:-1}" --timeout-coefficient "${GREMLINS_TIMEOUT_COEFFICIENT:-10}" \
		--output ".mutation/$name.json" "./$pkg" 2>&1 | tee ".mutation/$name.txt"; then
		status=1
	fi
done
exit $status
