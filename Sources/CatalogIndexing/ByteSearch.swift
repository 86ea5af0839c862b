#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finding bytes in bytes with the C library's `memchr` and `memcmp` (vectorised) rather than the generic
/// collection algorithms: Foundation's `firstRange(of:)` on a slice runs unspecialized, through
/// witness tables, at a few nanoseconds a byte — it was most of a one-off search's time, reading
/// a page's titles back out of their JSON for the highlights.
enum ByteSearch {
    /// The index just past the first occurrence of `needle` in `bytes`, or nil.
    static func end(of needle: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, needle.count <= bytes.count else { return nil }
        return bytes.withUnsafeBytes { haystack -> Int? in
            needle.withUnsafeBytes { pattern -> Int? in
                let base = haystack.baseAddress!, first = Int32(needle[0])
                var at = 0
                let last = haystack.count - pattern.count
                while at <= last, let hit = memchr(base + at, first, last - at + 1) {
                    let i = UnsafeRawPointer(hit) - base
                    if memcmp(base + i, pattern.baseAddress!, pattern.count) == 0 { return bytes.startIndex + i + pattern.count }
                    at = i + 1
                }
                return nil
            }
        }
    }
}
