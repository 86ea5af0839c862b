import Foundation

/// An RFC 5322 message with a plain-text and an HTML part (multipart/alternative), UTF-8, each part
/// base64 in 76-character lines; a non-ASCII subject is RFC 2047 encoded.
struct MIMEMessage {
    let from: String
    let to: String
    let subject: String
    let text: String
    let html: String
    let messageID: String
    let date: Date

    var rendered: String {
        let boundary = "storytime-" + messageID.prefix(while: { $0 != "@" }).filter { $0.isLetter || $0.isNumber }
        let head = [
            "From: \(from)",
            "To: \(to)",
            "Subject: \(Self.encodedHeader(subject))",
            "Date: \(Self.dateFormatter.string(from: date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
        ]
        func part(_ type: String, _ body: String) -> [String] {
            ["--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""] + Self.base64Lines(body)
        }
        return (head + [""] + part("text/plain", text) + part("text/html", html) + ["--\(boundary)--", ""]).joined(separator: "\r\n")
    }

    static func encodedHeader(_ text: String) -> String {
        text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 32 }) ? text : "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    static func base64Lines(_ text: String) -> [String] {
        let encoded = Array(Data(text.utf8).base64EncodedString())
        return stride(from: 0, to: encoded.count, by: 76).map { String(encoded[$0..<min($0 + 76, encoded.count)]) }
    }

    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter
    }()
}
