import CatalogIndexing
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The catalog engine's snapshot file (`ENGINE_SNAPSHOT_PATH`): a header saying which build, which
/// schema and which catalog version wrote it, the index's arrays as raw bytes, and a checksum. A
/// starting instance loads it in about a second instead of reading every book from SQL, then
/// catches up from the change log past its version.
///
/// A snapshot is refused — and the engine built from SQL as before — when it is missing, from
/// another build of the app (the index layout is the build's), from another database schema,
/// damaged, or not loadable for any other reason; a snapshot is a cache, never a source of truth.
enum EngineSnapshot {
    struct Header: Equatable, Sendable {
        var build: String
        var schema: String
        /// `catalog_state.catalog_id`: the database it was written against.
        var catalog: String
        var version: Int
        var books: Int
        var writtenAt: Date
    }

    enum Refusal: Error, Equatable, CustomStringConvertible {
        case missing
        case notASnapshot
        case otherBuild(String)
        case otherSchema(String)
        case otherCatalog(String)
        /// Newer than the database (restored from an older backup): the log cannot go back.
        case ahead(Int)
        case damaged(String)

        var description: String {
            switch self {
            case .missing: "no snapshot"
            case .notASnapshot: "not an engine snapshot"
            case .otherBuild(let build): "written by another build (\(build))"
            case .otherSchema(let schema): "written against another schema (\(schema))"
            case .otherCatalog(let catalog): "written against another database (catalog \(catalog))"
            case .ahead(let version): "at catalog version \(version), ahead of the database"
            case .damaged(let reason): "damaged: \(reason)"
            }
        }
    }

    /// What a snapshot holds: the index, and the answers the engine kept at its version (so a
    /// restarted instance does not compute the popular searches again while under load).
    struct Contents: Sendable {
        var index: CatalogIndex
        var answers: [String: CatalogEngine.AnswerMemo.Entry] = [:]
    }

    struct WriteFailure: Error, CustomStringConvertible {
        let description: String
    }

    static let magic = "STORYTIME-ENGINE-SNAPSHOT"

    /// This build of the app: the index layout's format and the executable's size and time, so a
    /// snapshot is read only by the very build that wrote it (another build may lay the index out
    /// differently; when unsure, refuse and build).
    static let build: String = {
        var identity = "format \(CatalogIndex.snapshotFormat)"
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
        if let attributes = try? FileManager.default.attributesOfItem(atPath: executable) {
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            identity += "; \(URL(fileURLWithPath: executable).lastPathComponent) \(size) bytes, \(Int(modified))"
        }
        return identity
    }()

    /// What a snapshot must match: the schema as the migrations table records it, and the catalog.
    struct Identity: Decodable, Sendable {
        var schema: String
        var catalog: String
        var version: Int
    }

    /// Writes `index` to `path` through a temporary file renamed over it, so a reader (another
    /// instance sharing the directory) sees the old snapshot or the new one, never a torn one.
    /// Returns the file's size.
    @discardableResult
    static func write(_ contents: Contents, header: Header, to path: String) throws -> Int {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw WriteFailure(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var closed = false
        defer { if !closed { close(fd); unlink(temporary) } }
        let writer = SnapshotWriter { bytes in try Self.writeAll(fd, bytes) }
        try writer.string(magic)
        try writer.string(header.build)
        try writer.string(header.schema)
        try writer.string(header.catalog)
        try writer.int(header.version)
        try writer.int(header.books)
        try writer.int(Int(header.writtenAt.timeIntervalSince1970))
        try contents.index.encode(to: writer)
        let keys = contents.answers.keys.sorted()
        try writer.int(keys.count)
        for key in keys {
            let entry = contents.answers[key]!
            let (answer, words, forms, filters) = (entry.answer, entry.words, entry.forms, entry.filters)
            try writer.string(key)
            // A browsing answer's filters (`MemoCarry.BrowseFilters`): a flag, then each (Int.min:
            // none), the order, the blocked categories' count and ids.
            try writer.bool(filters != nil)
            if let filters {
                for value in [filters.publisher, filters.age, filters.category, filters.maxAge] { try writer.int(value ?? Int.min) }
                try writer.bool(filters.titleOrder)
                try writer.int(filters.blockedCategories.count)
                for id in filters.blockedCategories { try writer.int(id) }
            }
            try writer.int(words.count)
            for (word, wordForms) in zip(words, forms) {
                try writer.string(word)
                try writer.int(wordForms.count)
                for form in wordForms { try writer.string(form) }
            }
            try answer.encode(to: writer)
        }
        try writer.finish()
        let size = writer.written + 8
        try withUnsafeBytes(of: writer.checksum.value.littleEndian) { try writeAll(fd, $0) }
        guard fsync(fd) == 0 else { throw WriteFailure(description: "fsync: \(String(cString: strerror(errno)))") }
        close(fd)
        closed = true
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw WriteFailure(description: "rename: \(String(cString: strerror(errno)))")
        }
        return size
    }

