import Core
import Foundation
import Testing

/// The strict RFC 8259 check: what Foundation's lenient parser also takes is refused, and nothing
/// it accepts is malformed.
@Suite("Strict JSON")
struct StrictJSONTests {
    @Test("valid JSON: every kind of value, whitespace, escapes, numbers, nesting")
    func valid() {
        let texts = [#"{}"#, #"[]"#, #" { "a" : [ 1 , -0 , 0.5 , -2.5e+3 , 1E-7 , 10 ] , "b" : { } } "#, #""\u00e9\n\t\"\\\/\b\f\r""#,
                     "true", "false", "null", "0", "-1", #"[[[[]]]]"#, #"{"😀":"é"}"#, #"{"a":"\ud83d\ude00"}"#, "\n\r\t [1]\n"]
        for text in texts { #expect(StrictJSON.isValid(Array(text.utf8)), "\(text)") }
    }

    @Test("malformed: trailing commas, comments, NaN, leading zeros, quotes, raw controls, bad escapes, junk after, too deep")
    func malformed() {
        let texts = [#"{"a":1,}"#, #"[1,]"#, #"{"a":1} x"#, #"{"a":1 /* c */}"#, "{\"a\":1 // c\n}", #"{'a':1}"#, #"{a:1}"#, #"{"a":NaN}"#,
                     #"{"a":Infinity}"#, #"{"a":01}"#, #"{"a":+1}"#, #"{"a":.5}"#, #"{"a":1.}"#, #"{"a":1e}"#, #"{"a":"\q"}"#, #"{"a":"\u12"}"#,
                     "{\"a\":\"a\tb\"}", "{\"a\":\"\u{1}\"}", #"{"a"}"#, #"{"a":}"#, #"{,}"#, #"[,1]"#, "", " ", "tru", "nul", #""abc"#,
                     String(repeating: "[", count: 300) + String(repeating: "]", count: 300), "{\"a\":1}\u{0}", #"{"a":1}{"b":2}"#]
        for text in texts { #expect(!StrictJSON.isValid(Array(text.utf8)), "\(text)") }
        #expect(!StrictJSON.isValid([0x22, 0xFF, 0xFE, 0x22]))   // not UTF-8
    }

    /// (Numbers beyond a Double, such as 1e400, are valid syntax that Foundation refuses to read;
    /// the route then answers a field error, so they are left out of the comparison.)
    @Test("never looser than Foundation: 20,000 random JSON-ish texts it accepts, Foundation accepts too")
    func neverLooser() {
        var state: UInt64 = 20261123
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let pieces = ["{", "}", "[", "]", ",", ":", "\"a\"", "\"\\u00e9\"", "1", "-0.5e3", "0", "01", "true", "null", " ", "\n", "\"\\q\"", "."]
        var accepted = 0
        for _ in 0..<20_000 {
            let text = (0..<next(12) + 1).map { _ in pieces[next(pieces.count)] }.joined()
            let data = Data(text.utf8)
            if StrictJSON.isValid(data), text.range(of: #"[eE][+-]?[0-9]{3}"#, options: .regularExpression) == nil {
                accepted += 1
                #expect((try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil, "\(text)")
            }
        }
        #expect(accepted > 500)
    }
}
