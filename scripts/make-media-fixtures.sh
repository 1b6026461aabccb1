#!/usr/bin/env bash
# Regenerates the small sound and video files internal/avfile's tests read
# (internal/avfile/testdata/). Needs ffmpeg (Debian: apt-get install -y
# --no-install-recommends ffmpeg); CI does not, so the files are committed.
# Each lasts 5 s (the tests check the probed duration against 5 s within
# 1%) and is a few KiB: low sample rates, low bitrates, a tiny picture.
set -euo pipefail
cd "$(dirname "$0")/../internal/avfile/testdata"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
tone="sine=frequency=440:sample_rate=8000:duration=5"
quiet="anullsrc=channel_layout=mono:sample_rate=8000,atrim=duration=5"
ff -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.5" -c:a pcm_u8 tone.wav
ff -f lavfi -i "$tone" -c:a libmp3lame -b:a 8k tone.mp3
ff -f lavfi -i "$tone" -c:a libopus -b:a 6k tone-opus.ogg
ff -f lavfi -i "$quiet" -c:a libvorbis -q:a 0 tone-vorbis.ogg
ff -f lavfi -i "$quiet" -c:a flac -sample_fmt s16 tone.flac
ff -f lavfi -i "$tone" -c:a aac -b:a 8k tone.m4a
# The benchmark's frames: CD-rate MP3 at 128 kbit/s, as most MP3s are.
ff -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.5" -c:a libmp3lame -b:a 128k -write_xing 0 cbr128.mp3
ff -f lavfi -i "color=c=gray:s=64x48:r=5:d=5" -f lavfi -i "$quiet" -c:v libx264 -preset veryslow -pix_fmt yuv420p \
	-c:a aac -b:a 8k -shortest clip.mp4
ff -f lavfi -i "color=c=gray:s=64x48:r=5:d=5" -f lavfi -i "$quiet" -c:v libvpx-vp9 -b:v 20k -c:a libopus -b:a 6k -shortest clip.webm
# Written to a pipe, as a browser's recorder writes it: no Duration, no
# Segment size, so the length comes from the blocks' timestamps.
ff -f lavfi -i "color=c=gray:s=64x48:r=5:d=5" -c:v libvpx -b:v 20k -f webm pipe:1 > clip-stream.webm
ls -l
