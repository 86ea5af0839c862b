import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Where `SMTP_URL` points: `smtp://[user:password@]host[:port]` (plain, port 25 by default) or
/// `smtps://…` (TLS from the first byte, port 465 by default). STARTTLS is not spoken: a provider
/// that offers port 465 is reached with `smtps://`.
struct SMTPServer: Sendable, Equatable {
    let host: String
    let port: Int
    let tls: Bool
    let user: String?
    let password: String?

    init?(url text: String) {
        guard let url = URLComponents(string: text), let scheme = url.scheme, ["smtp", "smtps"].contains(scheme),
              let host = url.host, !host.isEmpty else { return nil }
        self.host = host
        tls = scheme == "smtps"
        port = url.port ?? (tls ? 465 : 25)
        user = url.user?.removingPercentEncoding
        password = url.password?.removingPercentEncoding
    }
}

/// One SMTP conversation per message (RFC 5321): greeting, EHLO, AUTH PLAIN when the URL has a
/// user, MAIL, RCPT, DATA, QUIT. Any reply outside the expected class throws `SMTPError`.
struct SMTPClient: Sendable {
    let server: SMTPServer
    let group: any EventLoopGroup
    /// The name this host gives in EHLO.
    var helloName = "storytime.local"
    var timeout: Duration = .seconds(30)

    struct SMTPError: Error, CustomStringConvertible {
        let description: String
        /// A 5xx answer: the server will not take this message however often it is retried.
        let permanent: Bool
    }

    func send(from sender: String, to recipient: String, message: String) async throws {
        for address in [sender, recipient] where address.contains(where: { "\r\n".contains($0) }) || Self.address(address).contains(where: { "<> ".contains($0) }) {
            throw SMTPError(description: "refused address \(address.debugDescription)", permanent: true)
        }
        // A recipient is an address alone (`AccountInput.email`): a form (`Name <a@b>`, a list)
        // would reach another mailbox than the one its mail budget was spent on.
        if recipient.unicodeScalars.contains(where: AccountInput.formCharacters.contains) {
            throw SMTPError(description: "refused recipient \(recipient.debugDescription): not an address alone", permanent: true)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await converse(from: sender, to: recipient, message: message) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw SMTPError(description: "no answer from \(server.host):\(server.port) within \(timeout)", permanent: false)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func converse(from sender: String, to recipient: String, message: String) async throws {
        let server = self.server
        let tlsContext = server.tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .connect(host: server.host, port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        let name = server.host.first(where: \.isLetter) == nil ? nil : server.host   // no SNI for an IP address
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: name))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var replies = SMTPReplies(inbound.makeAsyncIterator())
            func command(_ line: String?, expect: Int) async throws {
                if let line { try await outbound.write(ByteBuffer(string: line + "\r\n")) }
                let reply = try await replies.next()
                guard reply.code / 100 == expect else {
                    throw SMTPError(description: "\(line.map { String($0.prefix(20)) } ?? "greeting") → \(reply.code) \(reply.text)",
                                    permanent: reply.code / 100 == 5)
                }
            }
            try await command(nil, expect: 2)
            try await command("EHLO \(helloName)", expect: 2)
            if let user = server.user {
                let credentials = Data(([0] + Array(user.utf8) + [0] + Array((server.password ?? "").utf8))).base64EncodedString()
                try await command("AUTH PLAIN \(credentials)", expect: 2)
            }
            try await command("MAIL FROM:<\(Self.address(sender))>", expect: 2)
            try await command("RCPT TO:<\(Self.address(recipient))>", expect: 2)
            try await command("DATA", expect: 3)
            try await command(Self.dotStuffed(message) + "\r\n.", expect: 2)
            try? await command("QUIT", expect: 2)
        }
    }

    /// `Name <a@b>` → `a@b`.
    static func address(_ text: String) -> String {
        guard let open = text.lastIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close else { return text }
        return String(text[text.index(after: open)..<close])
    }

    /// CRLF line ends, and a leading dot doubled (RFC 5321 §4.5.2).
    static func dotStuffed(_ message: String) -> String {
        message.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }.joined(separator: "\r\n")
    }
}

/// Reads SMTP replies (`250-…` continuation lines, then `250 …`) from the channel's bytes.
private struct SMTPReplies {
    var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    var pending = ""

    init(_ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) { self.iterator = iterator }

    mutating func next() async throws -> (code: Int, text: String) {
        var text: [String] = []
        while true {
            while let end = pending.range(of: "\r\n") ?? pending.range(of: "\n") {
                let line = String(pending[..<end.lowerBound])
                pending.removeSubrange(..<end.upperBound)
                guard line.count >= 3, let code = Int(line.prefix(3)) else {
                    throw SMTPClient.SMTPError(description: "not an SMTP reply: \(line.prefix(80).debugDescription)", permanent: false)
                }
                text.append(String(line.dropFirst(4)))
                if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " {
                    return (code, text.joined(separator: " "))
                }
            }
            guard var buffer = try await iterator.next() else {
                throw SMTPClient.SMTPError(description: "the SMTP server closed the connection", permanent: false)
            }
            pending += buffer.readString(length: buffer.readableBytes) ?? ""
            if pending.utf8.count > 64 * 1024 { throw SMTPClient.SMTPError(description: "SMTP reply too long", permanent: false) }
        }
    }
}
