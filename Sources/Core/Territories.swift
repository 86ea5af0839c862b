/// ISO 3166-1 alpha-2 country codes, and where a rights window applies.
public enum Territories {
    /// The 249 officially assigned codes (from Debian's iso-codes, 3166-1).
    public static let codes: Set<String> = Set("""
        AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
        """.split(separator: " ").map(String.init))

    /// The codes in `text` (separated by commas or spaces, any case), upper-cased, sorted and
    /// without repeats; the first unknown code is the error.
    public static func parse(_ text: String) -> Result<[String], UnknownCode> {
        var found = Set<String>()
        for part in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) {
            let code = part.uppercased()
            guard codes.contains(code) else { return .failure(UnknownCode(code: String(part))) }
            found.insert(code)
        }
        return .success(found.sorted())
    }

    public struct UnknownCode: Error, Equatable {
        public let code: String
        public var message: String { "\"\(code)\" is not an ISO 3166-1 alpha-2 country code (such as FR, US, GB)." }
    }
}

/// Where a rights window applies: in `territories` (empty: everywhere) except `excluded`.
public struct TerritoryRule: Sendable, Hashable {
    public let territories: [String]
    public let excluded: [String]

    public static let worldwide = TerritoryRule(territories: [], excluded: [])

    public init(territories: [String], excluded: [String]) {
        self.territories = territories.sorted()
        self.excluded = excluded.sorted()
    }

    /// Whether the rule covers `country`; nil (no country asked about) is covered by every rule.
    public func applies(to country: String?) -> Bool {
        guard let country else { return true }
        return (territories.isEmpty || territories.contains(country)) && !excluded.contains(country)
    }
}
