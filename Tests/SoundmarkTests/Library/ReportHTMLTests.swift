import Foundation
import XCTest
@testable import Soundmark

/// The HTML report page: one block and one plot line per airing, escaping, axes.
final class ReportHTMLTests: XCTestCase {
    private func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    func testOneBlockAndOnePlotLinePerAiringAndEscapedText() {
        let airings = [
            Airing(recording: 1, source: "radio <1>", reference: "spot-a", title: "Fish & \"Chips\"", artist: "<script>x</script>",
                   referenceDuration: 30, start: 10, end: 30, referenceStart: 0, referenceEnd: 20, confidence: 0.9),
            Airing(recording: 1, source: "radio <1>", reference: "spot-a", title: "Fish & \"Chips\"", referenceDuration: 30,
                   start: 100, end: 110, referenceStart: 20, referenceEnd: 30, confidence: 0.8),
            Airing(recording: 2, source: "tv", reference: "spot-b", start: 5, end: 6, referenceStart: 2, referenceEnd: 3.05,
                   confidence: 0.7, frequencySkew: 0.05, timeScale: 1.05, marker: 222),
        ]
        let page = ReportHTML.page(airings, title: "Report <&>", recordingNames: [1: "/data/day1.ts", 2: "tv.mp4"])
        XCTAssertEqual(count("<rect class=\"airing\"", in: page), 3)
        XCTAssertEqual(count("<line class=\"plot-line\"", in: page), 3)
        XCTAssertEqual(count("tabindex=\"0\" role=\"button\"", in: page), 3)
        XCTAssertEqual(count("<figure>", in: page), 2, "one alignment plot per reference")
        XCTAssertEqual(count("class=\"lane-bg\"", in: page), 2, "one lane per recording without wall-clock times")
        XCTAssertTrue(page.contains("radio &lt;1&gt; · day1.ts"))
        XCTAssertTrue(page.contains("<h1>Report &lt;&amp;&gt;</h1>"))
        XCTAssertFalse(page.contains("<script>x</script>"))
        XCTAssertTrue(page.contains("&lt;script&gt;x&lt;/script&gt;"))
        XCTAssertFalse(page.contains("http://") || page.contains("https://") || page.contains("src="))
        let details = ReportHTML.details(airings[2], wall: false)
        // Review: an airing without a title showed " (spot-b)", and the marker only as a flag.
        XCTAssertEqual(details, "spot-b · tv · recording 00:00:05.000–00:00:06.000 · reference 00:00:02.000–00:00:03.050 · aired 1.0 s · confidence 0.70 · skew +5.0 % · speed 1.050 · marker 222")
        let untitled = ReportHTML.details(Airing(source: "tv", reference: "spot-c", title: " ", artist: "", start: 0, end: 1,
                                                 referenceStart: 0, referenceEnd: 1, confidence: 0.9), wall: false)
        XCTAssertTrue(untitled.hasPrefix("spot-c · tv · recording"), untitled)
        XCTAssertTrue(page.contains("<td>spot-b</td>"), "the summary's title column falls back to the id")
    }

    func testWallClockPagesHaveALanePerSourceAndAClockAxis() {
        let t0 = 1_796_083_200.0 + 8 * 3600  // 2026-12-01T08:00:00Z
        let airings = (0..<3).map { i in
            Airing(recording: Int64(i), source: i == 2 ? "radio2" : "radio1", reference: "spot", start: 0, end: 20,
                   wallStart: t0 + Double(i) * 600, wallEnd: t0 + Double(i) * 600 + 20, referenceStart: 0, referenceEnd: 20, confidence: 1)
        }
        let page = ReportHTML.page(airings, title: "t")
        XCTAssertEqual(count("class=\"lane-bg\"", in: page), 2)
        XCTAssertTrue(page.contains(">08:00:00</text>"), "hh:mm:ss ticks on the UTC axis")
        XCTAssertTrue(page.contains(">08:20:00</text>"))
    }

