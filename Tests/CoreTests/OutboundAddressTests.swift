import Core
import Testing

/// Which addresses a webhook may be sent to (security round 4, finding 5: SSRF).
@Suite("Outbound addresses")
struct OutboundAddressTests {
    let policy = OutboundAddressPolicy()

    @Test("IPv4 in every inet_aton spelling is the same address")
    func spellings() {
        let loopback = IPAddress.v4(0x7f00_0001)
        for text in ["127.0.0.1", "2130706433", "0x7f000001", "0x7F.0.0.1", "0177.0.0.1", "0177.0.0.01", "127.1", "127.0.1", "127.0.0.1.", "017700000001"] {
            #expect(IPAddress(text) == loopback, "\(text)")
        }
        #expect(IPAddress("0") == .v4(0))
        #expect(IPAddress("169.254.169.254") == .v4(0xa9fe_a9fe))
        for text in ["1.2.3.256", "256.1", "1.2.3.4.5", "0x1g", "08.1.1.1", "4294967296", "", ".", "1..2", "example.com", "1e5", "-1", "+1.2.3.4"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress.looksNumeric("1.2.3.256") && IPAddress.looksNumeric("x.0x10") && !IPAddress.looksNumeric("hooks.example.com"))
    }

    @Test("IPv6: compressed, full, bracketed, embedded IPv4; zones and junk are not addresses")
    func v6() {
        #expect(IPAddress("::1") == .v6(0, 1))
        #expect(IPAddress("[::1]") == .v6(0, 1))
        #expect(IPAddress("0:0:0:0:0:0:0:1") == .v6(0, 1))
        #expect(IPAddress("::") == .v6(0, 0))
        #expect(IPAddress("::ffff:127.0.0.1")?.unmapped == .v4(0x7f00_0001))
        #expect(IPAddress("::ffff:7f00:1")?.unmapped == .v4(0x7f00_0001))
        #expect(IPAddress("fe80::1") == .v6(0xfe80_0000_0000_0000, 1))
        #expect(IPAddress("2001:DB8::8:800:200C:417A") == .v6(0x2001_0db8_0000_0000, 0x0008_0800_200c_417a))
        for text in ["fe80::1%eth0", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "::ffff:1.2.3", "::ffff:0x7f.0.0.1", "g::1", "1:2:3:4:5:6:7"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("2001:db8::1")!.description == "2001:db8:0:0:0:0:0:1")
        #expect(IPAddress("0x7f.1")!.description == "127.0.0.1")
    }

    @Test("refused: loopback, private, CGNAT, link-local, this network, multicast, broadcast, reserved, documentation")
    func refusedV4() {
        for text in ["0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.255.254",
                     "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.168.1.1", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.51.100.7",
                     "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "2130706433", "0x0a000001", "012.0.0.1"] {
            #expect(!policy.permits(IPAddress(text)!), "\(text)")
        }
        for text in ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.1.1", "192.169.0.1", "93.184.215.14"] {
            #expect(policy.permits(IPAddress(text)!), "\(text)")
        }
    }

    @Test("refused IPv6: ::1, ::, ULA, link-local, site-local, multicast, mapped and NAT64 of private, 6to4, Teredo, documentation")
    func refusedV6() {
        for text in ["::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
                     "::ffff:169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::169.254.169.254", "64:ff9b:1::1", "::127.0.0.1",
                     "2002:7f00:1::", "2002:0808:0808::1", "2001::1", "2001:db8::1", "100::1", "3fff::1", "5f00::1", "4000::1"] {
            #expect(!policy.permits(IPAddress(text)!), "\(text)")
        }
        for text in ["2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8"] {
            #expect(policy.permits(IPAddress(text)!), "\(text)")
        }
    }

    @Test("an operator's allow-list opens exactly its ranges (mapped forms too), and refuses malformed items")
    func allowList() throws {
        let ranges = try #require(OutboundAddressPolicy.allowList(" 10.0.0.0/8, 127.0.0.1/32 ,fd00::/8,"))
        let open = OutboundAddressPolicy(allowing: ranges)
        for text in ["10.1.2.3", "127.0.0.1", "::ffff:127.0.0.1", "fd00::5", "64:ff9b::10.9.9.9", "8.8.8.8"] { #expect(open.permits(IPAddress(text)!), "\(text)") }
        for text in ["127.0.0.2", "192.168.1.1", "169.254.169.254", "fc00::1", "::1"] { #expect(!open.permits(IPAddress(text)!), "\(text)") }
        for text in ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "localhost", "10.0.0.0/8/8", "::1/129", "10.0.0.0/-1"] {
            #expect(OutboundAddressPolicy.allowList(text) == nil, "\(text)")
        }
        #expect(OutboundAddressPolicy.allowList("")?.isEmpty == true)
        #expect(IPRange("0.0.0.0/0")!.contains(IPAddress("8.8.8.8")!) && !IPRange("0.0.0.0/0")!.contains(IPAddress("::1")!))
        #expect(IPRange("::/0")!.contains(IPAddress("::1")!) && IPRange("2001:db8::/33")!.contains(IPAddress("2001:db8:7fff::1")!))
    }

    @Test("a URL's host as the HTTP client reads it: literal in any spelling, a name, or refused")
    func targets() throws {
        #expect(try OutboundTarget.parse("http://2130706433/hook").get() == OutboundTarget(host: "2130706433", literal: .v4(0x7f00_0001)))
        #expect(try OutboundTarget.parse("https://[::1]:8443/x").get().literal == .v6(0, 1))
        #expect(try OutboundTarget.parse("http://user@0x7f.1:80/").get().literal == .v4(0x7f00_0001))
        #expect(try OutboundTarget.parse("HTTPS://hooks.example.com/in").get() == OutboundTarget(host: "hooks.example.com", literal: nil))
        #expect(OutboundTarget.parse("ftp://example.com/") == .failure(.notHTTP))
        #expect(OutboundTarget.parse("http:///x") == .failure(.notHTTP))
        #expect(OutboundTarget.parse("http://1.2.3.256/") == .failure(.badHost))
        #expect(OutboundTarget.parse("http://[fe80::1%25eth0]/") == .failure(.badHost) || OutboundTarget.parse("http://[fe80::1%25eth0]/") == .failure(.notHTTP))
    }
}
