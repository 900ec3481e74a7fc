import Foundation

/// The HTML report of airings: one self-contained page (inline CSS, inline SVG, one small
/// inline script, no network access) with
///
/// - a timeline: one lane per source on UTC wall-clock time for the airings that have a
///   wall-clock time, and one lane per recording on recording time for those that have none
///   (a second timeline, under a note naming their recordings: nothing switches silently),
///   with one block (`<rect class="airing">`) per airing. Airings that overlap in one lane are
///   stacked in rows of their own, so no block hides another; a block is at least 4 units wide.
///   Lane labels start at the left edge and are shortened to fit (the full name is their
///   tooltip). Buttons (and the mouse wheel) zoom and pan the time axis, and one button per UTC
///   day shows that day, so a 3-minute airing in two days of airings can be read. Hovering or
///   focusing a block (Tab, it has `tabindex="0"`) shows its details in the panel under the
///   timeline; each block also has an SVG `<title>` (the browser's tooltip) and an `aria-label`;
/// - a summary table: per reference, plays, airtime, mean fraction aired, mean confidence;
/// - per reference, an alignment plot: reference time (y) against recording or wall-clock time
///   (x), one `<line class="plot-line">` per airing, so a clean airing is a straight line of slope 1
///   (the reference axis shows the window of the reference that aired, at the time axis' scale
///   when it fits: a clean airing then rises at 45°),
///   a speed change another slope, a jump or an edit a step, a cut a gap. Lines of different
///   recordings differ in colour and dash and carry a number that the legend under the plot
///   names (source · recording).
///
/// Time axes are labelled `hh:mm:ss` (wall-clock axes spanning several days add the date).
/// The page is laid out for 1280 px wide windows (the timeline scales with the window).
public enum ReportHTML {
    /// Width of the timeline's SVG user space.
    static let width = 1240.0
    /// Width of the lane labels.
    static let labelWidth = 190.0
    /// Narrowest block (SVG units), so that a short airing in a long span stays visible.
    static let minimumBlockWidth = 4.0

