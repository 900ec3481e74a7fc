// Fills a recognition library with a simulated year of airings through the library API, for
// measuring report and query times (README, "Recognition library"): SOURCES stations × 365 days,
// one day-long recording per station and day, AIRINGS airings in all, drawn from REFERENCES
// spots with a Zipf-like popularity. Deterministic (a fixed-seed generator).
//
// usage: library-year LIBRARY.db [AIRINGS=500000] [SOURCES=4] [REFERENCES=500]
import Foundation
import Soundmark

var args = Array(CommandLine.arguments.dropFirst())
guard let path = args.first else {
    FileHandle.standardError.write(Data("usage: library-year LIBRARY.db [AIRINGS] [SOURCES] [REFERENCES]\n".utf8))
    exit(2)
}
let total = args.count > 1 ? Int(args[1]) ?? 500_000 : 500_000
let sourceCount = args.count > 2 ? Int(args[2]) ?? 4 : 4
let referenceCount = args.count > 3 ? Int(args[3]) ?? 500 : 500

/// SplitMix64: a small deterministic generator.
var rng = SplitMix64(seed: 2026)
// Zipf-like popularity: weight 1/(rank+1); cumulative table for sampling.
let weights = (0..<referenceCount).map { 1.0 / Double($0 + 1) }
var cumulative: [Double] = []
var sum = 0.0
for w in weights { sum += w; cumulative.append(sum) }
let durations = (0..<referenceCount).map { _ in Double(Int.random(in: 10...60, using: &rng)) }
func pick() -> Int {
    let u = Double.random(in: 0..<sum, using: &rng)
    var lo = 0, hi = referenceCount - 1
    while lo < hi { let mid = (lo + hi) / 2; if cumulative[mid] < u { lo = mid + 1 } else { hi = mid } }
    return lo
}

let library = try Library(path: path, create: true)
let yearStart = 1_767_225_600.0  // 2026-01-01T00:00:00Z
let days = 365
let recordings = sourceCount * days
let started = Date()
var written = 0
for day in 0..<days {
    for s in 0..<sourceCount {
        let index = day * sourceCount + s
        let count = total * (index + 1) / recordings - total * index / recordings
        let wall = yearStart + Double(day) * 86_400
        // Airings spread over the day, in order, none overlapping.
        var starts = (0..<count).map { _ in Double.random(in: 0..<86_340, using: &rng) }
        starts.sort()
        var airings: [Airing] = []
        airings.reserveCapacity(count)
        var last = -1.0
        for t0 in starts {
            let r = pick()
            let start = max(t0, last + 0.5)
            let aired = min(durations[r], Double.random(in: 8...durations[r], using: &rng))
            let end = start + aired
            last = end
            let offset = Double.random(in: 0...(durations[r] - aired), using: &rng)
            airings.append(Airing(reference: "spot-\(r + 1)", title: "Spot \(r + 1)", artist: "Advertiser \(r % 37 + 1)",
                                  referenceDuration: durations[r], start: start, end: end, wallStart: wall + start,
                                  wallEnd: wall + end, referenceStart: offset, referenceEnd: offset + aired,
                                  confidence: Double.random(in: 0.6...1, using: &rng)))
        }
        var digest = AudioDigest()
        digest.append(bytes: Array("station-\(s + 1) day \(day)".utf8))
        try library.record(LibraryRecording(digest: digest.hex, name: "station-\(s + 1)/\(Library.dayName(Int(wall / 86_400))).ts",
                                            source: "station-\(s + 1)", duration: 86_400, wallStart: wall), airings: airings)
        written += airings.count
    }
}
let seconds = Date().timeIntervalSince(started)
print(String(format: "%d airings, %d recordings, %d sources, %d references in %.1f s (%.0f airings/s)", written, recordings,
             sourceCount, referenceCount, seconds, Double(written) / seconds))
