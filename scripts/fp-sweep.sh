#!/usr/bin/env bash
# False-positive sweep for `soundmark identify` (not part of `make test`).
#
# Cuts clips of 5 s, 10 s and 30 s from music that is NOT in the catalog searched and runs
# `identify --threshold 0` on each, then reports, per catalog size and clip length, the number
# of clips, the highest confidence any reference reached and how many clips reached the
# default threshold 0.5 (the floor: none).
#
# Catalogs: 1 reference (Wesnoth's knolls.ogg), 10 references (the first 10 Wesnoth tracks
# by name, knolls.ogg among them) and, when given, a 128-reference catalog (the benchmark's,
# built from /root/.cache/soundmark-bench/references.tsv; it holds every Wesnoth track, so only
# Hedgewars clips are tried against it).
# Non-catalog music: Debian's hedgewars-data (/usr/share/games/hedgewars/Data/Music) and the
# Wesnoth tracks outside the 1- and 10-reference catalogs (wesnoth-1.16-music).
#
# usage: scripts/fp-sweep.sh [--bin PATH] [--out DIR] [--clips N] [--catalog128 FILE|build] [--jobs N]
#   --bin         soundmark binary (default .build/release/soundmark)
#   --out         work folder (default /tmp/soundmark-fp-sweep); clips are cut once and kept
#   --clips       clips per length (default 360: 1080 clips in all)
#   --catalog128  an existing 128-reference catalog (copied; the benchmark run's own catalog
#                 works: its 'programme' reference is dropped from the copy), or "build" to build
#                 one with --bin from the benchmark's references.tsv (default: none, the 128
#                 column is skipped)
#   --jobs        parallel identify runs (default 2)
# Output: DIR/results.tsv (catalog, length, clip, source, best confidence) and a table on stdout.
set -euo pipefail

bin=.build/release/soundmark out=/tmp/soundmark-fp-sweep clips=360 cat128="" jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --clips) clips=$2; shift 2 ;;
        --catalog128) cat128=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        *) echo "fp-sweep: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
bin=$(readlink -f "$bin")
[ -x "$bin" ] || { echo "fp-sweep: no soundmark binary at $bin (swift build -c release)" >&2; exit 2; }
W=/usr/share/games/wesnoth/1.16/data/core/music
H=/usr/share/games/hedgewars/Data/Music
[ -d "$W" ] && [ -d "$H" ] || { echo "fp-sweep: needs Debian's wesnoth-1.16-music and hedgewars-data" >&2; exit 2; }
mkdir -p "$out/clips"

