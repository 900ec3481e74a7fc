import Foundation

/// Every parameter of the fingerprint, with its unit and default, in one value.
///
/// The analysis follows the landmark ("constellation") scheme of Wang, *An Industrial-Strength
/// Audio Search Algorithm*, ISMIR 2003: spectrogram peaks are paired into landmarks
/// (anchor, target, time difference) and each landmark becomes a hash. Two choices are ours:
///
/// - Frequencies enter the hash on a logarithmic scale, and the target's frequency as the
///   *ratio* to the anchor's. A speed change (pitch and tempo together) by a factor `1 + s`
///   multiplies every frequency by `1 + s`, so the ratio is unchanged and the anchor moves by
///   a constant number of log steps; the matcher undoes the change by rescaling the query's
///   peaks over a grid of candidate skews (see ``Matcher``).
/// - Peaks are strict maxima of a fixed time–frequency neighbourhood, decided in a streaming
///   pass, so the same audio gives the same peaks however it was chunked.
///
/// A catalog stores the configuration it was built with together with ``formatVersion``;
/// a catalog built with another ``referenceAnalysis`` is refused (the query-only parameters
/// may differ).
///
/// Decoding `{}` gives the defaults.
public struct Configuration: Codable, Equatable, Sendable {
    /// Version of the signature and catalog format. Bumped whenever hashes or storage change.
    public static let formatVersion = 1

    /// Analysis sample rate in Hz. All audio is resampled to mono at this rate. Default 8000
    /// (content up to 4 kHz: enough for phone audio, cheap to decode).
    public var sampleRate: Int = 8000
    /// FFT frame length in samples. Default 1024 (128 ms at 8 kHz, 7.8125 Hz per bin).
    public var frameLength: Int = 1024
    /// Hop between frames in samples. Default 128 (16 ms at 8 kHz): the time resolution of offsets.
    public var hopLength: Int = 128
    /// Lowest peak frequency in Hz. Default 150 (below, bins are too coarse on a log scale).
    public var minFrequency: Double = 150
    /// Highest peak frequency in Hz. Default 3800 (just under the 4 kHz Nyquist frequency).
    public var maxFrequency: Double = 3800
    /// Half-height of the peak neighbourhood in frames: a peak is the strict maximum of
    /// ±`peakFrameRadius` frames. Default 9 (±144 ms).
    public var peakFrameRadius: Int = 9
    /// Half-width of the peak neighbourhood in bins. Default 13 (±102 Hz at 8 kHz / 1024).
    public var peakBinRadius: Int = 13
    /// Peaks whose power is below this level, in dB relative to a full-scale sine, are dropped
    /// (digital silence and very quiet tones make no landmarks). Default −75 dB.
    public var peakFloor: Double = -75
    /// Nearest target frame after the anchor, in frames. Default 2 (32 ms).
    public var targetZoneMinFrames: Int = 2
    /// Farthest target frame after the anchor, in frames. Default 48 (768 ms).
    public var targetZoneMaxFrames: Int = 48
    /// Half-height of the target zone in octaves around the anchor frequency. Default 1.0.
    public var targetZoneOctaves: Double = 1.0
    /// Targets paired with each anchor (fan-out): the first ones in time order. Default 5.
    public var fanOut: Int = 5
    /// Fan-out of query signatures (``SignatureGenerator/Role/query``). Default 10: twice the
    /// reference fan-out, so a query whose peaks are disturbed by noise still contains most of
    /// the reference's pairs.
    public var queryFanOut: Int = 10
    /// Peak neighbourhood half-height for query signatures, in frames. Default 7: a smaller
    /// neighbourhood than the reference's keeps music peaks that noise would otherwise mask.
    public var queryPeakFrameRadius: Int = 7
    /// Peak neighbourhood half-width for query signatures, in bins. Default 10.
    public var queryPeakBinRadius: Int = 10
    /// Resolution of the logarithmic frequency scale used in hashes, in steps per octave.
    /// Default 48 (one step ≈ 1.45 %, about one bin at 500 Hz).
    public var logStepsPerOctave: Int = 48

    /// The default configuration.
    public init() {}

