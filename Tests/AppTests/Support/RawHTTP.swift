
import Glibc



@testable import App
import Foundation
import NIOPosix
import Vapor

/// The app listening on a loopback port, spoken to byte for byte: header lines exactly as a proxy
/// would write them, or a body that is declared but never sent.
struct RawHTTP {
    let port: Int

    /// Starts `app`'s HTTP server on a free port for `body`, and stops it afterwards.
    static func serving(_ app: Application, _ body: (RawHTTP) async throws -> Void) async throws {
        // Port 0: the kernel picks a free one (a random guess collided with a parallel test).
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else {
            await app.server.shutdown()
            throw TestFailure("the server did not report its port")
        }
        do { try await body(RawHTTP(port: port)) } catch { await app.server.shutdown(); throw error }
        await app.server.shutdown()
    }

    struct Answer { let status: Int; let text: String }

    /// Threads for the blocking client side alone (tests run in parallel, each may wait here).
    private static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 16)
        pool.start()
        return pool
    }()

    /// Sends `head` (CRLF line ends added, then the blank line) and `body`, and reads the answer's
    /// head within `timeout` seconds (a server still waiting for a body times out: status 0). The
    /// timeout is a hang guard, not a measure: a loaded CI machine (every suite at once on two
    /// cores) has answered a request after more than 30 s, so it is ten minutes.
    func send(_ head: [String], body: String = "", timeout: Int = 600) async throws -> Answer {
        let port = self.port
        // Blocking socket calls run on threads of their own: never on the cooperative pool the
        // app's handlers need, nor on NIO's shared pool, where Vapor reads Leaf templates (two
        // tests waiting there for a 403 page took both threads the page needed to render).
        return try await Self.threads.runIfActive {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestFailure("socket") }
            defer { close(fd) }
            var wait = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw TestFailure("connect to \(port)") }
            let bytes = Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { break }
                sent += n
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { break }
                received += buffer[0..<n]
                if let text = String(bytes: received, encoding: .utf8), text.contains("\r\n\r\n") { break }
            }
            let text = String(decoding: received, as: UTF8.self)
            let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            return Answer(status: status, text: text)
        }
    }
}
