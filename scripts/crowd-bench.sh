#!/usr/bin/env bash
# A design study under a realistic crowd (docs/benchmarks.md, issue 24): one
# server, three studies holding the demo study's 40 items (landmark-k1 with
# 12 landmarks and repeats 60, active, random; 50 questions per
# participant), and `closer load` with the same crowd on each, one after the
# other in the same run, so that the three can be compared on a shared
# machine. Each run is --concurrency annotators with exponential think time
# arriving over --ramp. During each run it samples PostgreSQL's wait events
# (pg_stat_activity, every 0.5 s) and reads the CPU time of the server, of
# the app's PostgreSQL backends and of the load generator itself from
# /proc; with --profile it also takes a CPU profile (20 s) and an execution
# trace (4 s) of the server during the landmark run. Every request goes to
# DESIGN-events.csv (closer load --events); the summary lists the seconds
# with answers over 100 ms and the study's recomputes (start, end) on the
# same clock. Everything lands in --out; the summary is summary.txt.
#
#   scripts/crowd-bench.sh                                  # 1,500 annotators, exp:2s, ramp 15 s, 45 s each
#   scripts/crowd-bench.sh --designs landmark-k1 --profile  # one study, with a CPU profile
#   scripts/crowd-bench.sh --web-bin /tmp/web-before        # another build of the server, for a before/after
#   scripts/crowd-bench.sh --fsync-probe                    # also the disk's own fsync latency during each run
#   scripts/crowd-bench.sh --db-setting synchronous_commit=off  # a diagnosis: commits that do not wait for the disk
#   CROWD_ROLE=web scripts/crowd-bench.sh                   # a diagnosis: the server without its background jobs (no recompute)
#
# It runs a private PostgreSQL cluster of its own (.data/crowd, port 54349,
# fsync on), apart from scripts/load-bench.sh's, so that both may run.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

concurrency=1500 think=exp:2s ramp=15s duration=45s
designs="landmark-k1 active random"
out="" profile=0 web_bin="" fsync_probe=0
db_settings=()
while [ $# -gt 0 ]; do
	case "$1" in
	--concurrency) concurrency="$2"; shift 2 ;;
	--think) think="$2"; shift 2 ;;
	--ramp) ramp="$2"; shift 2 ;;
	--duration) duration="$2"; shift 2 ;;
	--designs) designs="$2"; shift 2 ;;
	--out) out="$2"; shift 2 ;;
	--profile) profile=1; shift ;;
	--web-bin) web_bin="$2"; shift 2 ;;
	--fsync-probe) fsync_probe=1; shift ;;
	--db-setting) db_settings+=("$2"); shift 2 ;; # name=value, set on the app's database (ALTER DATABASE)
	*) echo "crowd-bench: unknown flag $1" >&2; exit 2 ;;
	esac
done
out="${out:-$root/.data/crowd-out/$(date +%Y%m%d-%H%M%S)-c$concurrency}"
mkdir -p "$out"

# --- the private cluster
port=54349
. scripts/bench-cluster.sh
bench_cluster crowd "$port" -c max_connections=200 -c shared_buffers=256MB -c fsync=on -c synchronous_commit=on \
	-c shared_preload_libraries=pg_stat_statements
dburl="postgres://postgres@127.0.0.1:$port/closer_crowd?sslmode=disable"

# --- binaries
go build -o bin/web ./cmd/web
go build -o bin/closer ./cmd/closer
go build -o bin/fsyncprobe ./scripts/fsyncprobe
web="${web_bin:-bin/web}"

psqlc -d postgres -c "DROP DATABASE IF EXISTS closer_crowd WITH (FORCE)" -c "CREATE DATABASE closer_crowd"
psqlc -d closer_crowd -c "CREATE EXTENSION pg_stat_statements"
for kv in "${db_settings[@]}"; do
	psqlc -d postgres -c "ALTER DATABASE closer_crowd SET ${kv%%=*} = '${kv#*=}'"
done

