import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback TCP relay to a target port that a test can cut and restore, to play a database that
/// goes away and comes back without touching the shared test cluster. `stop()` closes the
/// listener and every relayed connection (the app sees its connections drop); `start()` listens
/// on the same port again.
final class TCPRelay: Sendable {
    let port: Int
    private let targetPort: Int
    private let group: MultiThreadedEventLoopGroup
    private let state = NIOLockedValueBox<(listener: (any Channel)?, open: [any Channel])>((nil, []))

    /// Reserves a free port (nothing listens on it until `start()`).
    init(targetPort: Int) async throws {
        self.targetPort = targetPort
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let probe = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        port = probe.localAddress!.port!
        try await probe.close()
    }

    func start() async throws {
        let target = targetPort
        let state = state
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: target)
                    .flatMap { outbound in
                        state.withLockedValue { $0.open += [inbound, outbound] }
                        return inbound.pipeline.addHandler(Forward(to: outbound)).flatMap {
                            outbound.pipeline.addHandler(Forward(to: inbound))
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: port).get()
        state.withLockedValue { $0.listener = listener }
    }

    func stop() async {
        let (listener, open) = state.withLockedValue { state in
            defer { state = (nil, []) }
            return (state.listener, state.open)
        }
        try? await listener?.close()
        for channel in open { try? await channel.close() }
    }

    func shutdown() async {
        await stop()
        try? await group.shutdownGracefully()
    }

    /// Writes what one side reads to the other; closing either side closes both.
    private final class Forward: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel
        init(to partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }
        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
