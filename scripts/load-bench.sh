#!/usr/bin/env bash
# The collection benchmark of docs/benchmarks.md ("Collection under load"):
# simulated annotators (`closer load`) on one or more `web` replicas, side by
# side in the same window with `pgbench` running the write one answer makes
# (scripts/pgbench-answer.sql), on a private PostgreSQL cluster of its own
# (.data/bench, port 54339, fsync on, pg_stat_statements loaded) so that
# nothing else shares the database. It prints both rates, their ratio, the
# latency percentiles, the servers' peak RSS and the statements PostgreSQL
# spent its time on; everything lands in --out.
#
#   scripts/load-bench.sh                                   # random design, 200 annotators, 30 s
#   scripts/load-bench.sh --design landmark-k1 --repeats 40
#   scripts/load-bench.sh --design basis
#   scripts/load-bench.sh --format rank:8:2 --pgbench 0        # a rank 8-choose-2 study (odd-one-out, triplet)
#   LOAD_ROLE=web scripts/load-bench.sh --format rank:8:2 --pgbench 0   # the request path alone: no recompute in the server
#   scripts/load-bench.sh --concurrency 2000 --think exp:2s --pgbench 0
#   scripts/load-bench.sh --replicas 2 --design landmark-k1  # two web replicas and a worker
#   scripts/load-bench.sh --profile                          # also a 20 s CPU profile of replica 1
#   scripts/load-bench.sh --pgbench-after                    # pgbench alone after the load, not during it
#
# The study is a fresh copy of the demo study's 40 items ("bench", 50
# questions per participant) with the chosen design.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

format=triplet design=random concurrency=200 duration=30s think=0 replicas=1 pgclients=32 repeats=40 landmarks=10
out=""
profile=0
pgbench_after=0
extra_sql=""
web_bin=""
load_flags=()
while [ $# -gt 0 ]; do
	case "$1" in
	--design) design="$2"; shift 2 ;;
	--concurrency) concurrency="$2"; shift 2 ;;
	--duration) duration="$2"; shift 2 ;;
	--think) think="$2"; shift 2 ;;
	--ramp) load_flags+=(--ramp "$2"); shift 2 ;;
	--replicas) replicas="$2"; shift 2 ;;
	--pgbench) pgclients="$2"; shift 2 ;;
	--repeats) repeats="$2"; shift 2 ;;
	--landmarks) landmarks="$2"; shift 2 ;;
	--format) format="$2"; shift 2 ;; # triplet, odd-one-out or rank:N:K (issue 27)
	--out) out="$2"; shift 2 ;;
	--profile) profile=1; shift ;;
	--pgbench-after) pgbench_after=1; shift ;; # each alone on the machine, one after the other
	--sql) extra_sql="$2"; shift 2 ;; # an experiment: SQL run on the app's database before the load
	--web-bin) web_bin="$2"; shift 2 ;; # another build of the server (e.g. an older commit's), for a before/after
	--separate-next) load_flags+=(--separate-next); shift ;;

	*) echo "load-bench: unknown flag $1" >&2; exit 2 ;;
	esac
done
out="${out:-$root/.data/bench-out/$(date +%Y%m%d-%H%M%S)-$design-${format//:/-}-c$concurrency}"
mkdir -p "$out"

# --- the private cluster
port=54339
. scripts/bench-cluster.sh
bench_cluster bench "$port" -c max_connections=400 -c shared_buffers=512MB -c shared_preload_libraries=pg_stat_statements \
	-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c pg_stat_statements.track_planning=on
url() { echo "postgres://postgres@127.0.0.1:$port/$1?sslmode=disable"; }

# --- binaries
go build -o bin/web ./cmd/web
go build -o bin/closer ./cmd/closer
web="${web_bin:-bin/web}"