# Catalogs.
mapfile -t wesnoth < <(ls "$W"/*.ogg | grep -v /silence.ogg)
ten=("${wesnoth[@]:0:10}")
if ! printf '%s\n' "${ten[@]}" | grep -q /knolls.ogg; then ten[9]=$W/knolls.ogg; fi
rm -f "$out/one.db" "$out/ten.db"
"$bin" catalog add --catalog "$out/one.db" "$W/knolls.ogg" 2>/dev/null
"$bin" catalog add --catalog "$out/ten.db" "${ten[@]}" 2>/dev/null
if [ "$cat128" = build ]; then
    rm -f "$out/128.db"
    tail -n +2 /root/.cache/soundmark-bench/references.tsv | while IFS=$'\t' read -r id path title rest; do
        "$bin" catalog add --catalog "$out/128.db" --allow-duplicates --id "$id" --title "$title" "$path" 2>/dev/null
    done
    cat128=$out/128.db
fi
if [ -n "$cat128" ] && [ "$cat128" != "$out/128.db" ]; then cp "$cat128" "$out/128.db"; cat128=$out/128.db; fi
# The benchmark's run adds its recut programme, which holds Hedgewars music (Sheep.ogg, pirate.ogg,
# …): clips of those tracks really are in it. The sweep's 128 references are the music ones only.
if [ -n "$cat128" ] && "$bin" catalog show --catalog "$cat128" programme >/dev/null 2>&1; then
    "$bin" catalog remove --catalog "$cat128" programme >/dev/null
    echo "fp-sweep: removed the benchmark's 'programme' reference (it holds Hedgewars music) from the copy $cat128" >&2
fi

# Clips: sources in turn, offsets from a fixed pseudo-random sequence (awk srand(1)).
others=()
for f in "${wesnoth[@]}"; do printf '%s\n' "${ten[@]}" | grep -qx "$f" || others+=("$f"); done
sources=("$H"/*.ogg "$H"/*.ogg "${others[@]}")   # Hedgewars twice: the only music outside the 128-reference catalog
list=$out/clips.tsv
if [ ! -s "$list" ] || [ "$(cat "$out/clips.count" 2>/dev/null)" != "$clips" ]; then
    for f in "${sources[@]}"; do printf '%s\t%s\n' "$f" "$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f")"; done > "$out/sources.tsv"
    awk -F'\t' -v n="$clips" 'BEGIN { srand(1) } { src[NR] = $1; dur[NR] = $2 } END {
        k = 0
        for (li = 1; li <= 3; li++) { len = (li == 1 ? 5 : li == 2 ? 10 : 30)
            for (i = 0; i < n; i++) { s = (i % NR) + 1; if (dur[s] < len + 1) continue
                printf "c%04d\t%d\t%s\t%.3f\n", k++, len, src[s], rand() * (dur[s] - len) } }
    }' "$out/sources.tsv" > "$list"
    while IFS=$'\t' read -r id len src start; do
        case $((10#${id#c} % 3)) in 0) ext=mp3 ;; 1) ext=ogg ;; *) ext=wav ;; esac
        [ -s "$out/clips/$id.$ext" ] || ffmpeg -v error -y -ss "$start" -t "$len" -i "$src" "$out/clips/$id.$ext" </dev/null
    done < "$list"
    echo "$clips" > "$out/clips.count"
fi

# Identify every clip against every catalog it is not in, the three lengths interleaved (so an
# interrupted sweep has tried each length about as often).
run() { # catalog-label catalog id len src
    local f best
    f=$(ls "$OUT/clips/$3".* | head -1)
    local json rc=0
    json=$("$BIN" identify --catalog "$2" --threshold 0 --format json "$f" 2>"$OUT/identify-$3.err") || rc=$?
    # Exit 1 is "no match"; anything else is an error, never a confidence of 0.
    if [ "$rc" -gt 1 ]; then echo "fp-sweep: identify failed on $f: $(head -c 300 "$OUT/identify-$3.err")" >&2; exit 255; fi
    best=$(grep -o '"confidence":[0-9.e-]*' <<< "$json" | cut -d: -f2 | sort -g | tail -1)
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$4" "$3" "$(basename "$5")" "${best:-0}"
}
export -f run; export BIN=$bin OUT=$out
{
    while IFS=$'\t' read -r id len src start; do
        printf '1\t%s\t%s\t%s\t%s\n' "$out/one.db" "$id" "$len" "$src"
        printf '10\t%s\t%s\t%s\t%s\n' "$out/ten.db" "$id" "$len" "$src"
        if [ -n "$cat128" ] && [[ $src == "$H"/* ]]; then printf '128\t%s\t%s\t%s\t%s\n' "$cat128" "$id" "$len" "$src"; fi
    done < <(awk -F'\t' '{ print (n[$2]++) "\t" $0 }' "$list" | sort -t$'\t' -k1,1n -k3,3n | cut -f2-)
} | xargs -d '\n' -P "$jobs" -I{} bash -c 'IFS=$'"'"'\t'"'"' read -r a b c d e <<< "{}"; run "$a" "$b" "$c" "$d" "$e"' > "$out/results.tsv"

echo "| catalog | clip | clips | highest confidence | at or above 0.5 |"
echo "|---|---|---|---|---|"
sort -t$'\t' -k1,1n -k2,2n "$out/results.tsv" | awk -F'\t' '
    { key = $1 "\t" $2; n[key]++; if ($5 > m[key]) { m[key] = $5; w[key] = $4 }; if ($5 >= 0.5) hit[key]++; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    END { for (i = 1; i <= k; i++) { split(order[i], p, "\t"); printf "| %s refs | %s s | %d | %.4f (%s) | %d |\n", p[1], p[2], n[order[i]], m[order[i]], w[order[i]], hit[order[i]] + 0 } }'
