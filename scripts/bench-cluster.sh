# Sourced by the load benchmarks (scripts/load-bench.sh, scripts/crowd-bench.sh):
# a private PostgreSQL cluster under .data/NAME/pg on 127.0.0.1:PORT, built
# with the installed server binaries and started with the extra server
# options given, if it is not running yet. Defines bindir, as_pg and psqlc.
#
#   bench_cluster NAME PORT [-c setting=value ...]
bench_cluster() {
	local name="$1" port="$2"
	shift 2
	local data="$root/.data/$name/pg"
	bindir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
	if [ ! -f "$data/PG_VERSION" ]; then
		mkdir -p "$data"
		[ "$(id -u)" = 0 ] && chown -R postgres: "$root/.data/$name"
		chmod 700 "$data"
		as_pg "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	fi
	if ! as_pg "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_pg "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
			-o "-p $port -k $data -c listen_addresses=127.0.0.1 $*" start >/dev/null
	fi
	bench_port="$port"
}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
psqlc() { "$bindir/psql" -h 127.0.0.1 -p "$bench_port" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