    /// The page for `airings`.
    /// - Parameters:
    ///   - title: the page's heading.
    ///   - recordingNames: names of the recordings by row id (lane labels in recording-time
    ///     mode, and the legends of the alignment plots).
    public static func page(_ airings: [Airing], title: String, recordingNames: [Int64: String] = [:]) -> String {
        let timed = airings.indices.filter { airings[$0].wallStart != nil }
        let untimed = airings.indices.filter { airings[$0].wallStart == nil }
        let wall = !timed.isEmpty
        func name(_ a: Airing) -> String { recordingNames[a.recording].map { ($0 as NSString).lastPathComponent } ?? "" }
        func x0(_ a: Airing) -> Double { a.wallStart ?? a.start }
        func x1(_ a: Airing) -> Double { a.wallStart.map { a.wallEnd ?? $0 + a.durationAired } ?? a.end }

        var html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 20px; color: #1d2733; background: #fff; max-width: 1260px; }
        h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 22px 0 6px; }
        svg { display: block; } svg text { font: 11px system-ui, sans-serif; fill: #3b4652; }
        .lane-bg { fill: #f2f5f8; } .axis line, .grid { stroke: #c9d1d9; stroke-width: 1; }
        .airing { stroke: #fff; stroke-width: 0.5; cursor: pointer; }
        .airing:hover, .airing:focus { stroke: #111; stroke-width: 2; outline: none; }
        .note { padding: 6px 10px; background: #fff4d6; border-left: 4px solid #d9a400; }
        .scroll { overflow-x: auto; } svg.timeline text { font-size: 12px; }
        .zoom { margin: 4px 0; display: flex; flex-wrap: wrap; gap: 4px; align-items: center; }
        .zoom button { font: 12px system-ui, sans-serif; padding: 2px 8px; }
        .zoom .span { margin-left: 8px; color: #3b4652; font-size: 12px; }
        #details { min-height: 2.8em; padding: 6px 10px; margin-top: 6px; background: #f7f7f2; border-left: 4px solid #8aa; white-space: pre-wrap; }
        table { border-collapse: collapse; } th, td { padding: 3px 10px; border-bottom: 1px solid #dde; text-align: left; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        .plots { display: flex; flex-wrap: wrap; gap: 12px 20px; }
        figure { margin: 0; width: 600px; } figcaption { font-weight: 600; margin: 4px 0; }
        .plot-line { stroke-width: 2.5; stroke-linecap: round; }
        .plot-line:hover, .plot-line:focus { stroke-width: 5; outline: none; }
        .line-label { font-weight: 700; }
        .legend { list-style: none; margin: 2px 0 0 70px; padding: 0; font-size: 12px; }
        .legend li { display: inline-block; margin-right: 14px; } .legend svg { display: inline; vertical-align: middle; }
        .frame { fill: none; stroke: #9aa5b1; }
        </style>
        </head>
        <body>
        <h1>\(escape(title))</h1>

        """
        let references = Dictionary(grouping: airings.indices, by: { airings[$0].reference })
        let referenceOrder = references.keys.sorted {
            (references[$0]!.count, $1) > (references[$1]!.count, $0)
        }
        let colours = Dictionary(uniqueKeysWithValues: referenceOrder.enumerated().map { ($0.element, colour($0.offset)) })
        let sources = Set(airings.map(\.source)).count
        html += "<p>\(airings.count) airing(s) of \(references.count) reference(s) on \(sources) source(s)"
        if wall {
            let lo = timed.map { x0(airings[$0]) }.min()!, hi = timed.map { x1(airings[$0]) }.max()!
            html += "; UTC wall-clock time \(escape(iso(lo))) to \(escape(iso(hi)))"
        } else if !airings.isEmpty {
            html += "; recording time 00:00:00 to \(clock(airings.map(\.end).max() ?? 0))"
        }
        html += ".</p>\n"
        if wall && !untimed.isEmpty {
            let names = Array(Set(untimed.map { a -> String in
                let n = name(airings[a]); return n.isEmpty ? airings[a].source : "\(airings[a].source) · \(n)"
            })).sorted()
            html += "<p class=\"note\" role=\"note\"><strong>\(untimed.count) of \(airings.count) airing(s) have no wall-clock time</strong> "
            html += "(recorded without <code>--start-time</code>: \(escape(names.prefix(5).joined(separator: ", ")))\(names.count > 5 ? " and \(names.count - 5) more" : "")). "
            html += "They are shown on recording time in a timeline of their own, under the wall-clock one; "
            html += "record them again with <code>--start-time</code> to place them on the wall clock.</p>\n"
        }

        html += "<h2>Timeline</h2>\n"
        if wall {
            html += timeline(timed.map { airings[$0] }, wall: true, colours: colours, label: { $0.source }, id: "wall")
        }
        if !untimed.isEmpty || airings.isEmpty {
            if wall { html += "<h2>Timeline of the airings without wall-clock times (recording time)</h2>\n" }
            html += timeline(untimed.map { airings[$0] }, wall: false, colours: colours, label: { a in
                let n = name(a)
                return n.isEmpty || n == a.source ? a.source : "\(a.source) · \(n)"
            }, id: "recording")
        }
        html += "<div id=\"details\" aria-live=\"polite\">Hover over an airing, or focus one with Tab, to see its details here.</div>\n"

        // Summary table.
        html += "<h2>Summary</h2>\n<table>\n<thead><tr><th scope=\"col\">reference</th><th scope=\"col\">title</th><th scope=\"col\">artist</th>"
        html += "<th scope=\"col\" class=\"num\">plays</th><th scope=\"col\" class=\"num\">airtime</th><th scope=\"col\" class=\"num\">mean fraction aired</th>"
        html += "<th scope=\"col\" class=\"num\">mean confidence</th></tr></thead>\n<tbody>\n"
        for ref in referenceOrder {
            let group = references[ref]!.map { airings[$0] }
            let airtime = group.reduce(0) { $0 + $1.durationAired }
            let fractions = group.compactMap(\.fractionAired)
            let fraction = fractions.isEmpty ? "–" : String(format: "%.0f %%", 100 * fractions.reduce(0, +) / Double(fractions.count))
            let confidence = group.reduce(0) { $0 + $1.confidence } / Double(group.count)
            html += "<tr><td><span style=\"color:\(colours[ref]!)\">■</span> \(escape(ref))</td><td>\(escape(MediaItem.displayTitle(group[0].title, id: ref)))</td>"
            html += "<td>\(escape(group[0].artist ?? ""))</td><td class=\"num\">\(group.count)</td><td class=\"num\">\(clock(airtime))</td>"
            html += "<td class=\"num\">\(fraction)</td><td class=\"num\">\(String(format: "%.2f", confidence))</td></tr>\n"
        }
        html += "</tbody>\n</table>\n"

        // Alignment plots: per reference, its airings with wall-clock times, then those without.
        html += "<h2>Alignment</h2>\n<p>Reference time against \(wall ? "wall-clock" : "recording") time, one line per airing: "
        html += "a straight line rising one reference second per second is a clean airing, another slope a speed change, a step a jump or an edit, a gap a cut. "
        html += "Lines of different recordings differ in colour and dash; their numbers are named under each plot.</p>\n"
        html += "<div class=\"plots\">\n"
        for ref in referenceOrder {
            let group = references[ref]!.map { airings[$0] }
            let withClock = group.filter { $0.wallStart != nil }, without = group.filter { $0.wallStart == nil }
            for (part, onClock) in [(withClock, true), (without, false)] where !part.isEmpty {
                html += plot(part, reference: ref, colour: colours[ref]!, wall: onClock, note: wall && !onClock ? " — recording time (no wall-clock time)" : "",
                             lineName: { a in let n = name(a); return n.isEmpty || n == a.source ? a.source : "\(a.source) · \(n)" },
                             x0: x0, x1: x1)
            }
        }
        html += "</div>\n"
        html += script
        return html
    }

    /// One timeline (SVG, with its zoom buttons) of `airings`: a lane per source (wall clock)
    /// or per recording and source (recording time), named by `label`; airings that overlap in
    /// a lane in rows of their own.
    private static func timeline(_ airings: [Airing], wall: Bool, colours: [String: String], label: (Airing) -> String,
                                 id: String) -> String {
        func x0(_ a: Airing) -> Double { wall ? a.wallStart! : a.start }
        func x1(_ a: Airing) -> Double { wall ? (a.wallEnd ?? a.wallStart! + a.durationAired) : a.end }
        let lo = wall ? (airings.map(x0).min() ?? 0) : 0
        let hi = max(lo + 1, airings.map(x1).max() ?? 1)
        // Lanes, in order of first airing; in each, rows: an airing goes to the first row free at its start.
        var laneNames: [String] = []
        var laneIndex: [String: Int] = [:]
        // (two recordings of one name and source, in two folders, keep a lane each)
        func laneKey(_ a: Airing) -> String { wall ? a.source : "\(a.recording)\u{0}\(a.source)" }
        var rowEnds: [[Double]] = []
        var place: [(lane: Int, row: Int)] = Array(repeating: (0, 0), count: airings.count)
        for i in airings.indices.sorted(by: { (x0(airings[$0]), $0) < (x0(airings[$1]), $1) }) {
            let a = airings[i], key = laneKey(a)
            let lane: Int
            if let known = laneIndex[key] { lane = known } else {
                lane = laneNames.count
                laneIndex[key] = lane
                laneNames.append(label(a))
                rowEnds.append([])
            }
            let row = rowEnds[lane].firstIndex { $0 <= x0(a) } ?? rowEnds[lane].count
            if row == rowEnds[lane].count { rowEnds[lane].append(x1(a)) } else { rowEnds[lane][row] = x1(a) }
            place[i] = (lane, row)
        }
        let rowHeight = 30.0, top = 28.0, laneGap = 6.0
        var laneTop: [Double] = []
        var y = top
        for rows in rowEnds {
            laneTop.append(y)
            y += Double(max(rows.count, 1)) * rowHeight + laneGap
        }
        let height = max(y, top + rowHeight + laneGap) + 4
        let plotWidth = width - labelWidth - 30
        func x(_ t: Double) -> Double { labelWidth + (t - lo) / (hi - lo) * plotWidth }
        var html = "<div class=\"zoom\" role=\"toolbar\" aria-label=\"zoom the \(wall ? "wall-clock" : "recording-time") timeline\" data-for=\"timeline-\(id)\">"
        html += "<button type=\"button\" data-zoom=\"in\">Zoom in</button><button type=\"button\" data-zoom=\"out\">Zoom out</button>"
        html += "<button type=\"button\" data-zoom=\"left\">◀ Earlier</button><button type=\"button\" data-zoom=\"right\">Later ▶</button>"
        html += "<button type=\"button\" data-zoom=\"all\">Whole span</button>"
        if wall {
            let first = Int((lo / 86_400).rounded(.down)), last = Int(((hi - 1e-6) / 86_400).rounded(.down))
            if last > first && last - first < 62 {
                // One button a day with airings: the stretch of that day they cover (a few
                // minutes of airings fill the timeline).
                let byDay = Dictionary(grouping: airings, by: { Int((x0($0) / 86_400).rounded(.down)) })
                for day in byDay.keys.sorted() {
                    let group = byDay[day]!, start = group.map(x0).min()!, end = group.map(x1).max()!
                    let margin = max(30, 0.05 * (end - start))
                    let from = max(Double(day) * 86_400, start - margin), to = min(Double(day + 1) * 86_400, end + margin)
                    html += "<button type=\"button\" data-lo=\"\(n(from))\" data-hi=\"\(n(to))\">\(Library.dayName(day)) (\(group.count) airing\(group.count == 1 ? "" : "s"))</button>"
                }
            }
        }
        html += "<span class=\"span\" aria-live=\"polite\"></span></div>\n"
        html += "<div class=\"scroll\"><svg class=\"timeline\" id=\"timeline-\(id)\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"100%\" role=\"group\""
        html += " data-lo=\"\(n(lo))\" data-hi=\"\(n(hi))\" data-wall=\"\(wall ? 1 : 0)\" data-left=\"\(n(labelWidth))\" data-width=\"\(n(plotWidth))\""
        html += " data-top=\"\(n(top))\" data-height=\"\(n(height))\" aria-label=\"timeline: one block per airing; Tab moves between them\">\n"
        html += "<g class=\"ticks\">"
        for (t, label) in ticks(lo: lo, hi: hi, wall: wall) {
            html += "<line class=\"grid\" x1=\"\(n(x(t)))\" x2=\"\(n(x(t)))\" y1=\"\(n(top - 6))\" y2=\"\(n(height - 6))\"/>"
            html += "<text x=\"\(n(x(t)))\" y=\"\(n(top - 10))\" text-anchor=\"middle\">\(escape(label))</text>"
        }
        html += "</g>\n"
        for i in laneNames.indices {
            let h = Double(max(rowEnds[i].count, 1)) * rowHeight
            html += "<rect class=\"lane-bg\" x=\"\(n(labelWidth))\" y=\"\(n(laneTop[i]))\" width=\"\(n(plotWidth))\" height=\"\(n(h))\"/>\n"
        }
        html += "<g class=\"lane-labels\">"
        for (i, name) in laneNames.enumerated() {
            html += "<text class=\"lane-label\" x=\"4\" y=\"\(n(laneTop[i] + rowHeight / 2 + 4))\">\(escape(fitted(name, width: labelWidth - 14)))<title>\(escape(name))</title></text>\n"
        }
        html += "</g>\n<g class=\"blocks\">\n"
        for (i, a) in airings.enumerated() {
            let top = laneTop[place[i].lane] + Double(place[i].row) * rowHeight
            // (a block widened to the minimum at the end of the axis is moved in, not cut off)
            let w = max(minimumBlockWidth, x(x1(a)) - x(x0(a))), left = min(x(x0(a)), labelWidth + plotWidth - w)
            let d = details(a, wall: wall)
            html += "<rect class=\"airing\" tabindex=\"0\" role=\"button\" data-details=\"\(escape(d))\" aria-label=\"\(escape(d))\""
            html += " data-t0=\"\(n(x0(a)))\" data-t1=\"\(n(x1(a)))\""
            html += " x=\"\(n(left))\" y=\"\(n(top + 2))\" width=\"\(n(w))\" height=\"\(n(rowHeight - 4))\" fill=\"\(colours[a.reference]!)\">"
            html += "<title>\(escape(d))</title></rect>\n"
        }
        html += "</g>\n</svg></div>\n"
        return html
    }

    /// `text` shortened with an ellipsis to fit `width` SVG units at 12 px (7.2 units a
    /// character: wider than the mean glyph of system-ui, so it fits).
    static func fitted(_ text: String, width: Double) -> String { truncate(text, max(4, Int(width / 7.2))) }

    /// The page's script: the details panel, and the timelines' zoom (buttons, wheel), which
    /// moves the blocks and redraws the ticks.
    static let script = """
    <script>
    (function () {
      var panel = document.getElementById("details");
      function show(e) {
        var t = e.target;
        if (t && t.getAttribute && t.getAttribute("data-details")) { panel.textContent = t.getAttribute("data-details"); }
      }
      document.addEventListener("focusin", show);
      document.addEventListener("mouseover", show);
      var NS = document.querySelector("svg").namespaceURI;
      var steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 2592000];
      function pad(v) { return (v < 10 ? "0" : "") + v; }
      function label(t, wall, days) {
        if (!wall) { var s = Math.round(t); return pad(Math.floor(s / 3600)) + ":" + pad(Math.floor(s / 60) % 60) + ":" + pad(s % 60); }
        var iso = new Date(t * 1000).toISOString();
        return (days ? iso.substr(5, 5) + " " : "") + iso.substr(11, 8);
      }
      function setup(svg) {
        var full = [parseFloat(svg.dataset.lo), parseFloat(svg.dataset.hi)], view = full.slice();
        var left = parseFloat(svg.dataset.left), width = parseFloat(svg.dataset.width), wall = svg.dataset.wall === "1";
        var top = parseFloat(svg.dataset.top), height = parseFloat(svg.dataset.height);
        var bar = document.querySelector('.zoom[data-for="' + svg.id + '"]'), spanText = bar.querySelector(".span");
        var blocks = svg.querySelectorAll(".airing"), ticks = svg.querySelector(".ticks");
        function render() {
          var lo = view[0], hi = view[1], k = width / (hi - lo);
          blocks.forEach(function (b) {
            var a = left + (parseFloat(b.dataset.t0) - lo) * k, z = left + (parseFloat(b.dataset.t1) - lo) * k;
            // Cut to the axis (no clip path: the page refers to nothing outside itself, not even by fragment).
            b.style.display = z < left || a > left + width ? "none" : "";
            a = Math.max(a, left); z = Math.min(z, left + width);
            var w = Math.max(4, z - a); if (a + w > left + width) { a = left + width - w; }
            b.setAttribute("x", a.toFixed(2)); b.setAttribute("width", w.toFixed(2));
          });
          var span = hi - lo, step = steps.filter(function (s) { return span / s <= 10; })[0] || Math.ceil(span / 10);
          var days = wall && Math.floor(lo / 86400) !== Math.floor(hi / 86400);
          while (ticks.firstChild) { ticks.removeChild(ticks.firstChild); }
          for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) {
            var x = left + (t - lo) * k, line = document.createElementNS(NS, "line"), text = document.createElementNS(NS, "text");
            line.setAttribute("class", "grid"); line.setAttribute("x1", x); line.setAttribute("x2", x);
            line.setAttribute("y1", top - 6); line.setAttribute("y2", height - 6);
            text.setAttribute("x", x); text.setAttribute("y", top - 10); text.setAttribute("text-anchor", "middle");
            text.textContent = label(t, wall, days);
            ticks.appendChild(line); ticks.appendChild(text);
          }
          spanText.textContent = "showing " + label(lo, wall, wall) + " to " + label(hi, wall, wall) + (wall ? " UTC" : "");
        }
        function zoom(factor, centre) {
          var lo = view[0], hi = view[1], c = centre === undefined ? (lo + hi) / 2 : centre;
          var span = Math.min(full[1] - full[0], Math.max(10, (hi - lo) * factor));
          lo = Math.max(full[0], Math.min(c - (c - lo) / (hi - lo) * span, full[1] - span));
          view = [lo, lo + span]; render();
        }
        function pan(fraction) {
          var span = view[1] - view[0], lo = Math.max(full[0], Math.min(view[0] + span * fraction, full[1] - span));
          view = [lo, lo + span]; render();
        }
        bar.addEventListener("click", function (e) {
          var b = e.target.closest("button"); if (!b) { return; }
          var z = b.dataset.zoom;
          if (z === "in") { zoom(0.5); } else if (z === "out") { zoom(2); } else if (z === "left") { pan(-0.5); }
          else if (z === "right") { pan(0.5); } else if (z === "all") { view = full.slice(); render(); }
          else if (b.dataset.lo) { view = [parseFloat(b.dataset.lo), parseFloat(b.dataset.hi)]; render(); }
        });
        svg.addEventListener("wheel", function (e) {
          var box = svg.getBoundingClientRect(), ux = (e.clientX - box.left) / box.width * svg.viewBox.baseVal.width;
          if (ux < left) { return; }
          e.preventDefault();
          zoom(e.deltaY < 0 ? 0.8 : 1.25, view[0] + (ux - left) / width * (view[1] - view[0]));
        }, { passive: false });
        render();
      }
      document.querySelectorAll("svg.timeline").forEach(setup);
    })();
    </script>
    </body>
    </html>

    """

    /// One alignment plot (600 × 240) of a reference's airings. Airings far apart in time (a
    /// spot repeated hours later) get panels of their own on a broken time axis (up to
    /// ``maximumPanels``; more share one continuous axis), so each line keeps its shape.
    /// With airings of several recordings, each recording's lines get a colour and dash of
    /// their own and a number at their end, named in a legend (`lineName`) under the plot.
    private static func plot(_ group: [Airing], reference: String, colour: String, wall: Bool, note: String,
                             lineName: (Airing) -> String, x0: (Airing) -> Double, x1: (Airing) -> Double) -> String {
        let w = 600.0, h = 240.0, left = 70.0, right = 30.0, top = 10.0, bottom = 30.0, gap = 14.0
        // Panels: airings closer than a minute (or than half the panel so far) share one.
        var panels: [(lo: Double, hi: Double)] = []
        var panelOf: [Int] = Array(repeating: 0, count: group.count)
        for i in group.indices.sorted(by: { x0(group[$0]) < x0(group[$1]) }) {
            let a = group[i]
            if let last = panels.last, x0(a) - last.hi <= max(60, 0.5 * (last.hi - last.lo)) {
                panels[panels.count - 1].hi = max(last.hi, x1(a))
            } else {
                panels.append((x0(a), x1(a)))
            }
            panelOf[i] = panels.count - 1
        }
        if panels.count > maximumPanels {
            panels = [(group.map(x0).min() ?? 0, group.map(x1).max() ?? 1)]
            panelOf = Array(repeating: 0, count: group.count)
        }
        for i in panels.indices {
            let pad = max(2, (panels[i].hi - panels[i].lo) * 0.05)
            panels[i].lo -= pad
            panels[i].hi += pad
        }
        // Panel widths: proportional to their time spans, none under 15 % of the total.
        let available = w - left - right - gap * Double(panels.count - 1)
        let spans = panels.map { $0.hi - $0.lo }
        let total = spans.reduce(0, +)
        let weights = spans.map { max($0, 0.15 * total) }
        let weightSum = weights.reduce(0, +)
        var panelLeft: [Double] = []
        var panelWidth: [Double] = []
        var cursor = left
        for weight in weights {
            panelLeft.append(cursor)
            panelWidth.append(available * weight / weightSum)
            cursor += available * weight / weightSum + gap
        }
        // Reference axis: a window of the reference around what aired, at the time axis' scale
        // when that holds it (a clean airing then rises at 45°), else just holding it; the whole
        // reference when the window would be longer.
        let fullMax = max(group.compactMap(\.referenceDuration).max() ?? 0,
                          group.map { max($0.referenceStart, $0.referenceEnd) }.max() ?? 0, 1)
        let fullMin = min(0, group.map { min($0.referenceStart, $0.referenceEnd) }.min() ?? 0)
        let airedLo = group.map { min($0.referenceStart, $0.referenceEnd) }.min() ?? 0
        let airedHi = group.map { max($0.referenceStart, $0.referenceEnd) }.max() ?? 1
        var refMin = fullMin, refMax = fullMax
        let secondsPerPixel = zip(spans, panelWidth).map { $0 / $1 }.min() ?? 1
        let span = max(secondsPerPixel * (h - top - bottom), (airedHi - airedLo) * 1.1, 2)
        if span < fullMax - fullMin {
            let centre = (airedLo + airedHi) / 2
            refMin = max(fullMin, min(centre - span / 2, fullMax - span))
            refMax = refMin + span
        }
        func x(_ t: Double, _ k: Int) -> Double { panelLeft[k] + (t - panels[k].lo) / (panels[k].hi - panels[k].lo) * panelWidth[k] }
        func y(_ r: Double) -> Double { top + (1 - (r - refMin) / (refMax - refMin)) * (h - top - bottom) }
        let name = (MediaItem.nonBlank(group[0].title).map { "\($0) (\(reference))" } ?? reference) + note
        // One style per recording (source · name), in order of first airing.
        var recordings: [String] = []
        var recordingOf: [Int] = []
        for a in group {
            let key = lineName(a)
            if let k = recordings.firstIndex(of: key) { recordingOf.append(k) } else { recordingOf.append(recordings.count); recordings.append(key) }
        }
        func stroke(_ k: Int) -> String { recordings.count == 1 ? colour : lineColours[k % lineColours.count] }
        func dash(_ k: Int) -> String { k == 0 ? "" : " stroke-dasharray=\"\(lineDashes[(k / lineColours.count + k) % lineDashes.count])\"" }
        var s = "<figure><figcaption>\(escape(name))</figcaption>\n"
        s += "<svg class=\"alignment\" viewBox=\"0 0 \(n(w)) \(n(h))\" width=\"\(n(w))\" role=\"group\" aria-label=\"alignment of \(escape(reference))\">\n"
        for k in panels.indices {
            s += "<rect class=\"frame\" x=\"\(n(panelLeft[k]))\" y=\"\(n(top))\" width=\"\(n(panelWidth[k]))\" height=\"\(n(h - top - bottom))\"/>\n"
            let count = max(1, Int(panelWidth[k] / 110))
            for (t, label) in ticks(lo: panels[k].lo, hi: panels[k].hi, wall: wall, count: count) {
                s += "<line class=\"grid\" x1=\"\(n(x(t, k)))\" x2=\"\(n(x(t, k)))\" y1=\"\(n(top))\" y2=\"\(n(h - bottom))\"/>"
                s += "<text x=\"\(n(x(t, k)))\" y=\"\(n(h - bottom + 14))\" text-anchor=\"middle\">\(escape(label))</text>\n"
            }
            if k > 0 {
                // The break between two panels: two slanted strokes on the time axis.
                let mid = panelLeft[k] - gap / 2
                s += "<path class=\"frame\" d=\"M\(n(mid - 5)) \(n(h - bottom + 5)) l4 -10 M\(n(mid + 1)) \(n(h - bottom + 5)) l4 -10\"/>\n"
            }
        }
        for (r, label) in ticks(lo: refMin, hi: refMax, wall: false, count: 5) {
            for k in panels.indices {
                s += "<line class=\"grid\" x1=\"\(n(panelLeft[k]))\" x2=\"\(n(panelLeft[k] + panelWidth[k]))\" y1=\"\(n(y(r)))\" y2=\"\(n(y(r)))\"/>"
            }
            s += "<text x=\"\(n(left - 6))\" y=\"\(n(y(r) + 4))\" text-anchor=\"end\">\(escape(label))</text>\n"
        }
        s += "<text x=\"\(n(left + (w - left - right) / 2))\" y=\"\(n(h - 2))\" text-anchor=\"middle\">\(wall ? "wall-clock time (UTC)" : "recording time")\(panels.count > 1 ? ", broken between airings" : "")</text>\n"
        s += "<text transform=\"translate(12 \(n(top + (h - top - bottom) / 2))) rotate(-90)\" text-anchor=\"middle\">reference time</text>\n"
        for (i, a) in group.enumerated() {
            let d = details(a, wall: wall)
            let k = panelOf[i]
            let r = recordingOf[i]
            s += "<line class=\"plot-line\" tabindex=\"0\" data-details=\"\(escape(d))\" stroke=\"\(stroke(r))\"\(dash(r)) x1=\"\(n(x(x0(a), k)))\" y1=\"\(n(y(a.referenceStart)))\""
            s += " x2=\"\(n(x(x1(a), k)))\" y2=\"\(n(y(a.referenceEnd)))\"><title>\(escape(d))</title></line>"
            s += "<text class=\"line-label\" x=\"\(n(x(x1(a), k) + 3))\" y=\"\(n(y(a.referenceEnd) + 4))\" style=\"fill:\(stroke(r))\">\(r + 1)</text>\n"
        }
        s += "</svg>\n<ul class=\"legend\" aria-label=\"recordings of the lines\">"
        for (k, recording) in recordings.enumerated() {
            s += "<li><svg width=\"34\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" x2=\"33\" y2=\"5\" stroke=\"\(stroke(k))\" stroke-width=\"2.5\"\(dash(k))/></svg> "
            s += "<strong>\(k + 1)</strong> \(escape(recording))</li>"
        }
        s += "</ul></figure>\n"
        return s
    }

    /// Line colours of the recordings in one alignment plot (dark enough on white).
    static let lineColours = ["#1f5fa8", "#c0392b", "#1e8449", "#7d3c98", "#b9770e", "#117a8b", "#6e2c00", "#c2185b"]
    /// Dash patterns of the recordings in one alignment plot (after the first, solid).
    static let lineDashes = ["", "8 4", "2 3", "10 3 2 3"]

    /// Most panels of one alignment plot's broken time axis.
    static let maximumPanels = 4

    /// The one-line details of an airing.
    static func details(_ a: Airing, wall: Bool) -> String {
        // "title – artist (id)"; an airing without a title is named by its id alone.
        let who = [MediaItem.displayTitle(a.title, id: a.reference), MediaItem.nonBlank(a.artist)].compactMap { $0 }.joined(separator: " – ")
        var parts = [MediaItem.nonBlank(a.title) == nil ? who : who + " (\(a.reference))", a.source]
        if let ws = a.wallStart {
            parts.append("\(iso(ws)) to \(iso(a.wallEnd ?? ws + a.durationAired))")
        }
        parts.append("recording \(clock(a.start, milliseconds: true))–\(clock(a.end, milliseconds: true))")
        parts.append("reference \(clock(a.referenceStart, milliseconds: true))–\(clock(a.referenceEnd, milliseconds: true))")
        parts.append(String(format: "aired %.1f s", a.durationAired) + (a.fractionAired.map { String(format: " (%.0f %% of the reference)", $0 * 100) } ?? ""))
        parts.append(String(format: "confidence %.2f", a.confidence))
        if abs(a.frequencySkew) >= 0.0005 { parts.append(String(format: "skew %+.1f %%", a.frequencySkew * 100)) }
        if abs(a.timeScale - 1) >= 0.0005 { parts.append(String(format: "speed %.3f", a.timeScale)) }
        if let m = a.marker { parts.append("marker \(m)") }
        return parts.joined(separator: " · ")
    }

    /// Axis ticks: a round step (1 s … 1 day) giving about `count` ticks, labelled `hh:mm:ss`
    /// (wall-clock: UTC time of day, with the date when the span crosses midnight).
    static func ticks(lo: Double, hi: Double, wall: Bool, count: Int = 10) -> [(Double, String)] {
        let steps: [Double] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
                               172_800, 604_800, 2_592_000]
        let span = hi - lo
        guard span > 0, span.isFinite else { return [] }
        let step = steps.first { span / $0 <= Double(count) } ?? (span / Double(count)).rounded(.up)
        var t = (lo / step).rounded(.up) * step
        var out: [(Double, String)] = []
        let days = wall && Int((lo / 86_400).rounded(.down)) != Int((hi / 86_400).rounded(.down))
        while t <= hi + 1e-9 && out.count < 100 {
            if wall {
                let stamp = iso(t)  // 2026-12-01T08:00:00.000Z
                let time = String(stamp.dropFirst(11).prefix(8))
                out.append((t, days ? String(stamp.dropFirst(5).prefix(5)) + " " + time : time))
            } else {
                out.append((t, clock(t)))
            }
            t += step
        }
        return out
    }

    /// `hh:mm:ss` (`.mmm` with `milliseconds`); see ``TimeText/clock(_:milliseconds:)``.
    static func clock(_ seconds: Double, milliseconds: Bool = false) -> String { TimeText.clock(seconds, milliseconds: milliseconds) }

    /// ISO-8601 UTC with milliseconds; see ``TimeText/iso(_:)``.
    public static func iso(_ unixSeconds: Double) -> String { TimeText.iso(unixSeconds) }

    /// A distinct colour per reference (golden-angle hues, dark enough for white text contrast).
    static func colour(_ i: Int) -> String {
        let hue = (Double(i) * 137.508).truncatingRemainder(dividingBy: 360)
        return String(format: "hsl(%.0f, 62%%, %d%%)", hue, 38 + (i % 3) * 7)
    }

    /// A number for SVG attributes (at most 2 decimals).
    static func n(_ v: Double) -> String {
        // (Coordinates come from stored airings; one out of any sane range must not stop the page.)
        guard v.isFinite, abs(v) < 1e12 else { return "0" }
        let r = (v * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(format: "%.2f", r)
    }

    /// `text` shortened to `count` characters with an ellipsis.
    static func truncate(_ text: String, _ count: Int) -> String {
        text.count <= count ? text : String(text.prefix(count - 1)) + "…"
    }

    /// HTML text and attribute escaping (`&`, `<`, `>`, `"`, `'`); control characters become spaces.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c.properties.generalCategory == .control ? " " : c)
            }
        }
        return out
    }
}
