#!/usr/bin/env bash
# `make run`: the app with its demo study. Uses DATABASE_URL when set,
# otherwise a private PostgreSQL cluster under .data/ (scripts/dev-postgres.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DATABASE_URL:-}" ]; then
	DATABASE_URL="$(./scripts/dev-postgres.sh start)"
	echo "Using the private PostgreSQL under .data/ ($DATABASE_URL); stop it with 'make clean-data' to delete it."
fi
export DATABASE_URL
export ADDR="${ADDR:-:8080}"
port="${ADDR##*:}"
export BASE_URL="${BASE_URL:-http://localhost:${port}}"
export ADMIN_EMAIL="${ADMIN_EMAIL:-admin@example.com}"
export ADMIN_PASSWORD="${ADMIN_PASSWORD:-closer-demo}"
echo "Admin login: $ADMIN_EMAIL / $ADMIN_PASSWORD (set ADMIN_EMAIL and ADMIN_PASSWORD to choose your own)"
# Built first, with a word on what is happening: the first build compiles
# every dependency and takes a few minutes on a small machine. The server
# then runs in place of this script, so Ctrl-C stops it cleanly (it shuts
# down and exits 0) rather than ending `go run` with "exit status 1".
echo "Building the server into bin/web (the first build takes a few minutes; later ones seconds)..."
go build -o bin/web ./cmd/web
echo "Starting closer on $BASE_URL (Ctrl-C stops it)"
exec bin/web
