#!/usr/bin/env bash
# kill -9 check: runs `catalog add` and `catalog annotate` many times, kills each with SIGKILL
# at a random moment, and checks that the catalog holds exactly the committed work each time:
# SQLite's integrity_check is "ok", `catalog list` and `identify` (which checks every postings
# CRC) work, every reference reported added before the kill is there, no reference appears
# that the run was not adding, and a reference's annotations are the old or the new set, never
# a part of one.
#
# usage: scripts/kill9-check.sh [ROUNDS]     (default 60; SOUNDMARK=path/to/binary to choose one)
set -u
ROUNDS=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SOUNDMARK:-}
if [ -z "$BIN" ]; then
  for c in "$ROOT/.build/release/soundmark" "$ROOT/.build/debug/soundmark"; do [ -x "$c" ] && BIN=$c && break; done
fi
[ -x "${BIN:-}" ] || { echo "no soundmark binary (swift build first)" >&2; exit 2; }
command -v sox >/dev/null && command -v sqlite3 >/dev/null || { echo "needs sox and sqlite3" >&2; exit 2; }
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
DB=$WORK/c.db

# Six references of distinct tone sequences (30 s each), and two annotation files of 4000 and 700 cues.
mkdir -p "$WORK/media"
for k in 1 2 3 4 5 6; do
  parts=()
  for j in $(seq 1 120); do
    f1=$(( 300 + (k * 7919 + j * 104729) % 2900 )); f2=$(( 400 + (k * 104723 + j * 7927) % 2500 ))
    sox -n -r 8000 -c 1 "$WORK/p$j.wav" synth 0.25 sine $f1 sine $f2 2>/dev/null; parts+=("$WORK/p$j.wav")
  done
  sox "${parts[@]}" "$WORK/media/ref$k.wav"
done
rm -f "$WORK"/p*.wav
srt() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "%d\n00:00:%02d,000 --> 00:00:%02d,500\ncue %d of %d\n\n", i, i % 60, i % 60, i, n }'; }
srt 4000 > "$WORK/a40.srt"; srt 700 > "$WORK/a7.srt"
"$BIN" catalog add --catalog "$DB" "$WORK/media/ref1.wav" 2>/dev/null || { echo "first add failed" >&2; exit 2; }

ids() { "$BIN" catalog list --catalog "$DB" 2>/dev/null | cut -f1 | sort; }
fail=0; adds=0; annotates=0; killed=0; finished=0; committed=0; declare -A seen
for round in $(seq 1 "$ROUNDS"); do
  before=$(ids)
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", r / 32767 * 0.25 }')
  if (( round % 2 )); then
    adds=$((adds + 1))
    # Make the add do real work: drop two references it will add back.
    drop=$(( RANDOM % 5 + 2 ))
    "$BIN" catalog remove --catalog "$DB" "ref$drop" "ref$(( drop % 6 + 1 ))" >/dev/null 2>&1
    before=$(ids)
    "$BIN" catalog add --catalog "$DB" "$WORK/media" 2>"$WORK/err" & pid=$!
  else
    annotates=$((annotates + 1))
    old=$("$BIN" catalog show --catalog "$DB" ref1 2>/dev/null | sed -n 's/^annotations: //p')
    file=$([ "$old" = 4000 ] && echo a7.srt || echo a40.srt)
    "$BIN" catalog annotate --catalog "$DB" ref1 "$WORK/$file" 2>"$WORK/err" & pid=$!
  fi
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
  wait "$pid" 2>/dev/null
  problem=""
  ic=$(sqlite3 "$DB" "PRAGMA integrity_check" 2>&1)
  [ "$ic" = ok ] || problem="integrity_check: $ic"
  after=$(ids)
  "$BIN" catalog list --catalog "$DB" >/dev/null 2>&1 || problem="$problem; catalog list failed"
  "$BIN" identify --catalog "$DB" "$WORK/media/ref1.wav" >/dev/null 2>&1; rc=$?
  [ $rc -le 1 ] || problem="$problem; identify exit $rc"
  if (( round % 2 )); then
    for id in $(sed -n 's/^\(ref[0-9]\): added.*/\1/p' "$WORK/err"); do
      committed=$((committed + 1))
      grep -qx "$id" <<<"$after" || problem="$problem; $id reported added but missing"
    done
    for id in $after; do [[ $id =~ ^ref[1-6]$ ]] || problem="$problem; unexpected reference $id"; done
    for id in $before; do grep -qx "$id" <<<"$after" || problem="$problem; $id lost"; done
  else
    now=$("$BIN" catalog show --catalog "$DB" ref1 2>/dev/null | sed -n 's/^annotations: //p')
    want=$([ "$file" = a7.srt ] && echo 700 || echo 4000)
    [ "$now" = "$old" ] || [ "$now" = "$want" ] || problem="$problem; ref1 has $now annotations (old $old, new $want)"
    grep -q "annotation(s) stored" "$WORK/err" && { committed=$((committed + 1)); [ "$now" = "$want" ] || problem="$problem; annotate reported stored but $now annotations"; }
    [ "$after" = "$before" ] || problem="$problem; references changed by annotate"
  fi
  if [ -n "$problem" ]; then fail=$((fail + 1)); echo "round $round (kill after ${delay}s): ${problem#; }"; fi
done
echo "rounds: $ROUNDS (catalog add: $adds, catalog annotate: $annotates); killed mid-run: $killed, finished before the kill: $finished; committed steps checked: $committed; failures: $fail"
[ $fail -eq 0 ]