    func testRepeatedAiringsGetPanelsOfABrokenTimeAxis() {
        func airings(_ count: Int, apart: Double) -> [Airing] {
            (0..<count).map { i in
                Airing(recording: 1, source: "r", reference: "spot", referenceDuration: 30, start: Double(i) * apart,
                       end: Double(i) * apart + 20, referenceStart: 5, referenceEnd: 25, confidence: 1)
            }
        }
        func frames(_ page: String) -> Int { count("<rect class=\"frame\"", in: page) }
        XCTAssertEqual(frames(ReportHTML.page(airings(2, apart: 7200), title: "t")), 2)
        XCTAssertTrue(ReportHTML.page(airings(2, apart: 7200), title: "t").contains("broken between airings"))
        XCTAssertEqual(frames(ReportHTML.page(airings(3, apart: 30), title: "t")), 1, "airings a few seconds apart share a panel")
        XCTAssertEqual(frames(ReportHTML.page(airings(ReportHTML.maximumPanels + 1, apart: 7200), title: "t")), 1,
                       "too many panels: one continuous axis")
        XCTAssertEqual(count("<line class=\"plot-line\"", in: ReportHTML.page(airings(2, apart: 7200), title: "t")), 2)
    }

    /// The `y` of each airing block, in page order.
    private func blockYs(_ page: String) -> [String] {
        page.components(separatedBy: "<rect class=\"airing\"").dropFirst().compactMap { part in
            part.components(separatedBy: " y=\"").dropFirst().first?.split(separator: "\"").first.map(String.init)
        }
    }

    /// Issue 39 item 5: the lane label "phone · …" was clipped at the left edge ("hone · …"):
    /// labels now start at x = 4, shortened to fit the label column, the full name their tooltip.
    func testLaneLabelsStartAtTheLeftEdgeAndFit() {
        let long = "phone · a-very-long-recording-file-name-of-the-evening.mp3"
        let page = ReportHTML.page([Airing(recording: 1, source: "phone", reference: "spot", start: 0, end: 10,
                                           referenceStart: 0, referenceEnd: 10, confidence: 1)],
                                   title: "t", recordingNames: [1: "/x/a-very-long-recording-file-name-of-the-evening.mp3"])
        let shown = String(long.prefix(Int((ReportHTML.labelWidth - 14) / 7.2) - 1)) + "…"
        XCTAssertTrue(page.contains("<text class=\"lane-label\" x=\"4\" y=\"47\">\(ReportHTML.escape(shown))<title>\(ReportHTML.escape(long))</title></text>"), page)
        XCTAssertEqual(shown.count, 24)
        // Two recordings of one file name (two folders) and source keep a lane each.
        let twins = ReportHTML.page((1...2).map { Airing(recording: Int64($0), source: "tv", reference: "spot", start: 0, end: 10,
                                                         referenceStart: 0, referenceEnd: 10, confidence: 1) },
                                    title: "t", recordingNames: [1: "/day1/rec.ts", 2: "/day2/rec.ts"])
        XCTAssertEqual(count("class=\"lane-bg\"", in: twins), 2)
    }

    /// Issue 39 item 5: a block hid another over the same time. Overlapping airings of a lane
    /// get rows of their own (the lane grows); airings that follow each other share a row.
    func testOverlappingAiringsGetRowsOfTheirOwn() {
        func a(_ ref: String, _ start: Double, _ end: Double) -> Airing {
            Airing(recording: 1, source: "r", reference: ref, start: start, end: end, referenceStart: 0, referenceEnd: end - start, confidence: 1)
        }
        let page = ReportHTML.page([a("x", 0, 60), a("y", 30, 90), a("z", 60, 100), a("w", 95, 120)], title: "t")
        // x row 0; y overlaps x: row 1; z starts as x ends: row 0; w overlaps z, y has ended: row 1.
        XCTAssertEqual(blockYs(page), ["30", "60", "30", "60"])
        XCTAssertTrue(page.contains("<rect class=\"lane-bg\" x=\"190\" y=\"28\" width=\"1020\" height=\"60\"/>"), "a lane of two rows")
    }

