#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finding bytes in bytes over raw buffers rather than the generic collection algorithms:
/// Foundation's `firstRange(of:)` on a slice runs unspecialized, through witness tables, at a few
/// nanoseconds a byte — it was most of a one-off search's time, reading a page's titles back out
/// of their JSON for the highlights. A key is found by Horspool's skips (a `"key":"` needle
/// starts with the quote every key starts with, so `memchr` on its first byte stopped every few
/// bytes of a book's JSON); a single byte by `memchr`.
enum ByteSearch {
    /// A pattern with its skip table, made once per key.
    struct Needle: Sendable {
        let bytes: [UInt8]
        /// How far the window may move when its last byte is the index.
        let shift: [Int]

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            var shift = [Int](repeating: bytes.count, count: 256)
            for (i, byte) in bytes.dropLast().enumerated() { shift[Int(byte)] = bytes.count - 1 - i }
            self.shift = shift
        }
    }

    /// The index just past the first occurrence of `needle` in `bytes`, or nil.
    static func end(of needle: Needle, in bytes: ArraySlice<UInt8>) -> Int? {
        let m = needle.bytes.count
        guard m > 0, m <= bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { haystack -> Int? in
            needle.bytes.withUnsafeBufferPointer { pattern -> Int? in
                needle.shift.withUnsafeBufferPointer { shift -> Int? in
                    let last = pattern[m - 1]
                    var i = 0
                    while i <= haystack.count - m {
                        let tail = haystack[i + m - 1]
                        if tail == last && matches(haystack.baseAddress! + i, pattern, m - 1) { return bytes.startIndex + i + m }
                        i += shift[Int(tail)]
                    }
                    return nil
                }
            }
        }
    }

    /// Whether the `count` bytes at `at` are the pattern's first ones — compared last first, in
    /// line: a key's needle ends `":"`, and most quotes of a book's JSON (its last byte) are not
    /// after a colon, so a candidate usually fails at once, without a call to `memcmp`.
    @inline(__always) private static func matches(_ at: UnsafePointer<UInt8>, _ pattern: UnsafeBufferPointer<UInt8>, _ count: Int) -> Bool {
        var j = count - 1
        while j >= 0 {
            if at[j] != pattern[j] { return false }
            j -= 1
        }
        return true
    }

    /// The index of the first `byte` in `bytes` from `start`, or nil.
    static func first(_ byte: UInt8, in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard start < bytes.endIndex else { return nil }
        return bytes[start...].withUnsafeBytes { buffer -> Int? in
            guard let hit = memchr(buffer.baseAddress!, Int32(byte), buffer.count) else { return nil }
            return start + (UnsafeRawPointer(hit) - buffer.baseAddress!)
        }
    }
}
