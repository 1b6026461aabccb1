#!/usr/bin/env bash
# Peak RSS of the real server (cmd/web) while it handles hostile and large
# uploads: the figures in docs/benchmarks.md, "Upload and import memory".
# Each scenario runs against a freshly started server; the peak is the
# process's VmHWM, reset through /proc/PID/clear_refs (Linux).
#
#   scripts/upload-memory.sh    # needs PostgreSQL, curl, python3
#
# PG_ADMIN_URL names a server where the script may create and drop the
# database closer_upload_memory (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."
admin_url="${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
db_url="${admin_url%/*}/closer_upload_memory?sslmode=disable"
port="${PORT:-18397}"
base="http://127.0.0.1:$port"
work="$(mktemp -d)"
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	psql "$admin_url" -qc 'DROP DATABASE IF EXISTS closer_upload_memory' >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/closer-web" ./cmd/web
psql "$admin_url" -qc 'DROP DATABASE IF EXISTS closer_upload_memory' -c 'CREATE DATABASE closer_upload_memory' >/dev/null 2>&1

start() {
	DATABASE_URL="$db_url" ADDR="127.0.0.1:$port" BASE_URL="$base" ADMIN_EMAIL=r@example.org \
		ADMIN_PASSWORD=secret-password "$work/closer-web" >"$work/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$base/healthz" && break
		sleep 0.2
	done
	curl -s -c "$work/jar" -o /dev/null -d 'email=r@example.org&password=secret-password' "$base/admin/login"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

# measure NAME COMMAND...: a fresh server, its RSS when idle and its peak
# while COMMAND runs, and the first line of what the server answered.
measure() {
	local name=$1
	shift
	start
	echo 5 >"/proc/$pid/clear_refs"
	local idle t0
	idle=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	t0=$(date +%s.%N)
	"$@" >/dev/null
	grep -q -e 'ERROR' "$work/server.log" && grep ERROR "$work/server.log" >&2
	printf '%-52s idle %4d MiB  peak %4d MiB  %5.1f s  %s\n' "$name" $((idle / 1024)) \
		$(($(awk '/VmHWM/ {print $2}' "/proc/$pid/status") / 1024)) "$(echo "$(date +%s.%N) - $t0" | bc)" \
		"$(cat "$work"/out* 2>/dev/null | grep -o -e 'HTTP 303' -e '[0-9]* added, [0-9]* rejected' -e 'class="error"[^<]*' |
			sed 's/class="error" role="alert">//' | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1× /' | paste -sd ';' | cut -c1-110)"
	rm -f "$work"/out*
	stop
}
post() { # FIELD FILE PATH [more curl args]: an upload as the logged-in admin
	local field=$1 file=$2 path=$3
	shift 3
	curl -s -b "$work/jar" -o "$work/out.$RANDOM$RANDOM" -w 'HTTP %{http_code}\n' -F "$field=@$file" "$@" "$base$path" >>"$work/out.status"
}

# The study that receives uploads, and a bundle to spoil.
start
curl -s -b "$work/jar" -o /dev/null -d 'title=Uploads&slug=up&questions_per_participant=5&status=draft&design=random' "$base/admin/studies"
curl -s -b "$work/jar" -o "$work/bundle.zip" "$base/admin/studies/demo/bundle.zip"
stop

python3 - "$work" <<'EOF'
import os, struct, sys, zipfile, zlib
work = sys.argv[1]
def chunk(t, b): return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b) & 0xffffffff)
def png(w, h, colour, bpp, raw):
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, colour, 0, 0, 0))
            + chunk(b'IDAT', raw) + chunk(b'IEND', b''))
def zeros(n):  # zlib stream of n zero bytes, compressed piece by piece
    c, out, piece = zlib.compressobj(9), [], bytes(16 << 20)
    while n > 0:
        out.append(c.compress(piece[:min(n, len(piece))])); n -= len(piece)
    return b''.join(out) + c.flush()
