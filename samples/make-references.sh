#!/usr/bin/env bash
# Rebuilds samples/references/*.ogg and samples/clip.mp3 (+ expected-clip.json)
# from the Debian packages wesnoth-1.16-music and supertux-data.
# Deterministic for a given ffmpeg/libvorbis/libmp3lame build.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/references"
W=/usr/share/games/wesnoth/1.16/data/core/music
S=/usr/share/games/supertux2/music
mkdir -p "$OUT"

# slug | source file | start in source (s) | title | artist | album
REFS=(
  "wesnoth-knolls|$W/knolls.ogg|245|The Knolls of Doldesh|Timothy Pinkham|The Battle for Wesnoth OST"
  "wesnoth-the-dangerous-symphony|$W/the_dangerous_symphony.ogg|20|The Dangerous Symphony|Gianmarco Leone|The Battle for Wesnoth OST"
  "wesnoth-battle|$W/battle.ogg|155|Battle Music|Aleksi Aubry-Carlson|The Battle for Wesnoth OST"
  "supertux-chipdisko|$S/antarctic/chipdisko.ogg|30|Mortimer's Chipdisko|Mortimer Twang|SuperTux Soundtrack"
  "supertux-forest|$S/forest/forest.ogg|20|Forest Dance|Wansti|SuperTux Soundtrack"
)
LEN=40   # excerpt length (s)

for r in "${REFS[@]}"; do
  IFS='|' read -r slug src ss title artist album <<<"$r"
  [ -f "$src" ] || { echo "missing $src (install the Debian package)" >&2; exit 1; }
  # -ss/-t after -i: decode-and-discard, sample-exact cut.
  ffmpeg -nostdin -v error -y -i "$src" -ss "$ss" -t "$LEN" -map 0:a -map_metadata -1 -fflags +bitexact \
    -ar 44100 -ac 2 -c:a libvorbis -q:a 3 \
    -metadata title="$title" -metadata artist="$artist" -metadata album="$album" \
    -metadata comment="soundmark sample: ${LEN}s excerpt from $(basename "$src") at ${ss}s" \
    "$OUT/$slug.ogg"
  echo "wrote $OUT/$slug.ogg"
done

# 10 s identify-demo clip, cut from the middle of one reference.
CLIP_ID=supertux-forest
CLIP_AT=15.0
ffmpeg -nostdin -v error -y -i "$OUT/$CLIP_ID.ogg" -ss "$CLIP_AT" -t 10 -map_metadata -1 \
  -ar 44100 -ac 2 -c:a libmp3lame -b:a 128k "$HERE/clip.mp3"
printf '{"id":"%s","matchOffset":%s}\n' "$CLIP_ID" "$CLIP_AT" > "$HERE/expected-clip.json"
echo "wrote $HERE/clip.mp3 and expected-clip.json"