    /// Duration of one hop in seconds (`hopLength / sampleRate`).
    public var hopDuration: Double { Double(hopLength) / Double(sampleRate) }
    /// Width of one FFT bin in Hz (`sampleRate / frameLength`).
    public var binWidth: Double { Double(sampleRate) / Double(frameLength) }
    /// This configuration with the query-only parameters (``queryFanOut``,
    /// ``queryPeakFrameRadius``, ``queryPeakBinRadius``) at their defaults: everything a
    /// reference signature and a catalog's postings depend on. Catalogs compare this, so
    /// tuning how queries are analysed never makes a catalog unreadable.
    public var referenceAnalysis: Configuration {
        var c = self
        let d = Configuration()
        c.queryFanOut = d.queryFanOut
        c.queryPeakFrameRadius = d.queryPeakFrameRadius
        c.queryPeakBinRadius = d.queryPeakBinRadius
        return c
    }

    /// The parameters whose values differ, as `name X (expected Y)` joined by commas, where X is
    /// this configuration's value and Y `other`'s, in parameter-name order; empty when equal.
    public func differences(from other: Configuration) -> String {
        func fields(_ c: Configuration) -> [String: String] {
            guard let data = try? JSONEncoder().encode(c),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
            return object.mapValues { "\($0)" }
        }
        let mine = fields(self), theirs = fields(other)
        return mine.keys.sorted().compactMap { key in
            mine[key] == theirs[key] ? nil : "\(key) \(mine[key] ?? "-") (expected \(theirs[key] ?? "-"))"
        }.joined(separator: ", ")
    }

    /// The parameters a query signature is analysed with: the query fan-out and neighbourhood.
    public var forQuery: Configuration {
        var c = self
        c.fanOut = queryFanOut
        c.peakFrameRadius = queryPeakFrameRadius
        c.peakBinRadius = queryPeakBinRadius
        return c
    }

    /// Lowest bin index searched for peaks.
    public var minBin: Int { max(1, Int((minFrequency / binWidth).rounded(.down))) }
    /// Highest bin index searched for peaks.
    public var maxBin: Int { min(frameLength / 2 - 1, Int((maxFrequency / binWidth).rounded(.up))) }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Configuration()
        sampleRate = try c.decodeIfPresent(Int.self, forKey: .sampleRate) ?? d.sampleRate
        frameLength = try c.decodeIfPresent(Int.self, forKey: .frameLength) ?? d.frameLength
        hopLength = try c.decodeIfPresent(Int.self, forKey: .hopLength) ?? d.hopLength
        minFrequency = try c.decodeIfPresent(Double.self, forKey: .minFrequency) ?? d.minFrequency
        maxFrequency = try c.decodeIfPresent(Double.self, forKey: .maxFrequency) ?? d.maxFrequency
        peakFrameRadius = try c.decodeIfPresent(Int.self, forKey: .peakFrameRadius) ?? d.peakFrameRadius
        peakBinRadius = try c.decodeIfPresent(Int.self, forKey: .peakBinRadius) ?? d.peakBinRadius
        peakFloor = try c.decodeIfPresent(Double.self, forKey: .peakFloor) ?? d.peakFloor
        targetZoneMinFrames = try c.decodeIfPresent(Int.self, forKey: .targetZoneMinFrames) ?? d.targetZoneMinFrames
        targetZoneMaxFrames = try c.decodeIfPresent(Int.self, forKey: .targetZoneMaxFrames) ?? d.targetZoneMaxFrames
        targetZoneOctaves = try c.decodeIfPresent(Double.self, forKey: .targetZoneOctaves) ?? d.targetZoneOctaves
        fanOut = try c.decodeIfPresent(Int.self, forKey: .fanOut) ?? d.fanOut
        queryFanOut = try c.decodeIfPresent(Int.self, forKey: .queryFanOut) ?? d.queryFanOut
        queryPeakFrameRadius = try c.decodeIfPresent(Int.self, forKey: .queryPeakFrameRadius) ?? d.queryPeakFrameRadius
        queryPeakBinRadius = try c.decodeIfPresent(Int.self, forKey: .queryPeakBinRadius) ?? d.queryPeakBinRadius
        logStepsPerOctave = try c.decodeIfPresent(Int.self, forKey: .logStepsPerOctave) ?? d.logStepsPerOctave
    }
}
