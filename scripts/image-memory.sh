#!/usr/bin/env bash
# Peak RSS of the real server (cmd/web) while 32 clients fetch one 9.3 MiB
# image at once (GET /img/{sha256}), three rounds, with the image cache
# (IMAGE_CACHE_BYTES, default 64 MiB) and without it (0: streamed from
# PostgreSQL a chunk at a time): the figures in docs/benchmarks.md, "Serving
# images". The peak is the process's VmHWM, reset through
# /proc/PID/clear_refs (Linux) after the image was uploaded.
#
#   scripts/image-memory.sh              # needs PostgreSQL, curl, python3
#   CLOSER_WEB=/path/to/binary scripts/image-memory.sh   # another build
#
# PG_ADMIN_URL names a server where the script may create and drop the
# database closer_image_memory (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."
admin_url="${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
db_url="${admin_url%/*}/closer_image_memory?sslmode=disable"
port="${PORT:-18398}"
base="http://127.0.0.1:$port"
clients="${CLIENTS:-32}"
work="$(mktemp -d)"
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	psql "$admin_url" -qc 'DROP DATABASE IF EXISTS closer_image_memory' >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

bin="${CLOSER_WEB:-}"
if [ -z "$bin" ]; then
	go build -o "$work/closer-web" ./cmd/web
	bin="$work/closer-web"
fi
psql "$admin_url" -qc 'DROP DATABASE IF EXISTS closer_image_memory' -c 'CREATE DATABASE closer_image_memory' >/dev/null 2>&1

start() { # [VAR=value...]: a fresh server with the given settings, logged in
	env "$@" DATABASE_URL="$db_url" ADDR="127.0.0.1:$port" BASE_URL="$base" ADMIN_EMAIL=r@example.org \
		ADMIN_PASSWORD=secret-password "$bin" >"$work/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$base/healthz" && break
		sleep 0.2
	done
	curl -s -c "$work/jar" -o /dev/null -d 'email=r@example.org&password=secret-password' "$base/admin/login"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

# A 1,800 × 1,800 RGB PNG of noise (it does not compress): 9.3 MiB.
python3 - "$work" <<'PY'
import os, struct, sys, zlib
def chunk(t, b): return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b) & 0xffffffff)
w = h = 1800
rows = b''.join(b'\0' + os.urandom(w * 3) for _ in range(h))
open(f'{sys.argv[1]}/noise.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
    + chunk(b'IDAT', zlib.compress(rows, 1)) + chunk(b'IEND', b''))
PY
sum=$(sha256sum "$work/noise.png" | cut -d' ' -f1)
start
curl -s -b "$work/jar" -o /dev/null -d 'title=Images&slug=img&questions_per_participant=5&status=draft&design=random' "$base/admin/studies"
curl -s -b "$work/jar" -o /dev/null -F "files=@$work/noise.png" "$base/admin/studies/img/items"
stop
echo "image: $(stat -c %s "$work/noise.png") bytes, $clients clients at once, 3 rounds"

measure() { # NAME [VAR=value...]
	local name=$1
	shift
	start "$@"
	echo 5 >"/proc/$pid/clear_refs"
	local idle t0 ok
	idle=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	t0=$(date +%s.%N)
	ok=0
	for _ in 1 2 3; do
		local curls=()
		for _ in $(seq "$clients"); do
			curl -s -o "$work/got.$RANDOM$RANDOM" -w '%{http_code}\n' "$base/img/$sum" >>"$work/codes" &
			curls+=($!)
		done
		wait "${curls[@]}" # not the server
	done
	for f in "$work"/got.*; do cmp -s "$f" "$work/noise.png" && ok=$((ok + 1)); done
	rm -f "$work"/got.*
	printf '%-28s idle %4d MiB  peak %4d MiB  %5.1f s  %s, %d whole images\n' "$name" $((idle / 1024)) \
		$(($(awk '/VmHWM/ {print $2}' "/proc/$pid/status") / 1024)) "$(echo "$(date +%s.%N) - $t0" | bc)" \
		"$(sort "$work/codes" | uniq -c | sed 's/^ *\([0-9]*\) /\1× /' | paste -sd ' ')" "$ok"
	rm -f "$work/codes"
	grep ERROR "$work/server.log" >&2 || true
	stop
}
measure "cache (64 MiB, the default)"
measure "no cache (streamed)" IMAGE_CACHE_BYTES=0
