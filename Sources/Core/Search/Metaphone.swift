/// Lawrence Philips' Metaphone, as PostgreSQL's `fuzzystrmatch.metaphone(word, 255)` computes it
/// (tested equal over the catalog's vocabulary): a spelling's sound, so a child's "elefunt" and
/// "dinasor" meet Elephant (`ELFNT`) and Dinosaur (`TNSR`). ASCII letters only; others are skipped.
public enum Metaphone {
    public static func code(_ word: String) -> String {
        let w: [UInt8] = word.utf8.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }
        func at(_ i: Int) -> UInt8 { i >= 0 && i < w.count ? w[i] : 0 }
        func isAlpha(_ c: UInt8) -> Bool { c >= 65 && c <= 90 }
        func isVowel(_ c: UInt8) -> Bool { "AEIOU".utf8.contains(c) }
        func soft(_ c: UInt8) -> Bool { c == 69 || c == 73 || c == 89 }        // E I Y
        var out: [UInt8] = []
        var i = 0
        while i < w.count && !isAlpha(w[i]) { i += 1 }
        guard i < w.count else { return "" }
        // The first letter.
        switch w[i] {
        case 65:  // A: AE → E, else A
            if at(i + 1) == 69 { out.append(69); i += 2 } else { out.append(65); i += 1 }
        case 71, 75, 80:  // GN KN PN → N
            if at(i + 1) == 78 { out.append(78); i += 2 }
        case 87:  // WH → H, WR → R, W + vowel → W
            if at(i + 1) == 72 || at(i + 1) == 82 { out.append(at(i + 1)); i += 2 }
            else if isVowel(at(i + 1)) { out.append(87); i += 2 }
        case 88: out.append(83); i += 1     // X → S
        case 69, 73, 79, 85: out.append(w[i]); i += 1
        default: break
        }
        while i < w.count {
            let letter = w[i], next = at(i + 1), prev = at(i - 1)
            let afterNext: UInt8 = next != 0 ? at(i + 2) : 0
            var skip = 0
            defer { i += 1 + skip }
            guard isAlpha(letter) else { continue }
            if letter == prev && letter != 67 { continue }   // doubled letters once, except CC
            switch letter {
            case 66: if prev != 77 { out.append(66) }                        // B, silent in -MB
            case 67:                                                          // C
                if soft(next) {
                    if next == 73 && afterNext == 65 { out.append(88) }       // CIA → X
                    else if prev != 83 { out.append(83) }                     // SCI SCE SCY: dropped
                } else if next == 72 {
                    out.append(afterNext == 82 || prev == 83 ? 75 : 88)      // CHR, SCH → K; CH → X
                    skip = 1
                } else { out.append(75) }
            case 68:                                                          // D: DGE DGI DGY → J
                if next == 71 && soft(afterNext) { out.append(74); skip = 1 } else { out.append(84) }
            case 71:                                                          // G
                if next == 72 {
                    let back3 = at(i - 3)
                    if !(back3 == 66 || back3 == 68 || back3 == 72 || at(i - 4) == 72) { out.append(70); skip = 1 }
                } else if next == 78 {
                    if !(!isAlpha(afterNext) || (afterNext == 69 && at(i + 3) == 68)) { out.append(75) }   // GN, GNED: silent
                } else if soft(next) && prev != 71 { out.append(74) }
                else { out.append(75) }
            case 72:                                                          // H before a vowel, not after C G P S T
                if isVowel(next) && !"CGPST".utf8.contains(prev) { out.append(72) }
            case 75: if prev != 67 { out.append(75) }                        // K, silent after C
            case 80: out.append(next == 72 ? 70 : 80)                        // PH → F
            case 81: out.append(75)                                          // Q → K
            case 83:                                                          // S
                if next == 73 && (afterNext == 79 || afterNext == 65) { out.append(88) }
                else if next == 72 { out.append(88); skip = 1 }
                else if next == 67 && at(i + 2) == 72 && at(i + 3) == 87 { out.append(88); skip = 2 }
                else { out.append(83) }
            case 84:                                                          // T
                if next == 73 && (afterNext == 79 || afterNext == 65) { out.append(88) }
                else if next == 72 { out.append(48); skip = 1 }              // TH → 0
                else { out.append(84) }
            case 86: out.append(70)                                           // V → F
            case 87: if isVowel(next) { out.append(87) }
            case 88: out.append(75); out.append(83)                           // X → KS
            case 89: if isVowel(next) { out.append(89) }
            case 90: out.append(83)                                           // Z → S
            case 70, 74, 76, 77, 78, 82: out.append(letter)
            default: break
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
