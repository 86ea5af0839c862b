import Core
import Foundation

/// One event of the video pipeline, read from its JSON (docs/api.md, "Video pipeline webhook"):
///
///     {"type": "video.asset.ready", "timestamp": "2026-11-24T10:00:00Z",
///      "data": {"book_id": 12, "asset_id": "enc_81f", "duration_seconds": 340,
///               "captions": [{"language": "en"}, {"language": "fr"}]}}
struct VideoEvent: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable {
        case created = "video.asset.created", processing = "video.asset.processing"
        case ready = "video.asset.ready", failed = "video.asset.failed"

        /// The asset's status after it.
        var status: String {
            switch self {
            case .created: "pending"
            case .processing: "processing"
            case .ready: "ready"
            case .failed: "failed"
            }
        }

        /// Between two events of the same instant, the later stage wins.
        var stage: Int {
            switch self {
            case .created: 0
            case .processing: 1
            case .ready, .failed: 2
            }
        }
    }

    let kind: Kind
    let occurredAt: Date
    let bookID: Int
    /// The pipeline's own name for the asset.
    let pipelineAssetID: String?
    let durationSeconds: Int?
    /// Caption tracks' languages (BCP 47), sorted, each once.
    let captions: [String]
    let failureReason: String?

    /// Reads an event; a problem names the field that is wrong.
    init(json: Data) throws {
        let body = try JSONBody(json: json)
        let type = try body.string("type", maxLength: 100)
        guard let kind = Kind(rawValue: type) else {
            throw Problem.invalidParameter("type", "type must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let occurredAt = Instants.dateTime(try body.string("timestamp", maxLength: 40)) else {
            throw Problem.invalidParameter("timestamp", "timestamp must be an RFC 3339 date-time")
        }
        guard let data = try body.object("data") else { throw Problem.invalidParameter("data", "data must be an object") }
        self.kind = kind
        self.occurredAt = occurredAt
        bookID = try data.integer("book_id", in: 1...Int(Int64.max))
        pipelineAssetID = try data.optionalString("asset_id", maxLength: 200)
        switch kind {
        case .ready:
            durationSeconds = try data.integer("duration_seconds", in: 1...86_400)
            var languages = Set<String>()
            for track in try data.has("captions") ? data.objectList("captions", count: 0...50) : [] {
                let language = try track.string("language", maxLength: 35)
                guard Self.isLanguageTag(language) else {
                    throw Problem.invalidParameter(track.path + "language", "\(track.path)language must be a language tag such as en or pt-BR")
                }
                languages.insert(language)
            }
            captions = languages.sorted()
            failureReason = nil
        case .failed:
            durationSeconds = nil
            captions = []
            failureReason = try data.optionalString("reason", maxLength: 500) ?? "unknown"
        case .created, .processing:
            durationSeconds = nil
            captions = []
            failureReason = nil
        }
    }

    /// A BCP 47 tag as the pipeline sends one: a 2–3 letter language, then subtags of 2–8
    /// letters or digits (`en`, `fr`, `pt-BR`, `zh-Hant`).
    static func isLanguageTag(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLowercase }) else { return false }
        return parts.dropFirst().allSatisfy { (2...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}
