#!/usr/bin/env bash
# Scans samples/recording.mp3 against the sample catalog with its annotations, writes the mapped
# cues as WebVTT and checks that headless Chromium's <track> element parses the same cues with the
# same times (scripts/check-webvtt-browser.sh). Used by `make browser-check` and CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SOUNDMARK:-.build/release/soundmark}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" catalog add --catalog "$work/c.db" samples/references 2>/dev/null
"$bin" catalog annotate --catalog "$work/c.db" wesnoth-knolls samples/wesnoth-knolls.srt 2>/dev/null
for cues in annotations segments; do
    "$bin" scan --catalog "$work/c.db" --format vtt --cues "$cues" samples/recording.mp3 > "$work/$cues.vtt"
    count=$(grep -c -- ' --> ' "$work/$cues.vtt")
    [ "$count" -gt 0 ] || { echo "browser-check: no cues in $cues output" >&2; exit 1; }
    scripts/check-webvtt-browser.sh "$work/$cues.vtt" "$count"
done
