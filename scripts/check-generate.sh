#!/usr/bin/env bash
# Fails when `templ generate` changes or adds a file: the generated
# *_templ.go files are committed and must match their .templ sources.
set -euo pipefail
cd "$(dirname "$0")/.."
before="$(git status --porcelain -- '*_templ.go')"
go tool templ generate >/dev/null
after="$(git status --porcelain -- '*_templ.go')"
if [ "$before" != "$after" ] || ! git diff --quiet -- '*_templ.go'; then
	echo "templ generate changed generated files; run 'make generate' and commit:" >&2
	git status --porcelain -- '*_templ.go' >&2
	git diff --stat -- '*_templ.go' >&2
	exit 1
fi
echo "templ: generated files up to date"