# --- databases: the app's, fresh; pgbench's, set up once and emptied
psqlc -d postgres -c "DROP DATABASE IF EXISTS closer_load WITH (FORCE)" -c "CREATE DATABASE closer_load"
psqlc -d closer_load -c "CREATE EXTENSION pg_stat_statements"
if [ "$pgclients" != 0 ]; then
	# A database set up before pgbench's clients answered as participants
	# of their own (migration 000021) is made again.
	if psqlc -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'closer_pgbench'" | grep -q 1 &&
		[ "$(psqlc -d closer_pgbench -c "SELECT count(*) FROM participants")" -lt 1000 ]; then
		psqlc -d postgres -c "DROP DATABASE closer_pgbench WITH (FORCE)"
	fi
	if ! psqlc -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'closer_pgbench'" | grep -q 1; then
		psqlc -d postgres -c "CREATE DATABASE closer_pgbench"
		# A setup that fails leaves no half-made database for the next run
		# to take as ready.
		if ! { DATABASE_URL="$(url closer_pgbench)" bin/web migrate up >/dev/null &&
			psqlc -d closer_pgbench -f scripts/pgbench-answer-setup.sql >/dev/null; }; then
			psqlc -d postgres -c "DROP DATABASE closer_pgbench"
			echo "load-bench: setting up pgbench's database failed" >&2
			exit 1
		fi
	fi
	DATABASE_URL="$(url closer_pgbench)" bin/web migrate up >/dev/null
	psqlc -d closer_pgbench -c "TRUNCATE answers, votes" -c "ALTER SEQUENCE pgbench_question RESTART" -c "VACUUM ANALYZE answers, votes"
fi

# --- the servers
token="bench-token-0123456789"
pids=()
bases=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT
start_web() { # name role addr [debug]
	local name="$1" role="$2" addr="$3" debug="${4:-}"
	DATABASE_URL="$(url closer_load)" ADDR="$addr" ROLE="$role" DEBUG_ADDR="$debug" \
		ADMIN_EMAIL=admin@example.com ADMIN_PASSWORD=closer-demo ADMIN_API_TOKEN="$token" \
		JOIN_RATE=0 LOG_LEVEL=warn "$web" >"$out/$name.log" 2>&1 &
	pids+=($!)
	echo $! >"$out/$name.pid"
}
wait_up() {
	for _ in $(seq 1 100); do
		curl -fsS "$1/healthz" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "load-bench: $1 did not come up" >&2
	exit 1
}
role="${LOAD_ROLE:-all}" # LOAD_ROLE=web: no background jobs (no recompute) in the measured server
[ "$replicas" -gt 1 ] && role=web
start_web web1 "$role" 127.0.0.1:18080 127.0.0.1:16060
wait_up http://127.0.0.1:18080
bases+=(http://127.0.0.1:18080)
for i in $(seq 2 "$replicas"); do
	start_web "web$i" web "127.0.0.1:$((18079 + i))"
	wait_up "http://127.0.0.1:$((18079 + i))"
	bases+=("http://127.0.0.1:$((18079 + i))")
done
if [ "$replicas" -gt 1 ]; then
	start_web worker worker 127.0.0.1:18099
fi

# --- the study: the demo's 40 items under the chosen design
case "$design" in
random) cfg='{}' ;;
landmark-k1 | landmark-k2) cfg="{\"seed\": 1, \"repeats\": $repeats, \"landmarks\": $landmarks}" ;;
basis) cfg='{"seed": 1, "repeats": 1, "coordinates": "rank-difference"}' ;;
*) echo "load-bench: unknown design $design" >&2; exit 2 ;;
esac
psqlc -d closer_load >/dev/null <<SQL
INSERT INTO studies (slug, title, questions_per_participant, status, design, design_config, format)
VALUES ('bench', 'Bench', 50, 'open', '$design', '$cfg', '$format');
INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
SELECT (SELECT id FROM studies WHERE slug = 'bench'), idx, label, file_name, content_type, sha256, width, height, data
FROM items WHERE study_id = (SELECT id FROM studies WHERE slug = 'demo');
SELECT pg_stat_statements_reset();
SQL
[ -n "$extra_sql" ] && psqlc -d closer_load -f "$extra_sql" >/dev/null