    /// Issue 39 item 5: one alignment plot mixed the lines of 6 recordings in one colour.
    /// Each recording's lines get their own colour and dash and a number the legend names.
    func testPlotLinesOfDifferentRecordingsAreDistinguishedAndNamed() {
        let t0 = 1_796_083_200.0
        let airings = (0..<3).map { i in
            Airing(recording: Int64(i + 1), source: ["Radio 1", "Radio 9", "phone"][i], reference: "loyalists", title: "Loyalists",
                   referenceDuration: 60, start: 10, end: 40, wallStart: t0 + Double(i) * 7200 + 10, wallEnd: t0 + Double(i) * 7200 + 40,
                   referenceStart: 0, referenceEnd: 30, confidence: 1)
        }
        let page = ReportHTML.page(airings, title: "t", recordingNames: [1: "/a/mon.ts", 2: "/a/tue.ts", 3: "-"])
        let strokes = page.components(separatedBy: "<line class=\"plot-line\"").dropFirst().map { part in
            part.components(separatedBy: "stroke=\"")[1].split(separator: "\"").first.map(String.init) ?? ""
        }
        XCTAssertEqual(strokes, Array(ReportHTML.lineColours.prefix(3)))
        XCTAssertEqual(count("stroke-dasharray=\"8 4\"", in: page), 2, "the second recording's line and its legend sample")
        XCTAssertTrue(page.contains("<strong>1</strong> Radio 1 · mon.ts</li>"))
        XCTAssertTrue(page.contains("<strong>2</strong> Radio 9 · tue.ts</li>"))
        XCTAssertTrue(page.contains("<strong>3</strong> phone · -</li>"))
        XCTAssertEqual(count("<text class=\"line-label\"", in: page), 3)
    }

    /// Issue 39 item 5: one airing without `--start-time` switched the whole report to
    /// recording time without a word. The timed airings stay on the wall clock; the others get
    /// a recording-time timeline of their own under a note naming their recording.
    func testAiringsWithoutWallClockTimesAreNotedNotSwitchedTo() {
        let t0 = 1_796_083_200.0 + 8 * 3600
        var airings = (0..<2).map { i in
            Airing(recording: 1, source: "Radio 1", reference: "spot", start: Double(i) * 60, end: Double(i) * 60 + 20,
                   wallStart: t0 + Double(i) * 60, wallEnd: t0 + Double(i) * 60 + 20, referenceStart: 0, referenceEnd: 20, confidence: 1)
        }
        airings.append(Airing(recording: 2, source: "phone", reference: "spot", start: 0, end: 10, referenceStart: 0, referenceEnd: 10, confidence: 1))
        let page = ReportHTML.page(airings, title: "t", recordingNames: [1: "/r/mon.ts", 2: "/p/clip.mp3"])
        XCTAssertTrue(page.contains("<strong>1 of 3 airing(s) have no wall-clock time</strong> (recorded without <code>--start-time</code>: phone · clip.mp3)"), page)
        XCTAssertEqual(count("<svg class=\"timeline\"", in: page), 2)
        XCTAssertTrue(page.contains("id=\"timeline-wall\""))
        XCTAssertTrue(page.contains(">08:00:00</text>"), "the timed airings keep the UTC axis")
        XCTAssertEqual(count("<rect class=\"airing\"", in: page), 3)
        XCTAssertEqual(count("<line class=\"plot-line\"", in: page), 3)
        XCTAssertTrue(page.contains("— recording time (no wall-clock time)</figcaption>"))
        let timed = ReportHTML.page(Array(airings.prefix(2)), title: "t")
        XCTAssertFalse(timed.contains("no wall-clock time"))
    }

