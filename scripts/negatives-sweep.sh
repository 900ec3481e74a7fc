#!/usr/bin/env bash
# False-play sweep for `soundmark scan` and `monitor` (not part of `make test`).
#
# Builds a small catalog of one game's tracks and scans (and monitors) whole tracks of music
# that is NOT in it: the same game's other tracks and another game's. Every segment and every
# `segment.started` event is a false play. Prints, per set: hours scanned, false segments,
# false activities, their highest confidence, and the partial-material entries reported.
#
# Sets (Debian packages wesnoth-1.16-music, hedgewars-data, supertux-data, warzone2100-music):
#   wes11  8 Wesnoth + 3 Hedgewars tracks (beach, jungle, snow); the other 32 Wesnoth and 23
#          Hedgewars tracks scanned (about 3 h): one composer's album against its other tracks.
#   stx10  10 SuperTux tracks; the other SuperTux tracks (they share loops and instruments)
#          and Hedgewars' underwater.ogg scanned.
#   wz8    8 Warzone 2100 legacy/aftermath tracks (stems shared across the albums); the other
#          Warzone tracks scanned.
#
# usage: scripts/negatives-sweep.sh [--bin PATH] [--out DIR] [--jobs N] [--no-monitor]
#                                   [--sets wes11,stx10,wz8] [-- EXTRA SCAN/MONITOR OPTIONS]
# Output: DIR/SET/scan/*.json, DIR/SET/monitor/*.jsonl, DIR/summary.tsv and a table on stdout.
set -euo pipefail

bin=.build/release/soundmark out=/tmp/soundmark-negatives-sweep jobs=2 monitor=1 sets=wes11,stx10,wz8
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --no-monitor) monitor=0; shift ;;
        --sets) sets=$2; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "negatives-sweep: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
bin=$(readlink -f "$bin")
[ -x "$bin" ] || { echo "negatives-sweep: no soundmark binary at $bin (swift build -c release)" >&2; exit 2; }
W=/usr/share/games/wesnoth/1.16/data/core/music
H=/usr/share/games/hedgewars/Data/Music
S=/usr/share/games/supertux2/music
Z=/usr/share/games/warzone2100/music/albums
mkdir -p "$out"

# set_files SET -> two arrays: catalog=(…) others=(…)
set_files() {
    catalog=() others=()
    case "$1" in
    wes11)
        for n in wanderer the_deep_path loyalists heroes_rite knalgan_theme knolls elvish-theme journeys_end; do catalog+=("$W/$n.ogg"); done
        catalog+=("$H/Beach.ogg" "$H/Jungle.ogg" "$H/snow.ogg") ;;
    stx10)
        for n in forest/forest forest/forest2 forest/forest3 forest/shallow-green forest/ghostforest \
                 antarctic/airship_2 antarctic/arctic_breeze antarctic/chipdisko antarctic/voc-night castle/fortress; do
            catalog+=("$S/$n.ogg"); done ;;
    wz8)
        for n in legacy_soundtrack/track4 legacy_soundtrack/track7 legacy_soundtrack/track9 legacy_soundtrack/track12 \
                 aftermath_soundtrack/track18 aftermath_soundtrack/track21 aftermath_soundtrack/track24 original_soundtrack/track1; do
            catalog+=("$Z/$n.opus"); done ;;
    *) echo "negatives-sweep: unknown set '$1'" >&2; exit 2 ;;
    esac
    local pool=()
    case "$1" in
    wes11) pool=("$W"/*.ogg "$H"/*.ogg) ;;
    stx10) pool=("$S"/*/*.ogg "$H/underwater.ogg") ;;
    wz8) pool=("$Z"/legacy_soundtrack/*.opus "$Z"/aftermath_soundtrack/*.opus "$Z"/original_soundtrack/*.opus) ;;
    esac
    for f in "${pool[@]}"; do
        case "$f" in */silence.ogg|*/menu.opus) continue ;; esac
        printf '%s\n' "${catalog[@]}" | grep -qxF "$f" || others+=("$f")
    done
}

printf 'set\thours\ttracks\tfalse_segments\tmax_confidence\tfalse_activities\tpartial\n' > "$out/summary.tsv"
IFS=, read -r -a setlist <<< "$sets"
for set in "${setlist[@]}"; do
    set_files "$set"
    d=$out/$set
    rm -rf "$d"; mkdir -p "$d/scan" "$d/monitor"
    "$bin" catalog add --catalog "$d/catalog.db" --allow-duplicates "${catalog[@]}" >/dev/null 2>&1
    printf '%s\n' "${others[@]}" > "$d/others.txt"
    export bin d monitor
    export EXTRA="${extra[*]:-}"
    # shellcheck disable=SC2016
    xargs -a "$d/others.txt" -P "$jobs" -I{} bash -c '
        f="$1"; name=$(basename "${f%.*}")
        "$bin" scan --catalog "$d/catalog.db" --format json --jobs 1 $EXTRA "$f" > "$d/scan/$name.json" 2>/dev/null || true
        if [ "$monitor" = 1 ]; then
            "$bin" monitor --catalog "$d/catalog.db" $EXTRA "$f" > "$d/monitor/$name.jsonl" 2>/dev/null || true
        fi' _ {}
    python3 - "$set" "$d" "$out/summary.tsv" <<'EOF'
import json, os, subprocess, sys
name, d, summary = sys.argv[1:]
others = [l.strip() for l in open(os.path.join(d, "others.txt")) if l.strip()]
hours = 0.0
for f in others:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", f],
                         capture_output=True, text=True).stdout.strip()
    hours += float(out or 0) / 3600
segs, acts, partial, top = [], 0, 0, 0.0
for f in sorted(os.listdir(os.path.join(d, "scan"))):
    text = open(os.path.join(d, "scan", f)).read().strip()
    if not text:
        continue
    o = json.loads(text.splitlines()[0])
    for s in o.get("segments", []):
        segs.append((f, s))
        top = max(top, s.get("confidence", 0))
    partial += len(o.get("partial", []))
for f in sorted(os.listdir(os.path.join(d, "monitor"))):
    for line in open(os.path.join(d, "monitor", f)):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "segment.started":
            acts += 1
print("%s: %.2f h of %d tracks: %d false segments (highest confidence %.3f), %d false activities, %d partial"
      % (name, hours, len(others), len(segs), top, acts, partial))
for f, s in segs:
    r = s.get("reference", {})
    print("  %s %.2f-%.2f %s conf %.3f hits %s" % (f, s["start"], s["end"], r.get("id") if isinstance(r, dict) else r,
                                                 s.get("confidence", 0), s.get("hits")))
with open(summary, "a") as f:
    f.write("%s\t%.2f\t%d\t%d\t%.3f\t%d\t%d\n" % (name, hours, len(others), len(segs), top, acts, partial))
EOF
done