small = png(2, 2, 6, 4, zlib.compress(bytes(2 * (1 + 8))))
with zipfile.ZipFile(f'{work}/padded.zip', 'w', zipfile.ZIP_DEFLATED) as z:  # the probe's zip bomb
    for i in range(100):
        z.writestr(f'img{i:03d}.png', small + bytes((10 << 20) - len(small)))
open(f'{work}/huge.png', 'wb').write(png(50000, 50000, 6, 4, zeros(1024)))
open(f'{work}/zbomb.png', 'wb').write(png(20000, 20000, 6, 4, zeros(20000 * (1 + 20000 * 4))))
for i in range(3):  # 24 megapixels of RGBA: decodes to 92 MiB
    raw = bytearray(4000 * (1 + 6000 * 4)); raw[1] = i + 1
    open(f'{work}/big{i}.png', 'wb').write(png(6000, 4000, 6, 4, zlib.compress(bytes(raw), 9)))
with zipfile.ZipFile(f'{work}/photos.zip', 'w', zipfile.ZIP_STORED) as z:  # incompressible photos
    for i in range(200):
        rows = b''.join(b'\0' + os.urandom(400 * 3) for _ in range(400))
        z.writestr(f'photos/p{i:03d}.png', png(400, 400, 2, 3, zlib.compress(rows, 1)))
with open(f'{work}/triplets.csv', 'w') as f:  # 200,000 triplets of 1,000 participants
    f.write('anchor,closer,farther,participant,response_ms\n')
    for i in range(200_000):
        f.write(f'{i % 97},{(i + 1) % 97},{(i + 3) % 97},w{i % 1000},{500 + i % 3000}\n')
src = zipfile.ZipFile(f'{work}/bundle.zip')
with zipfile.ZipFile(f'{work}/rows.zip', 'w', zipfile.ZIP_DEFLATED) as z:  # 5 million empty answer rows
    for f in src.infolist():
        data = src.read(f)
        if f.filename == 'manifest.json':
            data = data.replace(b'"answers": 0', b'"answers": 5000000')
        if f.filename == 'answers.csv':
            data += b',,,,,,,,,,\n' * 5_000_000
        z.writestr(f, data)
EOF
ls -l "$work"/*.zip "$work"/*.png "$work"/*.csv | awk '{printf "%-14s %10d bytes\n", $NF, $5}' | sed "s|$work/||"

measure "idle (login only)" true
measure "zip: 100 PNGs padded to 10 MiB" post files "$work/padded.zip" /admin/studies/up/items
measure "three such zips at once" bash -c "$(declare -f post); work=$work base=$base; post files $work/padded.zip /admin/studies/up/items & post files $work/padded.zip /admin/studies/up/items & post files $work/padded.zip /admin/studies/up/items & wait"
measure "bundle: 5 million empty answer rows" post file "$work/rows.zip" /admin/import/bundle -F slug=copy
measure "PNG header of 50,000 x 50,000" post files "$work/huge.png" /admin/studies/up/items
measure "PNG zlib bomb of 20,000 x 20,000" post files "$work/zbomb.png" /admin/studies/up/items
measure "a 24-megapixel RGBA PNG (accepted)" post files "$work/big0.png" /admin/studies/up/items
measure "three different ones at once" bash -c "$(declare -f post); work=$work base=$base; post files $work/big1.png /admin/studies/up/items & post files $work/big2.png /admin/studies/up/items & post files $work/big0.png /admin/studies/up/items & wait"
measure "zip of 200 photos, 92 MiB (accepted)" post files "$work/photos.zip" /admin/studies/up/items
measure "triplet CSV, 200,000 rows (imported)" post file "$work/triplets.csv" /admin/import/triplets -F slug=trip -F title=Triplets
start
curl -s -b "$work/jar" -o "$work/trip.zip" "$base/admin/studies/trip/bundle.zip"
stop
measure "its bundle, $(($(stat -c %s "$work/trip.zip") >> 20)) MiB (imported)" post file "$work/trip.zip" /admin/import/bundle -F slug=trip-copy