# --- CPU time (user + system, in clock ticks) of the web replicas and of
# the PostgreSQL backends serving the app's database: read before and
# after the run, so that the summary can say what an answer cost in CPU,
# a figure that other work on the machine disturbs far less than a rate.
ticks() { # pid...: the sum of their utime + stime
	local sum=0 p
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		# fields 14 and 15, after the command name in parentheses
		sum=$((sum + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
	done
	echo "$sum"
}
app_backends() { psqlc -d postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = 'closer_load' AND pid <> pg_backend_pid()"; }
web_ticks() { ticks "${pids[@]}"; }
declare -A pg_before=()
for p in $(app_backends); do pg_before[$p]="$(ticks "$p")"; done
web_before="$(web_ticks)"

# --- the run: closer load and pgbench in the same window
basearg="$(IFS=,; echo "${bases[*]}")"
bin/closer load --base "$basearg" --study bench --concurrency "$concurrency" --duration "$duration" --think "$think" \
	--admin-token "$token" --json "${load_flags[@]}" >"$out/load.json" 2>"$out/load.err" &
loadpid=$!
secs="${duration%s}"
pgpid=""
run_pgbench() {
	"$bindir/pgbench" -h 127.0.0.1 -p "$port" -U postgres -n -c "$pgclients" -j 2 -T "$secs" \
		-f scripts/pgbench-answer.sql closer_pgbench >"$out/pgbench.txt" 2>&1
}
if [ "$pgclients" != 0 ] && [ "$pgbench_after" = 0 ]; then
	run_pgbench &
	pgpid=$!
fi
if [ "$profile" = 1 ]; then
	sleep 3
	curl -fsS -o "$out/cpu.pprof" "http://127.0.0.1:16060/debug/pprof/profile?seconds=20" || true
fi
# peak RSS of the servers while the load runs
peak=0
while kill -0 "$loadpid" 2>/dev/null; do
	rss=0
	for f in "$out"/web*.pid; do
		r="$(ps -o rss= -p "$(cat "$f")" 2>/dev/null || echo 0)"
		rss=$((rss > r ? rss : r))
	done
	peak=$((peak > rss ? peak : rss))
	sleep 0.5
done
loadrc=0
wait "$loadpid" || loadrc=$?
[ -n "$pgpid" ] && wait "$pgpid"

web_cpu=$(($(web_ticks) - web_before))
pg_cpu=0
for p in $(app_backends); do pg_cpu=$((pg_cpu + $(ticks "$p") - ${pg_before[$p]:-0})); done
if [ "$pgclients" != 0 ] && [ "$pgbench_after" = 1 ]; then
	sleep 2 # the load's last requests and the design writers settle
	run_pgbench
fi

psqlc -d closer_load -F $'\t' -c "
	SELECT calls, round(total_exec_time + total_plan_time)::bigint AS ms, round(mean_exec_time::numeric, 3) AS mean_ms, round(mean_plan_time::numeric, 3) AS plan_ms,
		regexp_replace(left(query, 110), '\s+', ' ', 'g')
	FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'closer_load')
	ORDER BY total_exec_time + total_plan_time DESC LIMIT 20" >"$out/statements.tsv"

# --- the summary
aps="$(jq -r '.answers_per_s' "$out/load.json")"
tps=0
[ -f "$out/pgbench.txt" ] && tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/pgbench.txt" | head -1)"
{
	echo "design $design, format $format, $concurrency annotators, think $think, $duration, $replicas web replica(s)"
	jq -r '"closer load: \(.answers) answers, \(.answers_per_s | floor) answers/s; check ok: \(.check.ok), lost \(.check.lost), duplicated \(.check.duplicated)"' "$out/load.json"
	jq -r '.endpoints | to_entries[] | "  \(.key): p50 \(.value.p50_ms) ms, p95 \(.value.p95_ms) ms, p99 \(.value.p99_ms) ms, errors \(.value.errors)"' "$out/load.json"
	when="in the same window"
	[ "$pgbench_after" = 1 ] && when="alone, after the load"
	[ "$pgclients" != 0 ] && echo "pgbench ($pgclients clients, $when): $tps transactions/s; ratio $(echo "scale=3; $aps / $tps" | bc)"
	hz="$(getconf CLK_TCK)"
	answers="$(jq -r '.answers' "$out/load.json")"
	[ "$answers" -gt 0 ] && echo "CPU per answer: web $(echo "scale=3; 1000 * $web_cpu / $hz / $answers" | bc) ms, PostgreSQL (the app's backends) $(echo "scale=3; 1000 * $pg_cpu / $hz / $answers" | bc) ms"
	echo "peak RSS of a web replica: $((peak / 1024)) MB"
	echo "load exit status: $loadrc"
} | tee "$out/summary.txt"
echo "results in $out"
