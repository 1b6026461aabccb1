#!/usr/bin/env bash
# A private PostgreSQL cluster for `make run`, under .data/pg, built with the
# installed server binaries (initdb, pg_ctl). It listens on 127.0.0.1:$PGPORT
# (default 54329) and on a socket inside .data, so it never clashes with a
# system server. Run as root, the cluster is owned by the postgres user.
#
#   scripts/dev-postgres.sh start   # create if needed, start, print DATABASE_URL
#   scripts/dev-postgres.sh stop
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD/.data"
data="$root/pg"
port="${PGPORT:-54329}"

bindir=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) /usr/local/pgsql/bin; do
	if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir="$d"; break; fi
done
if [ -z "$bindir" ]; then
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		bindir="$(dirname "$(command -v initdb)")"
	else
		echo "dev-postgres: no PostgreSQL server binaries (initdb, pg_ctl) found." >&2
		echo "Install them (Debian: apt-get install postgresql) or set DATABASE_URL." >&2
		exit 1
	fi
fi

# as root, run the server as the postgres user (PostgreSQL refuses root)
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		if ! id postgres >/dev/null 2>&1; then
			echo "dev-postgres: running as root but there is no postgres user to own the cluster" >&2
			exit 1
		fi
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "${1:-start}" in
start)
	mkdir -p "$root"
	if [ ! -f "$data/PG_VERSION" ]; then
		mkdir -p "$data"
		[ "$(id -u)" = 0 ] && chown postgres: "$root" "$data"
		chmod 700 "$data"
		as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$root/initdb.log" 2>&1 ||
			{ echo "dev-postgres: initdb failed, see $root/initdb.log" >&2; exit 1; }
	fi
	if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_owner "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
			-o "-p $port -k $data -c listen_addresses=127.0.0.1" start >/dev/null ||
			{ echo "dev-postgres: server did not start, see $data/server.log" >&2; exit 1; }
	fi
	if ! as_owner "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname = 'closer'" | grep -q 1; then
		as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres closer
	fi
	echo "postgres://postgres@127.0.0.1:$port/closer?sslmode=disable"
	;;
stop)
	if [ -f "$data/PG_VERSION" ]; then
		as_owner "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true
	fi
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
