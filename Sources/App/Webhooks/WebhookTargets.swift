import Core
import Foundation
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Where outbound webhooks may go (security round 4, finding 5: SSRF). An endpoint's host is
/// resolved once per check; every address it resolves to must be on the public internet (or in
/// `WEBHOOK_ALLOW_PRIVATE`), and the delivery then connects to the very address checked — no
/// second lookup a rebinding DNS server could answer differently.
struct WebhookTargets: Sendable {
    let policy: OutboundAddressPolicy
    /// Every address of a host name (tests put a fixed answer here).
    var resolve: @Sendable (String) async throws -> [IPAddress] = SystemResolver.addresses

    init(allowing ranges: [IPRange], resolve: (@Sendable (String) async throws -> [IPAddress])? = nil) {
        policy = OutboundAddressPolicy(allowing: ranges)
        if let resolve { self.resolve = resolve }
    }

    enum Refusal: Error, Equatable { case notHTTP, badHost, notAllowed, unresolved }

    /// A host and the address to connect to for it.
    struct Checked: Sendable, Equatable {
        let host: String
        let address: IPAddress
    }

    func check(_ url: String) async -> Result<Checked, Refusal> {
        let target: OutboundTarget
        switch OutboundTarget.parse(url) {
        case .failure(.notHTTP): return .failure(.notHTTP)
        case .failure(.badHost): return .failure(.badHost)
        case .success(let parsed): target = parsed
        }
        var addresses: [IPAddress]
        if let literal = target.literal { addresses = [literal] }
        else {
            do { addresses = try await resolve(target.host) } catch { return .failure(.unresolved) }
        }
        addresses = addresses.map(\.unmapped)
        guard let first = addresses.first else { return .failure(.unresolved) }
        // Every answer, not only the first: a name that also points inside is refused.
        guard addresses.allSatisfy(policy.permits) else { return .failure(.notAllowed) }
        return .success(Checked(host: target.host, address: first))
    }

    /// The endpoint form's message beside the URL, nil when the URL may be saved. A name that does
    /// not resolve (yet) is accepted: each delivery checks again.
    func formError(_ url: String) async -> String? {
        switch await check(url) {
        case .success, .failure(.unresolved): return nil
        case .failure(.notHTTP): return "Enter an http(s) URL."
        case .failure(.badHost): return "Enter a host name or a plain IP address."
        case .failure(.notAllowed):
            return "Webhooks are sent to the public internet only: this address is loopback, private, link-local or reserved (or the name resolves to one)."
        }
    }
}

/// `getaddrinfo` off the event loops, every IPv4 and IPv6 answer — on threads of its own: a slow
/// name server must not hold NIO's shared pool, where Vapor reads the console's templates.
enum SystemResolver {
    struct Failed: Error {}

    private static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    @Sendable static func addresses(_ host: String) async throws -> [IPAddress] {
        try await threads.runIfActive { try lookUp(host) }
    }

    private static func lookUp(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { throw Failed() }
        defer { freeaddrinfo(first) }
        var found: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                switch Int32(info.pointee.ai_family) {
                case AF_INET:
                    let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    found.append(.v4(UInt32(bigEndian: value)))
                case AF_INET6:
                    let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    found.append(IPAddress(v6: bytes))
                default: break
                }
            }
            cursor = info.pointee.ai_next
        }
        guard !found.isEmpty else { throw Failed() }
        var seen = Set<IPAddress>()
        return found.filter { seen.insert($0).inserted }
    }
}
