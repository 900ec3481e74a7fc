/// The keys by which `catalog add` finds the references that may hold the same recording as a new
/// one (a ``SameRecordingTest`` then decides): a bottom-k sketch (Broder, *On the
/// resemblance and containment of documents*, 1997) of the reference's postings.
///
/// A key is a posting's hash with its anchor frame's ``bucketFrames``-frame bucket: two copies of
/// one recording are aligned at offset 0, so they share keys, while references that merely share
/// hashes (the hash space is about 2^20) at other times do not. Each reference stores the
/// ``stored`` keys that come first in a fixed pseudo-random order; a new signature looks up its
/// first ``queried`` keys in that order, so a copy that kept a fraction of the landmarks still
/// shares dozens of keys with its original, and an unrelated reference almost none.
public enum DuplicateKeys {
    /// Keys stored per reference: 128.
    public static let stored = 128
    /// Keys of a new signature looked up: 512 (a copy's first keys are mostly among them even
    /// when it has up to four times the original's distinct keys, or lost some of them).
    public static let queried = 512
    /// The most references decoded and voted for per check, those sharing the most keys: 16.
    public static let candidates = 16
    /// References past which a key is common and not used to find candidates: 64. A key so many
    /// references hold (a shared music bed, a steady tone at the same second) tells none of them
    /// apart; its look-up stops after 65 rows, so the check's cost does not grow with them.
    public static let commonKey = 64
    /// Frames per time bucket of a key: 64 (about 1 s at the default 16 ms hop). A copy is
    /// aligned within ±2 frames, so a landmark changes bucket in about 4 of 64 cases.
    public static let bucketFrames: UInt32 = 64

    /// The key of a posting: its hash above its frame's bucket (frames are under 2^24, buckets
    /// under 2^18).
    public static func key(_ posting: Posting) -> Int64 {
        Int64(posting.hash) << 18 | Int64(posting.frame / bucketFrames)
    }

    /// The first `count` distinct keys of `postings` in the sketch's order (a 64-bit mix of the
    /// key, the SplitMix64 finaliser), all of them when there are fewer.
    public static func keys(of postings: [Posting], count: Int) -> [Int64] {
        let distinct = Set(postings.map(key))
        return distinct.map { ($0, mix(UInt64(bitPattern: $0))) }.sorted { $0.1 < $1.1 }.prefix(count).map(\.0)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
