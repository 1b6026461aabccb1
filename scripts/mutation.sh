#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins): plants
# small bugs (flipped comparisons, changed arithmetic, negated conditions)
# one at a time in a package and runs that package's tests against each.
# A mutant the tests do not notice "lives". Not part of `make test` or CI:
# it runs tests once per mutant and takes minutes to an hour a package.
#
#   scripts/mutation.sh                       # the six packages of issue 12
#   scripts/mutation.sh internal/kernel       # one package
#   MUTATION_SAMPLE=80 scripts/mutation.sh internal/web   # a random sample
#
# MUTATION_SAMPLE=N (with MUTATION_SEED, default 1) runs about N of the
# package's mutants instead of all of them: whole source lines are drawn at
# random among those gremlins finds mutants on, until they hold N, and only
# their mutants run. The store's and the web front's tests take 45-60 s per
# mutant here (every line of a request is executed by dozens of tests
# against PostgreSQL), which makes a full run of those packages five hours
# or more; a sample estimates the same efficacy. The sampled lines are
# marked with a trailing comment in a throwaway worktree of HEAD (committed
# code only) and gremlins runs with --diff HEAD there.
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
	pkgs=(internal/landmark internal/basis internal/kernel internal/embed internal/collect internal/web)
fi
mkdir -p .mutation
wrapdir="$(mktemp -d)"
trap 'rm -rf "$wrapdir"' EXIT
cp scripts/mutation-go "$wrapdir/go"
# gremlins matches its mutants' file names, relative to the package, with
# the paths `git diff` prints, relative to the repository: for --diff, the
# diff of the package's files is asked relative to its folder.
realgit="$(command -v git)"
cat >"$wrapdir/git" <<WRAP
#!/usr/bin/env bash
if [ "\$1" = diff ] && [ -n "\${MUTATION_DIFF_RELATIVE:-}" ]; then
	shift
	exec "$realgit" diff --relative="\$MUTATION_DIFF_RELATIVE" "\$@"
fi
exec "$realgit" "\$@"
WRAP
chmod +x "$wrapdir/go" "$wrapdir/git"
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

# sample PKG N SEED: marks about N of PKG's mutants' lines (see the top);
# prints the number of lines and of mutants drawn.
sample() {
	local pkg="$1" want="$2" seed="$3"
	"$bin" unleash --dry-run "./$pkg" 2>/dev/null |
		awk '$1 == "RUNNABLE" { split($4, a, ":"); print a[1] ":" a[2] }' | sort | uniq -c |
		awk '{print $2, $1}' >"$work_sample/lines"
	# Lines in a seeded random order, taken until they hold N mutants; a
	# line with a raw string (a backtick) is passed over (a comment there
	# could land inside the string).
	local picked=0 lines=0 fl n file line
	while read -r fl n; do
		file="${fl%%:*}" line="${fl##*:}"
		if sed -n "${line}p" "$pkg/$file" | grep -q '`'; then continue; fi
		sed -i "${line}s|\$| // mutation sample|" "$pkg/$file"
		picked=$((picked + n)) lines=$((lines + 1))
		[ "$picked" -ge "$want" ] && break
	done < <(shuf --random-source=<(yes "$seed") "$work_sample/lines")
	echo "$lines lines, $picked mutants"
}

status=0
for pkg in "${pkgs[@]}"; do
	name="$(echo "$pkg" | tr / _)"
	dir="$root"
	diffargs=()
	if [ -n "${MUTATION_SAMPLE:-}" ]; then
		work_sample="$(mktemp -d)"
		dir="$work_sample/tree"
		git worktree add -q --detach "$dir" HEAD
		echo "== sample of $pkg (seed ${MUTATION_SEED:-1}): $(cd "$dir" && sample "$pkg" "$MUTATION_SAMPLE" "${MUTATION_SEED:-1}")" |
			tee ".mutation/$name.sample"
		diffargs=(--diff HEAD)
	fi
	echo "== per-test coverage of $pkg"
	(cd "$dir" && covermap "$pkg" "$root/.mutation/$name.cover")
	echo "== gremlins $pkg"
	# One worker: the tests of several packages measure with all cores, and
	# two mutants at once would make their timeouts flaky on 2 cores.
	if ! (cd "$dir" && PATH="$wrapdir:$PATH" MUTATION_REAL_GO="$realgo" MUTATION_ORIG_DIR="$dir/$pkg" MUTATION_DIFF_RELATIVE="$pkg/" \
		MUTATION_COVER_MAP="$root/.mutation/$name.cover" MUTATION_LOG="$root/.mutation/$name.log" \
		"$bin" unleash --workers "${GREMLINS_WORKERS:-1}" --timeout-coefficient "${GREMLINS_TIMEOUT_COEFFICIENT:-10}" \
		"${diffargs[@]}" --output "$root/.mutation/$name.json" "./$pkg") 2>&1 | tee ".mutation/$name.txt"; then
		status=1
	fi
	if [ -n "${MUTATION_SAMPLE:-}" ]; then
		git worktree remove --force "$dir"
		rm -rf "$work_sample"
	fi
done
exit $status
