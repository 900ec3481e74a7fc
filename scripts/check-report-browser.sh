#!/usr/bin/env bash
# Checks soundmark's HTML report in a real browser (headless Chromium).
#
# Usage: scripts/check-report-browser.sh REPORT.html AIRINGS.json SCREENSHOT.png
#
# AIRINGS.json is `soundmark report airings --format json` (or scan --format json) of the same
# selection. The check:
#   - the page refers to nothing outside itself (no http(s) URLs, no <script src>, <link>, <img>,
#     <iframe>, @import or url(...));
#   - it loads in headless Chromium without a console error or an uncaught exception (a probe
#     script is put at the start of <head> of a copy of the page: window "error" events and
#     console.error calls are counted; Chromium's own console log is searched as well);
#   - the number of airing blocks (.airing) and of alignment-plot lines (.plot-line) equals the
#     number of airings (or segments) in the JSON, every block is keyboard-focusable
#     (tabindex="0") and focusing the first block puts its details in the #details panel;
#   - a screenshot 1280 px wide is written to SCREENSHOT.png, and one of an 800 × 900 window
#     beside it (SCREENSHOT-800.png).
# Exit status: 0 pass, 1 fail, 2 usage error, 77 no Chromium installed.
set -euo pipefail

die() { echo "check-report-browser: $*" >&2; exit 2; }
[[ $# -eq 3 ]] || die "usage: $0 REPORT.html AIRINGS.json SCREENSHOT.png"
report=$1; json=$2; shot=$3
[[ -f $report ]] || die "no such file: $report"
[[ -f $json ]] || die "no such file: $json"
command -v python3 >/dev/null || die "python3 is required"

browser=${CHROMIUM:-}
if [[ -z $browser ]]; then
    for candidate in chromium chromium-browser google-chrome google-chrome-stable; do
        if command -v "$candidate" >/dev/null; then browser=$candidate; break; fi
    done
fi
if [[ -z $browser ]]; then
    echo "check-report-browser: SKIP: chromium not found (apt-get install -y --no-install-recommends chromium)" >&2
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/report-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A copy of the page with the probe at the start of <head>.
python3 - "$report" "$work/probe.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push("uncaught: " + e.message); });
(function () { var orig = console.error; console.error = function () { window.__errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); }; })();
window.addEventListener("load", function () {
  var blocks = document.querySelectorAll(".airing"), lines = document.querySelectorAll(".plot-line");
  var focusable = 0; blocks.forEach(function (b) { if (b.getAttribute("tabindex") === "0") focusable++; });
  var detailsOK = "none";
  if (blocks.length) { blocks[0].focus(); var p = document.getElementById("details");
    // A headless window without system focus may deliver the focus event late (seen under load):
    // the page's own focusin handler is what is checked, so it is given the event it listens for.
    if (p && p.textContent !== blocks[0].getAttribute("data-details")) blocks[0].dispatchEvent(new FocusEvent("focusin", {bubbles: true}));
    detailsOK = (p && p.textContent === blocks[0].getAttribute("data-details") && document.activeElement === blocks[0]) ? "yes" : "no"; }
  var pre = document.createElement("pre"); pre.id = "probe-result";
  pre.textContent = ["BLOCKS " + blocks.length, "LINES " + lines.length, "FOCUSABLE " + focusable, "DETAILS " + detailsOK,
                     "WIDTH " + document.documentElement.scrollWidth, "ERRORS " + window.__errors.length,
                     "HEIGHT " + document.documentElement.scrollHeight].concat(window.__errors).join("\\n");
  document.body.appendChild(pre);
});
</script>"""
i = page.find("<head>")
if i < 0:
    sys.exit("check-report-browser: FAIL: no <head> in the page")
open(sys.argv[2], "w", encoding="utf-8").write(page[:i + 6] + probe + page[i + 6:])
PY
url=$(python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).as_uri())' "$work/probe.html")
flags=(--headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$work/profile" --window-size=1280,1000
       --enable-logging=stderr --v=0)
if ! timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "$url" >"$work/dom.html" 2>"$work/browser.log"; then
    echo "check-report-browser: FAIL: $browser did not run; last log lines:" >&2
    tail -n 20 "$work/browser.log" >&2
    exit 1
fi
# The screenshot is of the page as written (no probe), 1280 px wide, tall enough for the page.
page_url=$(python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).resolve().as_uri())' "$report")
height=$(python3 - "$work/dom.html" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
m = re.search(r'HEIGHT (\d+)', html.unescape(dom))
print(min(16000, int(m.group(1)) + 20) if m else 4000)
PY
)
mkdir -p "$(dirname "$shot")"
shot_abs=$(python3 -c 'import os, sys; print(os.path.abspath(sys.argv[1]))' "$shot")
timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$work/profile2" \
    --hide-scrollbars --window-size=1280,"$height" --screenshot="$shot_abs" "$page_url" >/dev/null 2>"$work/shot.log" || true
# And one of a narrow window (800 px: the first screen), beside it as NAME-800.png.
timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$work/profile3" \
    --hide-scrollbars --window-size=800,900 --screenshot="${shot_abs%.png}-800.png" "$page_url" >/dev/null 2>>"$work/shot.log" || true

python3 - "$report" "$work/dom.html" "$json" "$work/browser.log" "$shot_abs" <<'PY'
import html, json, os, re, sys
report, dom_path, json_path, log_path, shot = sys.argv[1:6]
page = open(report, encoding="utf-8").read()
dom = open(dom_path, encoding="utf-8", errors="replace").read()
data = json.load(open(json_path, encoding="utf-8"))
expected = len(data["airings"] if "airings" in data else data["segments"])
problems = []
external = re.findall(r'https?://[^\s"\'<>]+|<script[^>]*\ssrc=|<link\b|<img\b|<iframe\b|@import|url\(', page, re.I)
external = [e for e in external if not e.startswith("http://www.w3.org/2000/svg")]
if external:
    problems.append("refers to outside resources: " + ", ".join(sorted(set(external))[:5]))
m = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
if not m:
    problems.append("the probe did not run (no result in the DOM)")
    values, errors = {}, []
else:
    lines = html.unescape(m.group(1)).splitlines()
    values = dict(l.split(" ", 1) for l in lines[:7])
    errors = lines[7:]
log_errors = [l for l in open(log_path, encoding="utf-8", errors="replace") if "CONSOLE" in l and ("ERROR" in l or "Uncaught" in l)]
print(f"report: {report} ({len(page)} bytes); JSON: {expected} airing(s)")
print(f"browser: blocks {values.get('BLOCKS')}, plot lines {values.get('LINES')}, focusable {values.get('FOCUSABLE')}, "
      f"details on focus {values.get('DETAILS')}, page width {values.get('WIDTH')} px, errors {values.get('ERRORS')}")
for e in errors + log_errors:
    problems.append("console: " + e.strip())
if values:
    if int(values["BLOCKS"]) != expected: problems.append(f"{values['BLOCKS']} airing blocks, JSON has {expected}")
    if int(values["LINES"]) != expected: problems.append(f"{values['LINES']} plot lines, JSON has {expected}")
    if int(values["FOCUSABLE"]) != int(values["BLOCKS"]): problems.append("not every block is keyboard-focusable")
    if expected and values["DETAILS"] != "yes": problems.append("focusing a block did not show its details")
    if int(values["WIDTH"]) > 1280: problems.append(f"page is {values['WIDTH']} px wide at a 1280 px window")
for picture in (shot, shot[:-4] + "-800.png" if shot.endswith(".png") else shot):
    if not os.path.exists(picture) or os.path.getsize(picture) == 0:
        problems.append("no screenshot written: " + picture)
    else:
        print(f"screenshot: {picture}")
if problems:
    for p in problems: print("FAIL: " + p)
    sys.exit(1)
print("OK")
PY
