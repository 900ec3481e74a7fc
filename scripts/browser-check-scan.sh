#!/usr/bin/env bash
# Scans samples/recording.mp3 against the sample catalog with its annotations, writes the mapped
# cues as WebVTT and checks that headless Chromium's <track> element parses the same cues with the
# same times (scripts/check-webvtt-browser.sh), then checks the HTML reports in the same browser
# (scripts/check-report-browser.sh). Used by `make browser-check` and CI.
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

# The HTML report of the same scan (scan --format html) and of a library holding it and more (report html,
# two days, three sources):
# loads without console errors, one block and one plot line per airing, screenshots kept in
# ${REPORT_SHOTS:-.build/browser-check}.
shots=${REPORT_SHOTS:-.build/browser-check}
mkdir -p "$shots"
"$bin" scan --catalog "$work/c.db" --format json samples/recording.mp3 > "$work/scan.json"
"$bin" scan --catalog "$work/c.db" --format html --source demo --start-time 2026-12-01T08:00:00Z samples/recording.mp3 > "$work/scan.html"
scripts/check-report-browser.sh "$work/scan.html" "$work/scan.json" "$shots/scan-report.png"
"$bin" scan --catalog "$work/c.db" --library "$work/l.db" --source radio1 --start-time 2026-12-01T08:00:00Z samples/recording.mp3 > /dev/null
"$bin" identify --catalog "$work/c.db" --library "$work/l.db" --source phone --start-time 2026-12-01T08:30:00Z samples/clip.mp3 > /dev/null
# A second day and a third source (the same audio under another named source is kept: issue 39).
"$bin" scan --catalog "$work/c.db" --library "$work/l.db" --source radio9 --start-time 2026-12-02T14:00:00Z samples/recording.mp3 > /dev/null
"$bin" report airings --library "$work/l.db" --format json > "$work/airings.json"
"$bin" report html --library "$work/l.db" --output "$work/library.html"
scripts/check-report-browser.sh "$work/library.html" "$work/airings.json" "$shots/library-report.png"
