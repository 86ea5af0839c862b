/// A binary file of fixed-width values and arrays of them, for the catalog engine's snapshot:
/// arrays are written as their raw bytes (a million books are a few dozen `memcpy`s to load),
/// every item padded to 8 bytes so a reader can copy them from an aligned mapping, and a checksum
/// over everything written, so a torn or damaged file is refused rather than half-read.
///
/// The layout is this process's (little-endian, 64-bit): a snapshot is read by the same build
/// that wrote it, which the file's header checks before anything else.
public final class SnapshotWriter {
    public private(set) var checksum = SnapshotChecksum()
    public private(set) var written = 0
    private var buffer: [UInt8] = []
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private static let bufferSize = 1 << 20

    /// `sink` receives the bytes in order, in chunks whose sizes are multiples of 8.
    public init(sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(Self.bufferSize)
    }

    public func int(_ value: Int) throws {
        try withUnsafeBytes(of: Int64(value).littleEndian) { try append($0) }
    }

    public func bool(_ value: Bool) throws { try int(value ? 1 : 0) }

    public func string(_ value: String) throws { try array(Array(value.utf8)) }

    /// The element count, then the elements' bytes.
    public func array<T: BitwiseCopyable>(_ values: [T]) throws {
        try int(values.count)
        try values.withUnsafeBytes { try append($0) }
    }

    /// Writes what is buffered; call once at the end.
    public func finish() throws { try flush() }

    private func append(_ bytes: UnsafeRawBufferPointer) throws {
        let padding = (8 - bytes.count % 8) % 8
        if bytes.count >= Self.bufferSize / 4 {
            try flush()
            if padding == 0 { try emit(bytes); return }
            let whole = bytes.count - bytes.count % 8
            try emit(UnsafeRawBufferPointer(rebasing: bytes[0..<whole]))
            buffer.append(contentsOf: bytes[whole...])
        } else {
            if buffer.count + bytes.count + padding > Self.bufferSize { try flush() }
            buffer.append(contentsOf: bytes)
        }
        buffer.append(contentsOf: repeatElement(0, count: padding))
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try emit($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        checksum.add(bytes)
        written += bytes.count
        try sink(bytes)
    }
}

/// Reads what `SnapshotWriter` wrote, refusing (throwing) rather than reading past the end.
public struct SnapshotReader {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case truncated
        case corrupt(String)
        public var description: String {
            switch self {
            case .truncated: "the snapshot ends early"
            case .corrupt(let what): "the snapshot is damaged: \(what)"
            }
        }
    }

    private let bytes: UnsafeRawBufferPointer
    public private(set) var offset = 0

    /// `bytes` must be 8-byte aligned (a mapping or an array's storage is).
    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var remaining: Int { bytes.count - offset }

    public mutating func int() throws -> Int {
        guard remaining >= 8 else { throw Failure.truncated }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)
        offset += 8
        return Int(Int64(littleEndian: value))
    }

    public mutating func bool() throws -> Bool { try int() != 0 }

    public mutating func string() throws -> String {
        let utf8: [UInt8] = try array()
        return String(decoding: utf8, as: UTF8.self)
    }

    public mutating func array<T: BitwiseCopyable>(of _: T.Type = T.self) throws -> [T] {
        let count = try int()
        let size = MemoryLayout<T>.stride
        guard count >= 0, count <= remaining / max(size, 1) else { throw count < 0 ? Failure.corrupt("a negative count") : Failure.truncated }
        let length = count * size
        let padded = length + (8 - length % 8) % 8
        guard padded <= remaining else { throw Failure.truncated }
        let source = bytes.baseAddress! + offset
        let result = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: length) }
            initialized = count
        }
        offset += padded
        return result
    }
}

/// A fast 64-bit checksum over 8-byte words (four lanes of multiply-xor, folded at the end):
/// catches a torn or damaged file, not an adversary — the file is the instance's own.
public struct SnapshotChecksum: Equatable, Sendable {
    private var lanes: (UInt64, UInt64, UInt64, UInt64) = (0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x27D4_EB2F_1656_67C5)
    private var length: UInt64 = 0
    private var carry = 0

    public init() {}

    /// Adds `bytes`, whose count must be a multiple of 8.
    public mutating func add(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count % 8 == 0, "checksummed chunks are whole words")
        let words = bytes.count / 8
        let prime: UInt64 = 0x0000_0100_0000_01B3
        var (a, b, c, d) = lanes
        var i = 0
        // Lanes follow the word's absolute position, so chunking does not change the result.
        while i < words && (carry + i) % 4 != 0 {
            mix(&a, &b, &c, &d, lane: (carry + i) % 4, bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self), prime)
            i += 1
        }
        while i + 4 <= words {
            a = (a ^ bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) &* prime
            b = (b ^ bytes.loadUnaligned(fromByteOffset: i * 8 + 8, as: UInt64.self)) &* prime
            c = (c ^ bytes.loadUnaligned(fromByteOffset: i * 8 + 16, as: UInt64.self)) &* prime
            d = (d ^ bytes.loadUnaligned(fromByteOffset: i * 8 + 24, as: UInt64.self)) &* prime
            i += 4
        }
        while i < words {
            mix(&a, &b, &c, &d, lane: (carry + i) % 4, bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self), prime)
            i += 1
        }
        lanes = (a, b, c, d)
        carry = (carry + words) % 4
        length &+= UInt64(bytes.count)
    }

    private func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64, lane: Int, _ word: UInt64, _ prime: UInt64) {
        switch lane {
        case 0: a = (a ^ word) &* prime
        case 1: b = (b ^ word) &* prime
        case 2: c = (c ^ word) &* prime
        default: d = (d ^ word) &* prime
        }
    }

    public var value: UInt64 {
        let (a, b, c, d) = lanes
        var h = length
        for lane in [a, b, c, d] { h = (h ^ (lane >> 29 ^ lane)) &* 0xBF58_476D_1CE4_E5B9 }
        return h ^ (h >> 31)
    }

    public static func == (lhs: SnapshotChecksum, rhs: SnapshotChecksum) -> Bool { lhs.value == rhs.value }
}
