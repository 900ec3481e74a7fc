#!/usr/bin/env bash
# Checks that a real browser (headless Chromium) parses a WebVTT file the way we wrote it.
#
# Usage: scripts/check-webvtt-browser.sh FILE.vtt EXPECTED_CUE_COUNT
#
# Loads FILE.vtt into a <track> element of scripts/check-webvtt-browser.html (file:// URL,
# --allow-file-access-from-files), lets the browser's own W3C WebVTT parser read it, dumps the
# DOM and compares:
#   - the number of cues the browser parsed with EXPECTED_CUE_COUNT, and
#   - every cue's start/end time (seconds, to the millisecond) with the timing lines in
#     FILE.vtt ("[hh:]mm:ss.ttt --> [hh:]mm:ss.ttt", W3C WebVTT timestamps).
# Prints the browser's cue count and first/last cue times.
#
# Exit status: 0 match, 1 mismatch or browser failure, 2 usage error,
#              77 no Chromium installed (apt-get install -y --no-install-recommends chromium).
# Needs: chromium (or chromium-browser / google-chrome; override with $CHROMIUM), python3.
set -euo pipefail

die() { echo "check-webvtt-browser: $*" >&2; exit 2; }

[[ $# -eq 2 ]] || die "usage: $0 FILE.vtt EXPECTED_CUE_COUNT"
vtt=$1
expected=$2
[[ -f $vtt ]] || die "no such file: $vtt"
[[ $expected =~ ^[0-9]+$ ]] || die "expected cue count must be a number, got '$expected'"
command -v python3 >/dev/null || die "python3 is required"

browser=${CHROMIUM:-}
if [[ -z $browser ]]; then
    for candidate in chromium chromium-browser google-chrome google-chrome-stable; do
        if command -v "$candidate" >/dev/null; then browser=$candidate; break; fi
    done
fi
if [[ -z $browser ]]; then
    echo "check-webvtt-browser: SKIP: chromium not found (apt-get install -y --no-install-recommends chromium)" >&2
    exit 77
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
page=$here/check-webvtt-browser.html
[[ -f $page ]] || die "missing helper page $page"

work=$(mktemp -d "${TMPDIR:-/tmp}/webvtt-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -- "$vtt" "$work/cues.vtt"
cp -- "$page" "$work/check.html"
url=$(python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).as_uri())' "$work/check.html")

version=$("$browser" --version 2>/dev/null | head -n 1 || true)
if ! timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
        --allow-file-access-from-files --user-data-dir="$work/profile" \
        --virtual-time-budget=20000 --dump-dom "$url" >"$work/dom.html" 2>"$work/browser.log"; then
    echo "check-webvtt-browser: FAIL: $browser did not run; last log lines:" >&2
    tail -n 20 "$work/browser.log" >&2
    exit 1
fi

python3 - "$work/dom.html" "$work/cues.vtt" "$expected" "$vtt" "${version:-$browser}" <<'PY'
import html, re, sys

dom_path, vtt_path, expected, shown_name, browser = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
dom = open(dom_path, encoding="utf-8", errors="replace").read()
m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("check-webvtt-browser: FAIL: no result element in the dumped DOM")
status, got = None, []
for line in html.unescape(m.group(1)).splitlines():
    if line.startswith("STATUS "):
        status = line[7:]
    elif line.startswith("CUE "):
        _, start, end, text = line.split(" ", 3)
        got.append((float(start), float(end), text))

ts = r"(?:(\d+):)?(\d{2}):(\d{2})\.(\d{3})"
timing = re.compile(r"^\s*" + ts + r"[ \t]+-->[ \t]+" + ts + r"(?:[ \t]|$)")
def seconds(h, m, s, ms):
    return int(h or 0) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000
text = open(vtt_path, "rb").read().decode("utf-8-sig", errors="replace")
want = []
for line in re.split(r"\r\n|\r|\n", text):
    t = timing.match(line)
    if t:
        g = t.groups()
        want.append((seconds(*g[0:4]), seconds(*g[4:8])))

print(f"browser: {browser}")
print(f"file: {shown_name}: {len(want)} timing lines")
print(f"track status: {status}; browser parsed {len(got)} cues (expected {expected})")
if got:
    print(f"first cue: {got[0][0]:.3f} --> {got[0][1]:.3f} {got[0][2]}")
    print(f"last cue:  {got[-1][0]:.3f} --> {got[-1][1]:.3f} {got[-1][2]}")

problems = []
if status != "loaded":
    problems.append(f"track did not load (status {status})")
if len(got) != expected:
    problems.append(f"browser cue count {len(got)} != expected {expected}")
if len(want) != expected:
    problems.append(f"file has {len(want)} timing lines, expected {expected}")
# TextTrackCueList is ordered by start time, then end time; compare in that order.
for i, (g, w) in enumerate(zip(sorted(got), sorted(want))):
    if abs(g[0] - w[0]) > 0.0005 or abs(g[1] - w[1]) > 0.0005:
        problems.append(f"cue {i + 1}: browser {g[0]:.3f} --> {g[1]:.3f}, file {w[0]:.3f} --> {w[1]:.3f}")
if problems:
    for p in problems:
        print("MISMATCH: " + p)
    print("FAIL")
    sys.exit(1)
print("OK")
PY