    /// Issue 39 item 5: over two days, a 3-minute airing was a 1–2 px sliver with no way to
    /// zoom. A block is at least 4 units wide (moved in at the end of the axis), and one button
    /// a day shows the stretch of that day its airings cover; the script zooms and pans.
    func testTwoDaysGetDayButtonsAndShortAiringsStayVisible() {
        let day1 = 1_796_083_200.0, day2 = day1 + 86_400
        let airings = [
            Airing(recording: 1, source: "Radio 1", reference: "a", start: 0, end: 180, wallStart: day1 + 8 * 3600, wallEnd: day1 + 8 * 3600 + 180,
                   referenceStart: 0, referenceEnd: 180, confidence: 1),
            Airing(recording: 2, source: "Radio 2", reference: "b", start: 0, end: 180, wallStart: day2 + 14 * 3600, wallEnd: day2 + 14 * 3600 + 180,
                   referenceStart: 0, referenceEnd: 180, confidence: 1),
        ]
        let page = ReportHTML.page(airings, title: "t")
        XCTAssertTrue(page.contains("<button type=\"button\" data-lo=\"\(ReportHTML.n(day1 + 8 * 3600 - 30))\" data-hi=\"\(ReportHTML.n(day1 + 8 * 3600 + 210))\">2026-12-01 (1 airing)</button>"), page)
        XCTAssertTrue(page.contains(">2026-12-02 (1 airing)</button>"))
        XCTAssertTrue(page.contains("data-zoom=\"in\""))
        let widths = page.components(separatedBy: "<rect class=\"airing\"").dropFirst().map { part in
            Double(part.components(separatedBy: " width=\"")[1].split(separator: "\"").first ?? "0") ?? 0
        }
        XCTAssertEqual(widths, [4, 4])
        XCTAssertTrue(page.contains(" x=\"1206\" y=\"66\" width=\"4\""), "the last block moved in to end at the axis' end (1210)")
    }

    func testTicksAreRoundAndLabelledHoursMinutesSeconds() {
        XCTAssertEqual(ReportHTML.ticks(lo: 0, hi: 158, wall: false).map(\.1),
                       ["00:00:00", "00:00:30", "00:01:00", "00:01:30", "00:02:00", "00:02:30"])
        XCTAssertEqual(ReportHTML.ticks(lo: 0, hi: 2700, wall: false).map(\.1),
                       ["00:00:00", "00:05:00", "00:10:00", "00:15:00", "00:20:00", "00:25:00", "00:30:00", "00:35:00", "00:40:00", "00:45:00"])
        let midnight = 1_796_083_200.0
        XCTAssertEqual(ReportHTML.ticks(lo: midnight - 3600, hi: midnight + 3600, wall: true, count: 2).map(\.1),
                       ["11-30 23:00:00", "12-01 00:00:00", "12-01 01:00:00"])
        XCTAssertEqual(ReportHTML.iso(midnight + 0.25), "2026-12-01T00:00:00.250Z")
        XCTAssertEqual(ReportHTML.clock(-1.5, milliseconds: true), "-00:00:01.500")
    }

    func testFastTextMatchesPrintf() {
        for v in [0.0, -0.0001, 1.5, 2.25, -3.14159, 12345.6789, 0.99995, 86_399.9996] {
            for d in [0, 2, 3, 4, 5] {
                var printf = String(format: "%.\(d)f", v)
                if Double(printf) == 0 && printf.hasPrefix("-") { printf.removeFirst() }  // no negative zero
                XCTAssertEqual(TimeText.fixed(v, d), printf, "\(v) with \(d) decimals")
            }
        }
        XCTAssertEqual(TimeText.fixed(-0.00001, 3), "0.000")
        XCTAssertEqual(TimeText.clock(3725.4), "01:02:05")
        XCTAssertEqual(TimeText.clock(3725.4567, milliseconds: true), "01:02:05.457")
        XCTAssertEqual(TimeText.iso(-0.5), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(TimeText.iso(1_796_083_200 + 86_399.9996), "2026-12-02T00:00:00.000Z")
    }
}
