import Foundation
import Glibc
import NIOPosix
@testable import App

/// A real SMTP server for a test: `tests/smtp_sink.py` (aiosmtpd, installed by `make test`) in a
/// child process, writing each message it accepts as JSON into a folder of its own.
final class SMTPSink: @unchecked Sendable {
    struct Mail: Decodable, Sendable {
        let from: String
        let to: [String]
        let subject: String
        let text: String?
        let html: String?
        /// Whether it came over TLS (STARTTLS or from the first byte).
        let tls: Bool

        /// The token of the first link in the plain-text part.
        var token: String? {
            guard let text, let range = text.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression) else { return nil }
            return String(text[range].dropFirst("token=".count))
        }
    }

    /// How the sink speaks TLS: not at all (it offers no STARTTLS), STARTTLS (offered, and required
    /// before AUTH and MAIL), or from the first byte; its certificate is signed by the CA at `caPath`.
    enum TLS: String { case none, startTLS = "starttls", implicit }

    /// An AUTH the sink received, whether or not it succeeded.
    struct AuthAttempt: Decodable, Sendable {
        let mechanism: String
        let tls: Bool
    }

    let folder: URL
    let port: Int
    let tls: TLS
    private let process: Process
    private let input: Pipe

    /// Starts the server (on `port`, or one the kernel picks); `user`/`password` make it require AUTH.
    init(port requested: Int = 0, user: String? = nil, password: String? = nil, tls: TLS = .none) async throws {
        self.tls = tls
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", TestDatabase.projectDirectory + "tests/smtp_sink.py", folder.path, "--port", String(requested)]
        if let user, let password { arguments += ["--user", user, "--password", password] }
        if tls != .none { arguments += ["--tls", tls.rawValue] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // The sink reads its stdin until it closes: it ends with this test process, however that ends.
        let input = Pipe()
        process.standardInput = input
        self.input = input
        try process.run()
        self.process = process
        // The first line says the port; reading blocks, so it runs on NIO's thread pool.
        let line = try await NIOThreadPool.singleton.runIfActive {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw TestFailure("the SMTP sink did not start (is aiosmtpd installed? `python3 -m pip install aiosmtpd`): \(line)")
        }
        self.port = port
    }

    /// Its CA's certificate (with `tls`).
    var caPath: String { folder.appendingPathComponent("ca.pem").path }

    /// The `SMTP_URL` that reaches it: without TLS the explicit opt-out, with TLS its CA trusted.
    var url: String { url() }

    func url(user: String? = nil, password: String? = nil) -> String {
        let login = user.map { "\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!):\((password ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)@" } ?? ""
        switch tls {
        case .none: return "smtp+insecure://\(login)127.0.0.1:\(port)"
        case .startTLS: return "smtp://\(login)127.0.0.1:\(port)?ca=\(caPath)"
        case .implicit: return "smtps://\(login)127.0.0.1:\(port)?ca=\(caPath)"
        }
    }

    func stop() {
        // SIGKILL: a child spawned from a test thread may inherit a mask that blocks SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }

    /// Every message received so far, oldest first.
    func received() throws -> [Mail] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return try names.filter { $0.hasSuffix(".json") }.sorted().map {
            try JSONDecoder().decode(Mail.self, from: Data(contentsOf: folder.appendingPathComponent($0)))
        }
    }

    /// Every AUTH received so far.
    func authAttempts() throws -> [AuthAttempt] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return try names.filter { $0.hasSuffix(".attempt") }.sorted().map {
            try JSONDecoder().decode(AuthAttempt.self, from: Data(contentsOf: folder.appendingPathComponent($0)))
        }
    }

    /// Waits (up to `seconds`) until `count` messages to `recipient` have arrived; returns them. The
    /// wait is a hang guard (ten minutes): a full parallel run on two cores can take minutes to deliver.
    func mails(to recipient: String, count: Int = 1, within seconds: Double = 600) async throws -> [Mail] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let mails = try received().filter { $0.to.contains(recipient) }
            if mails.count >= count { return mails }
            guard Date() < deadline else { throw TestFailure("\(mails.count) of \(count) mails to \(recipient) arrived within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
