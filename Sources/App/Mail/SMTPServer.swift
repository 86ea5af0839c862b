import Foundation
import NIOCore
import NIOSSL
import NIOTLS

/// Where `SMTP_URL` points, and how the conversation is protected:
/// - `smtps://[user:password@]host[:port]`: TLS from the first byte, port 465 by default;
/// - `smtp://…`: port 587 by default, **STARTTLS required**: a server that does not offer it gets
///   nothing (no AUTH, no mail), the mail waits and is retried like any transient failure;
/// - `smtp+insecure://…`: no TLS at all, port 25 by default: the explicit opt-out for a relay on the
///   same host or a private network, the only scheme that sends AUTH unencrypted.
/// Certificates are verified against the system's roots, or with `?ca=/path/to/ca.pem` (TLS schemes
/// only; the file must exist) against that CA file alone (a private relay, the tests).
struct SMTPServer: Sendable, Equatable {
    enum Security: Sendable, Equatable {
        /// `smtps://`
        case implicitTLS
        /// `smtp://`
        case startTLS
        /// `smtp+insecure://`
        case insecure
    }

    let host: String
    let port: Int
    let security: Security
    let caFile: String?
    let user: String?
    let password: String?

    init?(url text: String) {
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else { return nil }
        let security: Security, defaultPort: Int
        switch url.scheme?.lowercased() {
        case "smtps": (security, defaultPort) = (.implicitTLS, 465)
        case "smtp": (security, defaultPort) = (.startTLS, 587)
        case "smtp+insecure": (security, defaultPort) = (.insecure, 25)
        default: return nil
        }
        // One known option only: a misspelt one would otherwise be ignored in silence.
        var caFile: String?
        for item in url.queryItems ?? [] {
            guard item.name == "ca", caFile == nil, security != .insecure, let path = item.value, FileManager.default.isReadableFile(atPath: path) else { return nil }
            caFile = path
        }
        (self.host, self.security, self.caFile, port) = (host, security, caFile, url.port ?? defaultPort)
        user = url.user?.removingPercentEncoding
        password = url.password?.removingPercentEncoding
    }

    /// Full verification (chain and name), against `caFile` when the URL gives one.
    func tlsContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile { configuration.trustRoots = .file(caFile) }
        return try NIOSSLContext(configuration: configuration)
    }

    /// Puts TLS first in `channel`'s pipeline (on its event loop); the future ends with the handshake:
    /// its error (an untrusted certificate, a wrong name) or the connection closed before it finished.
    func addTLS(_ context: NIOSSLContext, to channel: any Channel) throws -> EventLoopFuture<Void> {
        // No SNI for an IP address: the certificate is then checked against the peer's address.
        let tls = try NIOSSLClientHandler(context: context, serverHostname: host.first(where: \.isLetter) == nil ? nil : host)
        let handshake = channel.eventLoop.makePromise(of: Void.self)
        try channel.pipeline.syncOperations.addHandlers([tls, HandshakeWatcher(handshake)], position: .first)
        return handshake.futureResult
    }
}

/// Behind the TLS handler: completes its promise when the handshake ends, however it ends.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private var promise: EventLoopPromise<Void>?

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    private func end(_ result: Result<Void, any Error>) {
        promise?.completeWith(result)
        promise = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { end(.success(())) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.failure(SMTPClient.SMTPError(description: "the connection closed during the TLS handshake", permanent: false)))
        context.fireChannelInactive()
    }

    /// A connection that never opened: the promise still ends.
    func handlerRemoved(context: ChannelHandlerContext) {
        end(.failure(SMTPClient.SMTPError(description: "no TLS connection", permanent: false)))
    }
}