# --- the server (ROLE=all: the recompute worker that scores the active
# design's pool runs in the same process, as on a single-machine install)
token="crowd-token-0123456789"
addr=127.0.0.1:18180 debug=127.0.0.1:16160
# JOIN_RATE=0: closer load joins all its annotators from one loopback
# address, which the per-address join limit (docs/security.md) would
# refuse; a real crowd joins from as many addresses as it has people.
DATABASE_URL="$dburl" ADDR="$addr" ROLE="${CROWD_ROLE:-all}" DEBUG_ADDR="$debug" JOIN_RATE=0 \
	ADMIN_EMAIL=admin@example.com ADMIN_PASSWORD=closer-demo ADMIN_API_TOKEN="$token" \
	LOG_LEVEL=warn "$web" >"$out/web.log" 2>&1 &
webpid=$!
trap 'kill $webpid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fsS "http://$addr/healthz" >/dev/null || { echo "crowd-bench: the server did not come up" >&2; exit 1; }

# --- the studies: the demo's 40 items under each design
for d in $designs; do
	case "$d" in
	random) cfg='{}' ;;
	landmark-k1) cfg='{"seed": 1, "repeats": 60, "landmarks": 12}' ;;
	active) cfg='{"seed": 1, "repeats": 1, "warmup": 10, "score": "uncertainty", "model": "tste", "candidates": 1000}' ;;
	*) echo "crowd-bench: unknown design $d" >&2; exit 2 ;;
	esac
	psqlc -d closer_crowd >/dev/null <<SQL
INSERT INTO studies (slug, title, questions_per_participant, status, design, design_config)
VALUES ('crowd-$d', 'Crowd $d', 50, 'open', '$d', '$cfg');
INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
SELECT (SELECT id FROM studies WHERE slug = 'crowd-$d'), idx, label, file_name, content_type, sha256, width, height, data
FROM items WHERE study_id = (SELECT id FROM studies WHERE slug = 'demo');
SQL
done

