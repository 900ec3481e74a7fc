import Soundmark
#if canImport(Glibc)
import Glibc
#endif

/// Lets glibc's allocator keep up to 32 MB of freed memory for reuse, and serve blocks up to
/// 16 MB from its heaps instead of fresh `mmap`s. Matching allocates and frees vote arrays of a
/// few MB per speed candidate; by default each was a new mapping whose pages the kernel
/// zero-filled on first touch (on a 10 s clip about 50,000 page faults, a third of identify's
/// CPU time). With this, identify of a 10 s clip makes about 10,000 (its peak RSS grows by
/// about 3 MB). Called by `identify`, whose latency counts; long-running commands keep the
/// defaults, which return freed memory to the system sooner. It also keeps one malloc arena
/// for every thread (`M_ARENA_MAX` 1): the speed candidates' threads then reuse each other's
/// freed vote arrays instead of each keeping its own arena's peak (about 3–5 MB less peak RSS).
/// No effect with another C library.
func keepFreedMemoryForReuse() {
    #if canImport(Glibc)
    // mallopt(3) is declared in <malloc.h>, which the Glibc module does not include.
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3, arenaMax: Int32 = -8   // M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX
    _ = mallopt(mmapThreshold, 16 << 20)
    _ = mallopt(trimThreshold, 32 << 20)
    _ = mallopt(arenaMax, 1)
    #endif
}
