#!/usr/bin/env bash
# Runs every Go fuzz target of the repository briefly (FUZZTIME, default
# 10s: a time, or a count of executions such as 2000x, which make test
# uses because a busy machine can overrun a time before the cached corpus
# is replayed): the committed seed corpora under testdata/fuzz/
# run first, then new inputs are generated. A failing input is written to
# the package's testdata/fuzz/<target>/ by go test; commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
status=0
# Each "package target" pair, found from the source so a new target is run
# without editing this script.
while read -r file target; do
	pkg="./$(dirname "$file")"
	echo "== fuzz $pkg $target ($fuzztime)"
	if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
		status=1
	fi
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . |
	sed -E 's#^\./##; s#:func # #' | sort)
exit $status
