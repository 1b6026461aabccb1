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
exec go run ./cmd/web
