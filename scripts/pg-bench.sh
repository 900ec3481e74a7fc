#!/usr/bin/env bash
# PostgreSQL catalog and workers next to SQLite (issue 15), on the benchmark corpus.
#
#   scripts/pg-bench.sh URI CATALOG_COPY
#
# URI: an empty PostgreSQL database (postgresql://user@host:port/db); CATALOG_COPY: a COPY of
# a bench catalog (its .index next to it). Settings: SM (binary, default .build/release/soundmark),
# CORPUS (default ~/.cache/soundmark-bench), CLIPS (identify clips, default 30: every 74th query).
# Reports: catalog copy time, identify latency per clip (whole process, warm cache; and the first
# identify with an empty cache), scan of mix01, and the five mixes + broadcast by one worker and
# by two worker processes at once, with `queue results` compared to `scan --format json` on SQLite.
set -euo pipefail
URI=$1 CAT=$2
SM=${SM:-.build/release/soundmark}
CORPUS=${CORPUS:-$HOME/.cache/soundmark-bench}
CLIPS=${CLIPS:-30}
WORK=$(mktemp -d)
export XDG_CACHE_HOME=$WORK/cache
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

t0=$(now); $SM catalog copy "$CAT" "$URI" 2>/dev/null; t1=$(now)
echo "catalog copy SQLite -> PostgreSQL: $(secs $t0 $t1) s"

mapfile -t clips < <(awk -F'\t' 'NR>1 && NR%74==2 {print $2}' "$CORPUS/queries.tsv" | head -n "$CLIPS")
rm -rf "$WORK/cache"
t0=$(now); $SM identify --catalog "$URI" "$CORPUS/${clips[0]}" >/dev/null || true; t1=$(now)
echo "first identify, empty local cache (pulls the catalog, builds the index): $(secs $t0 $t1) s"
for which in sqlite postgres; do
  c=$CAT; [ $which = postgres ] && c=$URI
  : > "$WORK/$which.times"; : > "$WORK/$which.out"
  for q in "${clips[@]}"; do
    t0=$(now); $SM identify --catalog "$c" --format json "$CORPUS/$q" >> "$WORK/$which.out" || true; t1=$(now)
    secs $t0 $t1 >> "$WORK/$which.times"
  done
  sort -n "$WORK/$which.times" | awk -v w=$which '{a[NR]=$1} END {printf "identify %s: %d clips, median %.3f s, p90 %.3f s\n", w, NR, a[int((NR+1)/2)], a[int(NR*0.9+0.5)]}'
done
cmp -s "$WORK/sqlite.out" "$WORK/postgres.out" && echo "identify answers: identical" || echo "identify answers: DIFFER"

for which in sqlite postgres; do
  c=$CAT; [ $which = postgres ] && c=$URI
  t0=$(now); $SM scan --catalog "$c" --format json "$CORPUS/mixes/mix01.mp3" > "$WORK/scan-$which.json"; t1=$(now)
  echo "scan mix01 $which: $(secs $t0 $t1) s"
done
cmp -s "$WORK/scan-sqlite.json" "$WORK/scan-postgres.json" && echo "scan answers: identical" || echo "scan answers: DIFFER"

media=("$CORPUS"/mixes/mix0{1,2,3,4,5}.mp3 "$CORPUS/broadcast/broadcast.mp4")
$SM scan --catalog "$CAT" --format json --jobs 1 "${media[@]}" > "$WORK/scan-all.jsonl"
for workers in 1 2; do
  psql -q -X "$URI" -c "DROP TABLE IF EXISTS library_airing, library_recording, job" 2>/dev/null || true
  $SM queue add --catalog "$URI" "${media[@]}" >/dev/null 2>&1
  t0=$(now)
  for ((w = 0; w < workers; w++)); do $SM worker --catalog "$URI" 2> "$WORK/worker$w.log" & done
  wait
  t1=$(now)
  $SM queue results --catalog "$URI" > "$WORK/results.jsonl"
  same=$(cmp -s "$WORK/results.jsonl" "$WORK/scan-all.jsonl" && echo "identical to scan on SQLite" || echo "DIFFER from scan")
  echo "$workers worker(s), 5 mixes + broadcast: $(secs $t0 $t1) s wall; results $same; $($SM queue status --catalog "$URI" | head -1)"
done
