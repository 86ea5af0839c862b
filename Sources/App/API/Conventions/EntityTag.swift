import Crypto
import NIOCore

/// Strong entity tags (RFC 9110 §8.8.3): a digest of the identity body, the same on every
/// instance for the same bytes. A compressed representation carries the same tag with its coding
/// appended (`"…-gzip"`, `"…-br"`), so each representation's tag is its own while `If-None-Match`
/// with any of them matches the body.
enum EntityTag {
    /// `language`: the answer's `Content-Language`, part of the tag (an answer per locale is its
    /// own representation even when its bytes are the same).
    static func strong(for body: ByteBuffer, language: String? = nil) -> String {
        var hasher = SHA256()
        hasher.update(data: body.readableBytesView)
        if let language { hasher.update(data: Array(("\u{0}" + language).utf8)) }
        let digest = hasher.finalize()
        return "\"" + digest.prefix(16).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined() + "\""
    }

    /// `etag` with the content coding's suffix: `"abc"` → `"abc-gzip"`.
    static func encoded(_ etag: String, coding: String) -> String {
        guard etag.hasSuffix("\""), !etag.hasPrefix("W/") else { return etag }
        return String(etag.dropLast()) + "-" + coding + "\""
    }

    /// Whether an `If-None-Match` value names `etag` (weak comparison, as RFC 9110 asks for this
    /// header; any content-coding suffix ignored; `*` matches anything).
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        held(ifNoneMatch, etag) != nil
    }

    /// The tag of `ifNoneMatch` that matches `etag` (the representation the client holds, its
    /// coding suffix and all); nil when none does, `etag` itself for `*`.
    static func held(_ ifNoneMatch: String?, _ etag: String) -> String? {
        guard let ifNoneMatch else { return nil }
        let wanted = opaque(etag)
        var star = false
        for item in ifNoneMatch.split(separator: ",") {
            let tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { star = true } else if opaque(tag) == wanted { return tag }
        }
        return star ? etag : nil
    }

    private static func opaque(_ tag: String) -> Substring {
        var tag = Substring(tag)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        for coding in ["-gzip\"", "-br\""] where tag.hasSuffix(coding) {
            tag = tag.dropLast(coding.count) + "\""
        }
        return tag
    }
}
