#!/usr/bin/env bash
# kill -9 check of the recognition library: imports one event file of 20,000 activities again
# and again from one source under alternating start times (the same file from the same source
# is the same recording, so each import replaces the previous one; another named source would
# keep both), kills each import with SIGKILL at a random moment, and checks that the library
# holds exactly one committed import: SQLite's integrity_check is "ok", there is one recording,
# it has all 20,000 airings, and every airing has the recording's start time — the old import's
# or the new one's, never a mixture or a part.
#
# Reading and folding the events takes most of an import's time, so the kills are aimed at its
# end: uniformly between 60 % and 110 % of the time the first (timed) replacing import took.
#
# usage: scripts/kill9-library-check.sh [ROUNDS]   (default 30; SOUNDMARK=path/to/binary)
set -u
ROUNDS=${1:-30}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SOUNDMARK:-}
if [ -z "$BIN" ]; then
  for c in "$ROOT/.build/release/soundmark" "$ROOT/.build/debug/soundmark"; do [ -x "$c" ] && BIN=$c && break; done
fi
[ -x "${BIN:-}" ] || { echo "no soundmark binary (swift build first)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "needs sqlite3" >&2; exit 2; }
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
LIB=$WORK/library.db
N=20000
awk -v n=$N 'BEGIN { for (i = 1; i <= n; i++) {
  t = i * 30; printf "{\"event\":\"segment.started\",\"activity_id\":\"a%d\",\"material_id\":\"spot-%d\",\"title\":\"Spot %d\",\"time\":%d,\"start\":%d,\"end\":%d,\"position\":0,\"referenceStart\":0,\"confidence\":0.9}\n", i, i % 97, i % 97, t, t, t + 2
  printf "{\"event\":\"segment.ended\",\"activity_id\":\"a%d\",\"material_id\":\"spot-%d\",\"time\":%d,\"start\":%d,\"end\":%d,\"position\":20,\"referenceStart\":0,\"confidence\":0.9}\n", i, i % 97, t + 20, t, t + 20 } }' > "$WORK/events.jsonl"
"$BIN" library import --library "$LIB" --source s0 --start-time 2026-12-01T00:00:00Z "$WORK/events.jsonl" >/dev/null || { echo "first import failed" >&2; exit 2; }
t0=$(date +%s%N)
"$BIN" library import --library "$LIB" --source s0 --start-time 2026-12-01T00:00:00Z "$WORK/events.jsonl" >/dev/null || { echo "timed import failed" >&2; exit 2; }
T=$(( ($(date +%s%N) - t0) / 1000000 ))  # ms
fail=0; killed=0; finished=0; committed=0; mid=0
for round in $(seq 1 "$ROUNDS"); do
  start=$(printf '2026-12-%02dT%02d:00:00Z' $((1 + round / 24)) $((round % 24)))
  "$BIN" library import --library "$LIB" --source s0 --start-time "$start" "$WORK/events.jsonl" >/dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v r=$RANDOM -v t=$T 'BEGIN { printf "%.3f", (0.6 + 0.5 * r / 32768) * t / 1000 }')"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
  wait "$pid" 2>/dev/null
  # A kill inside the write transaction leaves a hot journal or a WAL without the commit.
  [ -s "$LIB-wal" ] && mid=$((mid + 1))
  check=$(sqlite3 "$LIB" "PRAGMA integrity_check;" 2>&1)
  state=$(sqlite3 "$LIB" "SELECT (SELECT count(*) FROM recording), (SELECT count(*) FROM airing), (SELECT count(DISTINCT source) FROM airing), (SELECT count(*) FROM airing a JOIN recording r ON r.id = a.recording WHERE r.wall_start IS NULL OR abs(a.wall_start - a.start - r.wall_start) > 0.001);" 2>&1)
  if [ "$check" != ok ] || [ "$state" != "1|$N|1|0" ]; then
    echo "round $round: integrity '$check', recordings|airings|sources|mismatched = $state" >&2
    fail=$((fail + 1))
  fi
  [ "$(sqlite3 "$LIB" "SELECT CAST(wall_start AS INTEGER) FROM recording")" = "$(date -u -d "$start" +%s)" ] && committed=$((committed + 1))
done
echo "kill9-library-check: one import ${T} ms; $ROUNDS rounds ($killed killed, $finished finished; $committed committed, $mid left a WAL behind), $fail failure(s)"
[ $fail -eq 0 ]
