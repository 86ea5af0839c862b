import Foundation

/// A CIDR range (`10.0.0.0/8`, `fd00::/8`; a bare address is the range of itself).
public struct IPRange: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let prefix: Int

    public init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let width: Int
        if case .v4 = address { width = 32 } else { width = 128 }
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), parts[1].count <= 3,
                  let prefix = Int(parts[1]), prefix <= width else { return nil }
            self.init(address, prefix)
        } else {
            self.init(address, width)
        }
        // A written range must start at its boundary (10.0.0.1/8 is a typo, not 10/8).
        guard self.address == address else { return nil }
    }

    init(_ address: IPAddress, _ prefix: Int) {
        self.prefix = prefix
        switch address {
        case .v4(let value):
            self.address = .v4(prefix == 0 ? 0 : value & ~UInt32(0) << UInt32(32 - prefix))
        case .v6(let high, let low):
            let highMask: UInt64 = prefix >= 64 ? ~0 : prefix == 0 ? 0 : ~UInt64(0) << UInt64(64 - prefix)
            let lowMask: UInt64 = prefix <= 64 ? 0 : prefix == 128 ? ~0 : ~UInt64(0) << UInt64(128 - prefix)
            self.address = .v6(high & highMask, low & lowMask)
        }
    }

    public func contains(_ other: IPAddress) -> Bool {
        switch (address, other) {
        case (.v4, .v4), (.v6, .v6): return IPRange(other, prefix).address == address
        default: return false
        }
    }

    public var description: String { "\(address)/\(prefix)" }
}

/// Where the app may open outbound connections on a customer's say-so (webhook endpoints): only
/// to addresses on the public internet, unless the operator allows a range (an on-premise
/// receiver). Loopback, private, shared (CGNAT), link-local (cloud metadata), multicast,
/// broadcast, documentation and reserved ranges are refused, IPv4 and IPv6 alike, including
/// IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4).
public struct OutboundAddressPolicy: Sendable {
    public let allowed: [IPRange]

    public init(allowing allowed: [IPRange] = []) { self.allowed = allowed }

    /// A comma-separated CIDR list (`WEBHOOK_ALLOW_PRIVATE`); nil when an item is not a range.
    public static func allowList(_ text: String) -> [IPRange]? {
        var ranges: [IPRange] = []
        for item in text.split(separator: ",") {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let range = IPRange(trimmed) else { return nil }
            ranges.append(range)
        }
        return ranges
    }

    public func permits(_ address: IPAddress) -> Bool {
        let address = address.unmapped
        if allowed.contains(where: { $0.contains(address) }) { return true }
        if let embedded = Self.embeddedV4(address) { return permits(embedded) }
        return !Self.isSpecialPurpose(address)
    }

    /// The IPv4 address a NAT64 address (64:ff9b::/96) reaches: a gateway would connect there.
    /// (IPv4-compatible ::/96 and 6to4 2002::/16 are refused outright.)
    static func embeddedV4(_ address: IPAddress) -> IPAddress? {
        guard case .v6(_, let low) = address, IPRange.nat64.contains(address) else { return nil }
        return .v4(UInt32(truncatingIfNeeded: low))
    }

    /// Not a globally reachable unicast address (IANA special-purpose registries).
    public static func isSpecialPurpose(_ address: IPAddress) -> Bool {
        switch address.unmapped {
        case .v4: return IPRange.specialV4.contains { $0.contains(address.unmapped) }
        case .v6:
            // Only global unicast (2000::/3) is public; within it, these are not.
            return !IPRange.globalUnicast.contains(address) || IPRange.specialV6.contains { $0.contains(address) }
        }
    }
}

extension IPRange {
    static func r(_ text: String) -> IPRange { IPRange(text)! }

    static let specialV4: [IPRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4",   // multicast; reserved, with 255.255.255.255 (broadcast)
    ].map(r)
    static let globalUnicast = r("2000::/3")
    static let nat64 = r("64:ff9b::/96")
    static let specialV6: [IPRange] = [
        "2001::/23",      // IETF protocol assignments, with Teredo (2001::/32), which tunnels to any IPv4
        "2001:db8::/32", "3fff::/20",   // documentation
        "2002::/16",      // 6to4, which reaches any IPv4
        "5f00::/16",      // SRv6 SIDs
    ].map(r)
}

/// An outbound URL's host as the HTTP client reads it (Foundation's `URL.host`, IPv6 brackets
/// removed) and, when it is a literal address in any spelling, that address.
public struct OutboundTarget: Sendable, Equatable {
    public let host: String
    public let literal: IPAddress?

    public enum Problem: Error, Equatable { case notHTTP, badHost }

    public init(host: String, literal: IPAddress?) {
        self.host = host
        self.literal = literal
    }

    public static func parse(_ text: String) -> Result<OutboundTarget, Problem> {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) else { return .failure(.notHTTP) }
        guard var host = url.host, !host.isEmpty else { return .failure(.notHTTP) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A zone (fe80::1%eth0), percent-encoding or anything a name cannot hold is no host to send to.
        guard host.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.:_".unicodeScalars.contains($0)) }) else {
            return .failure(.badHost)
        }
        if let address = IPAddress(host) { return .success(OutboundTarget(host: host, literal: address)) }
        if host.contains(":") || IPAddress.looksNumeric(host) { return .failure(.badHost) }
        return .success(OutboundTarget(host: host, literal: nil))
    }
}
