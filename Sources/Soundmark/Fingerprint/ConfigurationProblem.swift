import Foundation

/// The check of a configuration's ranges, with the fingerprint stage because the last bound is
/// the hash space of ``LandmarkHasher``.
extension Configuration {
    /// What makes this configuration unusable for analysis or hashing, as `name value (range)`,
    /// or `nil` when every parameter is in range: rates and lengths positive, frequencies finite
    /// with `0 < minFrequency < maxFrequency`, `0 ≤ targetZoneMinFrames ≤ targetZoneMaxFrames ≤
    /// 32767` (a landmark stores its frame difference in 16 bits), a hash space of at most 2^32.
    /// Configurations read from files (signatures) are checked with it.
    public var problem: String? {
        func outside<T: Comparable>(_ name: String, _ v: T, _ r: ClosedRange<T>) -> String? {
            r.contains(v) ? nil : "\(name) \(v) (expected \(r.lowerBound)...\(r.upperBound))"
        }
        let checks: [String?] = [
            outside("sampleRate", sampleRate, 1...1_000_000),
            outside("frameLength", frameLength, 4...(1 << 20)),
            outside("hopLength", hopLength, 1...(1 << 20)),
            minFrequency.isFinite && minFrequency > 0 ? nil : "minFrequency \(minFrequency) (expected > 0)",
            maxFrequency.isFinite && maxFrequency > minFrequency ? nil : "maxFrequency \(maxFrequency) (expected > minFrequency)",
            outside("peakFrameRadius", peakFrameRadius, 0...65_536),
            outside("peakBinRadius", peakBinRadius, 0...65_536),
            peakFloor.isNaN ? "peakFloor nan" : nil,
            outside("targetZoneMinFrames", targetZoneMinFrames, 0...Int(Int16.max)),
            outside("targetZoneMaxFrames", targetZoneMaxFrames, max(0, targetZoneMinFrames)...Int(Int16.max)),
            targetZoneOctaves.isFinite && targetZoneOctaves > 0 && targetZoneOctaves <= 64
                ? nil : "targetZoneOctaves \(targetZoneOctaves) (expected > 0 and ≤ 64)",
            outside("fanOut", fanOut, 1...65_536),
            outside("queryFanOut", queryFanOut, 1...65_536),
            outside("queryPeakFrameRadius", queryPeakFrameRadius, 0...65_536),
            outside("queryPeakBinRadius", queryPeakBinRadius, 0...65_536),
            outside("logStepsPerOctave", logStepsPerOctave, 1...4096),
        ]
        if let first = checks.compactMap({ $0 }).first { return first }
        let hashCount = LandmarkHasher(configuration: self).hashCount
        return hashCount <= 1 << 32 ? nil : "hash space \(hashCount) (expected ≤ 2^32)"
    }
}
