/// Sorts `keys` ascending with a least-significant-digit radix sort (8-bit digits; a digit that
/// is the same in every key is skipped). O(n) per digit: faster than a comparison sort for the
/// hundreds of thousands of vote keys a query makes.
func radixSort(_ keys: inout [UInt64]) {
    let n = keys.count
    guard n > 64 else { keys.sort(); return }
    var counts = [Int](repeating: 0, count: 8 * 256)
    keys.withUnsafeBufferPointer { k in
        counts.withUnsafeMutableBufferPointer { c in
            for key in k {
                var v = key
                for d in 0..<8 {
                    c[d &* 256 &+ Int(v & 0xFF)] &+= 1
                    v >>= 8
                }
            }
        }
    }
    var scratch = [UInt64](repeating: 0, count: n)
    var sourceIsKeys = true
    for d in 0..<8 {
        let base = d * 256, shift = UInt64(8 * d)
        // A digit every key shares does not reorder anything (both buffers hold the same keys).
        if counts[base + Int((keys[0] >> shift) & 0xFF)] == n { continue }
        var offsets = [Int](repeating: 0, count: 256)
        var sum = 0
        for b in 0..<256 { offsets[b] = sum; sum += counts[base + b] }
        keys.withUnsafeMutableBufferPointer { k in
            scratch.withUnsafeMutableBufferPointer { s in
                offsets.withUnsafeMutableBufferPointer { o in
                    let (from, to) = sourceIsKeys ? (k, s) : (s, k)
                    for i in 0..<n {
                        let v = from[i]
                        let b = Int((v >> shift) & 0xFF)
                        to[o[b]] = v
                        o[b] &+= 1
                    }
                }
            }
        }
        sourceIsKeys.toggle()
    }
    if !sourceIsKeys {
        keys.withUnsafeMutableBufferPointer { k in
            scratch.withUnsafeBufferPointer { s in
                for i in 0..<n { k[i] = s[i] }
            }
        }
    }
}

/// Orders `keys` ascending by their bits from `lowBit` up (`0 ..< 64`), ignoring the bits below:
/// keys equal from `lowBit` up end up next to each other in no particular order. A
/// least-significant-digit radix sort with 11-bit digits over those bits only (a digit that is
/// the same in every key is skipped): vote keys are grouped by (reference, offset) in 4 passes
/// instead of the 7–8 a sort of all 64 bits takes (see `Matcher.runs(sorting:)`).
func radixSort(_ keys: inout [UInt64], ignoringBitsBelow lowBit: Int) {
    let n = keys.count
    guard n > 64, lowBit > 0, lowBit < 64 else { keys.sort(); return }
    let digitBits = 11, radix = 1 << 11
    let passes = (64 - lowBit + digitBits - 1) / digitBits
    var counts = [Int](repeating: 0, count: passes * radix)
    keys.withUnsafeBufferPointer { k in
        counts.withUnsafeMutableBufferPointer { c in
            for key in k {
                var v = key >> UInt64(lowBit)
                for d in 0..<passes {
                    c[d &* radix &+ Int(v & UInt64(radix - 1))] &+= 1
                    v >>= UInt64(digitBits)
                }
            }
        }
    }
    var scratch = [UInt64](repeating: 0, count: n)
    var sourceIsKeys = true
    var offsets = [Int](repeating: 0, count: radix)
    for d in 0..<passes {
        let base = d * radix, shift = UInt64(lowBit + digitBits * d), mask = UInt64(radix - 1)
        // A digit every key shares does not reorder anything (both buffers hold the same keys).
        let first = sourceIsKeys ? keys[0] : scratch[0]
        if counts[base + Int((first >> shift) & mask)] == n { continue }
        var sum = 0
        for b in 0..<radix { offsets[b] = sum; sum += counts[base + b] }
        keys.withUnsafeMutableBufferPointer { k in
            scratch.withUnsafeMutableBufferPointer { s in
                offsets.withUnsafeMutableBufferPointer { o in
                    let (from, to) = sourceIsKeys ? (k, s) : (s, k)
                    for i in 0..<n {
                        let v = from[i]
                        let b = Int((v >> shift) & mask)
                        to[o[b]] = v
                        o[b] &+= 1
                    }
                }
            }
        }
        sourceIsKeys.toggle()
    }
    if !sourceIsKeys { keys = scratch }
}
