import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// One SMTP conversation per message (RFC 5321): greeting, EHLO, STARTTLS and EHLO again (`smtp://`,
/// RFC 3207), AUTH PLAIN when the URL has a user, MAIL, RCPT, DATA, QUIT. Any reply outside the
/// expected class throws `SMTPError`; so does a TLS failure, and an `smtp://` server without STARTTLS.
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
            group.addTask {
                do { try await converse(from: sender, to: recipient, message: message) }
                catch let error as NIOSSLError { throw SMTPError(description: "TLS with \(server.host):\(server.port) failed: \(error)", permanent: false) }
                catch let error as NIOSSLExtraError { throw SMTPError(description: "TLS with \(server.host):\(server.port) failed: \(error)", permanent: false) }
            }
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
        let tlsContext = server.security == .insecure ? nil : try server.tlsContext()
        let (channel, handshake) = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .connect(host: server.host, port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handshake = server.security == .implicitTLS ? try tlsContext.map { try server.addTLS($0, to: channel) } : nil
                    return (try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel), handshake)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            try await handshake?.get()
            var replies = SMTPReplies(inbound.makeAsyncIterator())
            @discardableResult func command(_ line: String?, expect: Int) async throws -> SMTPReplies.Reply {
                if let line { try await outbound.write(ByteBuffer(string: line + "\r\n")) }
                let reply = try await replies.next()
                guard reply.code / 100 == expect else {
                    throw SMTPError(description: "\(line.map { String($0.prefix(20)) } ?? "greeting") → \(reply.code) \(reply.text)",
                                    permanent: reply.code / 100 == 5)
                }
                return reply
            }
            try await command(nil, expect: 2)
            let hello = try await command("EHLO \(helloName)", expect: 2)
            var encrypted = server.security == .implicitTLS
            if server.security == .startTLS, let tlsContext {
                guard hello.lines.contains(where: { $0.split(separator: " ").first?.uppercased() == "STARTTLS" }) else {
                    throw SMTPError(description: "\(server.host):\(server.port) does not offer STARTTLS: nothing sent unencrypted "
                                    + "(smtps:// for TLS from the start; smtp+insecure:// only for a relay without TLS)", permanent: false)
                }
                try await command("STARTTLS", expect: 2)
                // Bytes sent before the handshake would be read as if they came through TLS.
                guard replies.pending.isEmpty else { throw SMTPError(description: "data after the STARTTLS answer, before TLS", permanent: false) }
                let raw = channel.channel
                try await raw.eventLoop.flatSubmit {
                    do { return try server.addTLS(tlsContext, to: raw) } catch { return raw.eventLoop.makeFailedFuture(error) }
                }.get()
                encrypted = true
                try await command("EHLO \(helloName)", expect: 2)   // the capabilities again, now under TLS
            }
            if let user = server.user {
                guard encrypted || server.security == .insecure else {
                    throw SMTPError(description: "AUTH refused over an unencrypted connection", permanent: false)
                }
                let credentials = Data(([0] + Array(user.utf8) + [0] + Array((server.password ?? "").utf8))).base64EncodedString()
                try await command("AUTH PLAIN \(credentials)", expect: 2)
            }
            try await command("MAIL FROM:<\(Self.address(sender))>", expect: 2)
            try await command("RCPT TO:<\(Self.address(recipient))>", expect: 2)
            try await command("DATA", expect: 3)
            try await command(Self.dotStuffed(message) + "\r\n.", expect: 2)
            _ = try? await command("QUIT", expect: 2)
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
struct SMTPReplies {
    struct Reply {
        let code: Int
        /// Each line's text after the code (an EHLO answer: one capability a line).
        let lines: [String]
        var text: String { lines.joined(separator: " ") }
    }

    var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    /// Read and not yet consumed.
    private(set) var pending = ""

    init(_ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) { self.iterator = iterator }

    mutating func next() async throws -> Reply {
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
                    return Reply(code: code, lines: text)
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