    /// The header of the snapshot at `path` (cheap: the index is not read).
    static func header(at path: String) throws -> Header {
        try mapped(path) { bytes in
            var reader = SnapshotReader(bytes)
            return try readHeader(&reader)
        }
    }

    /// The snapshot at `path` if this build wrote it against this schema and catalog, no further
    /// than the database's version, and it is whole.
    static func read(from path: String, expecting identity: Identity) throws -> (Header, Contents) {
        try mapped(path) { bytes in
            var reader = SnapshotReader(bytes)
            let header = try readHeader(&reader)
            if let refusal = refusal(of: header, expecting: identity) { throw refusal }
            guard bytes.count % 8 == 0, bytes.count >= 8 else { throw Refusal.damaged("its size is not whole words") }
            var checksum = SnapshotChecksum()
            checksum.add(UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 8]))
            let stored = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
            guard checksum.value == stored else { throw Refusal.damaged("checksum mismatch") }
            do {
                var contents = Contents(index: try CatalogIndex(snapshot: &reader))
                let count = try reader.int()
                guard count >= 0 && count <= CatalogEngine.AnswerMemo.limit else { throw Refusal.damaged("kept answers") }
                for _ in 0..<count {
                    let key = try reader.string()
                    var filters: MemoCarry.BrowseFilters?
                    if try reader.bool() {
                        let values = try (0..<4).map { _ in try reader.int() }.map { $0 == Int.min ? nil : $0 }
                        let titleOrder = try reader.bool(), blocked = try reader.int()
                        guard blocked >= 0 && blocked <= reader.remaining else { throw Refusal.damaged("kept answers") }
                        filters = MemoCarry.BrowseFilters(publisher: values[0], age: values[1], category: values[2], titleOrder: titleOrder,
                                                          maxAge: values[3], blockedCategories: try (0..<blocked).map { _ in try reader.int() })
                    }
                    let wordCount = try reader.int()
                    guard wordCount >= 0 && wordCount <= reader.remaining else { throw Refusal.damaged("kept answers") }
                    var words: [String] = [], forms: [[String]] = []
                    for _ in 0..<wordCount {
                        words.append(try reader.string())
                        let formCount = try reader.int()
                        guard formCount >= 0 && formCount <= reader.remaining else { throw Refusal.damaged("kept answers") }
                        forms.append(try (0..<formCount).map { _ in try reader.string() })
                    }
                    contents.answers[key] = CatalogEngine.AnswerMemo.Entry(try CatalogIndex.Answer(snapshot: &reader), words, forms, filters)
                }
                guard reader.remaining == 8, contents.index.count == header.books else { throw Refusal.damaged("unexpected length") }
                return (header, contents)
            } catch let failure as SnapshotReader.Failure {
                throw Refusal.damaged(failure.description)
            }
        }
    }

    /// Why this build would not start from a snapshot with `header` (nil: it would).
    static func refusal(of header: Header, expecting identity: Identity) -> Refusal? {
        if header.build != build { return .otherBuild(header.build) }
        if header.schema != identity.schema { return .otherSchema(header.schema) }
        if header.catalog != identity.catalog { return .otherCatalog(header.catalog) }
        if header.version > identity.version { return .ahead(header.version) }
        return nil
    }

    private static func readHeader(_ reader: inout SnapshotReader) throws -> Header {
        do {
            guard try reader.string() == magic else { throw Refusal.notASnapshot }
            return Header(build: try reader.string(), schema: try reader.string(), catalog: try reader.string(), version: try reader.int(), books: try reader.int(),
                          writtenAt: Date(timeIntervalSince1970: TimeInterval(try reader.int())))
        } catch is SnapshotReader.Failure {
            throw Refusal.notASnapshot
        }
    }

    /// Runs `body` over the file's bytes, mapped read-only (the page cache, not the heap).
    private static func mapped<T>(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw errno == ENOENT ? Refusal.missing : Refusal.damaged(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Refusal.damaged(String(cString: strerror(errno))) }
        let size = Int(info.st_size)
        guard size > 0 else { throw Refusal.notASnapshot }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw Refusal.damaged("mmap: \(String(cString: strerror(errno)))")
        }
        defer { munmap(base, size) }
        _ = madvise(base, size, MADV_SEQUENTIAL)
        return try body(UnsafeRawBufferPointer(start: base, count: size))
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw WriteFailure(description: "write: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }
}
