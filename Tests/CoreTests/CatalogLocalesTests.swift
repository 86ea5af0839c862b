@testable import Core
import Testing

@Suite("Catalog locales")
struct CatalogLocalesTests {
    let locales = CatalogLocales(["en", "fr", "es", "de"])

    @Test("tags are normalized; anything else is not a locale")
    func normalize() {
        #expect(CatalogLocales.normalize("fr_ca") == "fr-CA")
        #expect(CatalogLocales.normalize("FR-ca") == "fr-CA")
        #expect(CatalogLocales.normalize("de") == "de")
        #expect(CatalogLocales.normalize("zh-Hant-TW") == "zh")
        #expect(CatalogLocales.normalize("english") == nil)
        #expect(CatalogLocales.normalize("") == nil)
        #expect(CatalogLocales.normalize("*") == nil)
        #expect(CatalogLocales(setting: "en, fr ,es") == CatalogLocales(["en", "fr", "es"]))
        #expect(CatalogLocales(setting: "en,french") == nil)
        #expect(CatalogLocales(setting: "") == nil)
        #expect(CatalogLocales(["fr", "fr", "en"]).supported == ["fr", "en"])
    }

    @Test("Accept-Language ranges by q-value, then as written; * and q=0 left out")
    func ranges() {
        #expect(CatalogLocales.ranges("fr-CA, fr;q=0.9, en;q=0.8, *;q=0.5") == ["fr-CA", "fr", "en"])
        #expect(CatalogLocales.ranges("en;q=0.2, de;q=0.7, es") == ["es", "de", "en"])
        #expect(CatalogLocales.ranges("fr;q=0, es;q=bad") == ["es"])
        #expect(CatalogLocales.ranges("") == [])
    }

    @Test("?locale= wins, then Accept-Language, then the account's preference, then the default")
    func negotiate() {
        #expect(locales.negotiate(query: "es", acceptLanguage: "fr", preferred: "de") == ["es"])
        #expect(locales.negotiate(query: nil, acceptLanguage: "fr-CA,fr;q=0.9", preferred: "de") == ["fr"])
        #expect(locales.negotiate(query: nil, acceptLanguage: nil, preferred: "de") == ["de"])
        #expect(locales.negotiate(query: nil, acceptLanguage: nil, preferred: nil) == ["en"])
        // Unknown or unsupported: passed over, never an error.
        #expect(locales.negotiate(query: "xx", acceptLanguage: "ja, es;q=0.3", preferred: nil) == ["es"])
        #expect(locales.negotiate(query: "!!", acceptLanguage: "ja", preferred: "it") == ["en"])
        #expect(locales.negotiate(query: nil, acceptLanguage: "ja", preferred: "de") == ["de"])
        #expect(locales.decides(query: nil, acceptLanguage: "ja") == false)
        #expect(locales.decides(query: nil, acceptLanguage: "ja, de;q=0.1") == true)
        #expect(locales.decides(query: "zz", acceptLanguage: nil) == false)
    }

    @Test("fallback chain: a regional locale, then its language; a language finds a regional locale")
    func chain() {
        let regional = CatalogLocales(["en", "fr-CA", "fr", "pt-BR"])
        #expect(regional.negotiate(query: "fr-CA", acceptLanguage: nil, preferred: nil) == ["fr-CA", "fr"])
        #expect(regional.negotiate(query: "fr-BE", acceptLanguage: nil, preferred: nil) == ["fr"])
        #expect(regional.negotiate(query: "pt", acceptLanguage: nil, preferred: nil) == ["pt-BR"])
        #expect(locales.negotiate(query: "fr-CA", acceptLanguage: nil, preferred: nil) == ["fr"])
        #expect(locales.match("DE-at") == "de")
    }
}