ticks() { # pid...: the sum of their utime + stime (clock ticks); a process gone counts 0
	local sum=0 p t
	for p in "$@"; do
		t="$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}')"
		sum=$((sum + ${t:-0}))
	done
	echo "$sum"
}
app_backends() { psqlc -d postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = 'closer_crowd' AND pid <> pg_backend_pid()"; }
hz="$(getconf CLK_TCK)"

: >"$out/summary.txt"
for d in $designs; do
	sleep 3 # the previous run's writers and jobs settle
	declare -A pg_before=()
	for p in $(app_backends); do pg_before[$p]="$(ticks "$p")"; done
	web_before="$(ticks "$webpid" $(pgrep -P "$webpid"))" # with the jobs' child (WORKER_NICE)
	psqlc -d closer_crowd -c "SELECT pg_stat_statements_reset()" >/dev/null
	t0="$(date +%s.%N)"
	bin/closer load --base "http://$addr" --study "crowd-$d" --concurrency "$concurrency" --think "$think" \
		--ramp "$ramp" --duration "$duration" --admin-token "$token" --events "$out/$d-events.csv" --json >"$out/$d.json" 2>"$out/$d.err" &
	loadpid=$!
	probepid=""
	if [ "$fsync_probe" = 1 ]; then
		bin/fsyncprobe -dir "$root/.data/crowd" -duration "$duration" >"$out/$d-fsync.txt" 2>&1 &
		probepid=$!
	fi
	if [ "$profile" = 1 ] && [ "$d" = landmark-k1 ]; then
		(sleep "${ramp%s}"; curl -fsS -o "$out/$d-cpu.pprof" "http://$debug/debug/pprof/profile?seconds=20" || true) &
		(sleep "$(( ${ramp%s} + 1 ))"; curl -fsS -o "$out/$d-trace.out" "http://$debug/debug/pprof/trace?seconds=4" || true) &
	fi
	# wait events of the app's backends, every 0.5 s, while the load runs
	load_ticks=0
	while kill -0 "$loadpid" 2>/dev/null; do
		load_ticks="$(ticks "$loadpid")" # read while it lives: its last reading stands
		psqlc -d postgres -F $'\t' -c "SELECT state, coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-'), left(regexp_replace(query, '\s+', ' ', 'g'), 70),
				round(extract(epoch FROM clock_timestamp()) - $t0, 1)
			FROM pg_stat_activity WHERE datname = 'closer_crowd' AND pid <> pg_backend_pid() AND state <> 'idle'" >>"$out/$d-waits.tsv" 2>/dev/null || true
		sleep 0.5
	done
	loadrc=0
	wait "$loadpid" || loadrc=$?
	[ -n "$probepid" ] && wait "$probepid"
	t1="$(date +%s.%N)"
	web_cpu=$(($(ticks "$webpid" $(pgrep -P "$webpid")) - web_before))
	pg_cpu=0
	for p in $(app_backends); do pg_cpu=$((pg_cpu + $(ticks "$p") - ${pg_before[$p]:-0})); done
	unset pg_before
	psqlc -d closer_crowd -F $'\t' -c "
		SELECT calls, round(total_exec_time)::bigint AS ms, round(mean_exec_time::numeric, 3) AS mean_ms,
			regexp_replace(left(query, 110), '\s+', ' ', 'g')
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'closer_crowd')
		ORDER BY total_exec_time DESC LIMIT 15" >"$out/$d-statements.tsv"
	wall="$(echo "$t1 - $t0" | bc)"
	{
		echo "== $d: $concurrency annotators, think $think, ramp $ramp, $duration"
		jq -r '"closer load: \(.answers) answers, \(.answers_per_s | floor) answers/s; participants \(.participants); check ok: \(.check.ok), lost \(.check.lost), duplicated \(.check.duplicated)"' "$out/$d.json"
		jq -r '.endpoints | to_entries[] | "  \(.key): p50 \(.value.p50_ms) ms, p99 \(.value.p99_ms) ms, max \(.value.max_ms // "-") ms, errors \(.value.errors); after the ramp p50 \(.value.steady_p50_ms // "-") ms, p99 \(.value.steady_p99_ms // "-") ms of \(.value.steady_ok // 0)"' "$out/$d.json"
		echo "CPU share of the $wall s (2 cores = 200%): web $(echo "scale=1; 100 * $web_cpu / $hz / $wall" | bc)%, PostgreSQL (app's backends) $(echo "scale=1; 100 * $pg_cpu / $hz / $wall" | bc)%, closer load $(echo "scale=1; 100 * $load_ticks / $hz / $wall" | bc)%"
		answers="$(jq -r '.answers' "$out/$d.json")"
		[ "$answers" -gt 0 ] && echo "CPU per answer: web $(echo "scale=3; 1000 * $web_cpu / $hz / $answers" | bc) ms, PostgreSQL $(echo "scale=3; 1000 * $pg_cpu / $hz / $answers" | bc) ms, closer load $(echo "scale=3; 1000 * $load_ticks / $hz / $answers" | bc) ms"
		echo "machine load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		[ "$fsync_probe" = 1 ] && cat "$out/$d-fsync.txt"
		[ ${#db_settings[@]} -gt 0 ] && echo "database settings: ${db_settings[*]}"
		echo "  wait events sampled (top 6):"
		cut -f2,3 "$out/$d-waits.tsv" | sort | uniq -c | sort -rn | head -6 | sed 's/^/    /'
		# when the slow answers came (seconds since the load's start), and
		# the study's recomputes in the same time
		echo "  seconds with answers over 100 ms (second: how many, the slowest ms):"
		awk -F, 'NR > 1 && $2 == "answer" && $4 > 100 { s = int($1 / 1000); n[s]++; if ($4 > m[s]) m[s] = $4 }
			END { for (s in n) printf "%d %d %.0f\n", s, n[s], m[s] }' "$out/$d-events.csv" | sort -n | awk '{ printf "    %ss: %s, %s ms\n", $1, $2, $3 }' | head -20
		echo "  recomputes (start and end, seconds since the load's start; stage):"
		psqlc -d closer_crowd -F ' ' -c "SELECT round(extract(epoch FROM r.started_at) - $t0, 1), coalesce(round(extract(epoch FROM r.finished_at) - $t0, 1)::text, '-'), r.answers, r.status,
				(SELECT count(*) FROM recompute_trust t WHERE t.run_id = r.id) AS trust
			FROM recompute_runs r JOIN studies s ON s.id = r.study_id WHERE s.slug = 'crowd-$d' ORDER BY r.id" | sed 's/^/    /' | tail -12
		echo "load exit status: $loadrc"
	} | tee -a "$out/summary.txt"
done
echo "results in $out"
