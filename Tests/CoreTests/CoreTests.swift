@testable import Core
import Testing

@Suite("SQL scripts")
struct SQLScriptTests {
    @Test("splits at top-level semicolons only")
    func split() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x text DEFAULT 'semi;colon');
            CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;
            CREATE FUNCTION g() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN 2; END $body$;
            /* block; comment */ SELECT "odd;name" FROM a;
            """
        let statements = SQLScript.statements(in: script)
        #expect(statements.count == 4)
        #expect(statements[0].hasSuffix("DEFAULT 'semi;colon')"))
        #expect(statements[1].contains("$$ SELECT 1; $$"))
        #expect(statements[2].contains("BEGIN RETURN 2; END"))
        #expect(statements[3].contains("\"odd;name\""))
    }
}

@Suite("Query parameters")
struct QueryParameterTests {
    @Test("catalog defaults, empty values count as absent")
    func defaults() throws {
        let parameters = try CatalogParameters(QueryParameters(query: "age=&q=&page=&per_page=&sort="))
        #expect(parameters.age == nil && parameters.text == nil && parameters.page == PageRequest(page: 1, perPage: 20))
        #expect(parameters.sort == .title)
        let search = try CatalogParameters(QueryParameters(query: "q=Goodnight+Moon"))
        #expect(search.sort == .relevance && search.words == ["goodnight", "moon"])
        let relevanceWithoutQ = try CatalogParameters(QueryParameters(query: "sort=relevance"))
        #expect(relevanceWithoutQ.sort == .title)
    }

    @Test("each bad value names its parameter", arguments: [
        ("age=19", "age"), ("age=-1", "age"), ("age=3.5", "age"), ("age=abc", "age"), ("age=%2B3", "age"),
        ("publisher=0", "publisher"), ("publisher=x", "publisher"), ("publisher=99999999999999999999", "publisher"),
        ("page=0", "page"), ("page=-2", "page"), ("page=1.5", "page"),
        ("per_page=0", "per_page"), ("per_page=101", "per_page"), ("sort=oldest", "sort"),
        ("age=3&age=4", "age"),
    ])
    func invalid(query: String, field: String) {
        #expect(throws: ParameterError.self) { try CatalogParameters(QueryParameters(query: query)) }
        do { _ = try CatalogParameters(QueryParameters(query: query)) } catch { #expect(error.field == field) }
    }

    @Test("q longer than 200 characters is refused")
    func longQuery() throws {
        let long = String(repeating: "a", count: 201)
        #expect(throws: ParameterError(field: "q", message: "q must be at most 200 characters")) {
            try CatalogParameters(QueryParameters(query: "q=\(long)"))
        }
        #expect(try CatalogParameters(QueryParameters(query: "q=\(String(repeating: "a", count: 200))")).words.count == 1)
        // One character of a thousand combining marks is not a short query.
        let marks = "e" + String(repeating: "%CC%81", count: 1_000)
        #expect(throws: ParameterError(field: "q", message: "q must be at most 200 characters")) {
            try CatalogParameters(QueryParameters(query: "q=\(marks)"))
        }
        #expect(try CatalogParameters(QueryParameters(query: "q=\(String(repeating: "%C3%A9", count: 200))")).words.count == 1)   // 200 accented letters pass
    }

    @Test("library sorts")
    func library() throws {
        #expect(try LibraryParameters(QueryParameters(query: nil)).sort == .recentlyAdded)
        #expect(try LibraryParameters(QueryParameters(query: "sort=recently_watched")).sort == .recentlyWatched)
        #expect(throws: ParameterError.self) { try LibraryParameters(QueryParameters(query: "sort=newest")) }
    }
}

@Suite("Pagination links")
struct PaginationTests {
    @Test("first, prev, next and last keep the other parameters")
    func middle() {
        let query = QueryParameters(query: "q=moon&page=2&per_page=10")
        let header = PageRequest(page: 2, perPage: 10).linkHeader(path: "/api/v1/catalog/books", query: query, totalCount: 35)
        #expect(header == #"</api/v1/catalog/books?q=moon&per_page=10&page=1>; rel="first", </api/v1/catalog/books?q=moon&per_page=10&page=1>; rel="prev", </api/v1/catalog/books?q=moon&per_page=10&page=3>; rel="next", </api/v1/catalog/books?q=moon&per_page=10&page=4>; rel="last""#)
    }

    @Test("past the end, prev is the last page; empty results have last = 1")
    func edges() {
        let past = PageRequest(page: 9, perPage: 10).linkHeader(path: "/b", query: QueryParameters(query: "page=9"), totalCount: 35)
        #expect(past.contains(#"</b?page=4>; rel="prev""#) && !past.contains("next"))
        let empty = PageRequest(page: 1, perPage: 10).linkHeader(path: "/b", query: QueryParameters(query: nil), totalCount: 0)
        #expect(empty == #"</b?page=1>; rel="first", </b?page=1>; rel="last""#)
        #expect(PageRequest(page: 1, perPage: 10).totalPages(for: 0) == 0)
    }
}

@Suite("Search text")
struct SearchTextTests {
    @Test("words are folded for case and accents")
    func words() {
        #expect(SearchText.words("Éloïse at the PLAZA") == ["eloise", "at", "the", "plaza"])
        #expect(SearchText.words("Saint-Exupéry, Straße") == ["saint", "exupery", "strasse"])
        #expect(SearchText.words("  ...  ").isEmpty)
    }

    @Test("one edit: substitution, insertion, deletion, transposition; not two")
    func oneEdit() {
        func within(_ a: String, _ b: String) -> Bool {
            SearchText.isWithinOneEdit(Array(a.unicodeScalars), ArraySlice(Array(b.unicodeScalars)))
        }
        #expect(within("godnight", "goodnight"))   // insertion
        #expect(within("goodnigt", "goodnight"))   // insertion at the end
        #expect(within("goodnihgt", "goodnight"))  // transposition
        #expect(within("gooxnight", "goodnight"))  // substitution
        #expect(within("gooodnight", "goodnight")) // deletion
        #expect(!within("gdonihgt", "goodnight"))
        #expect(!within("abc", "bca"))
    }

    @Test("typo alternatives are prefixes of real words, for words of five letters or more")
    func typoPrefixes() {
        let lexicon = TypoVocabulary(["goodnight", "moon", "caterpillar", "hungry", "gruffalo"])
        #expect(lexicon.alternatives(for: "godnight") == ["goodnight"])
        #expect(lexicon.alternatives(for: "goodnigth") == ["goodnigh"])  // the shortest prefix one edit away
        #expect(lexicon.alternatives(for: "catepr") == ["cater"])
        #expect(lexicon.alternatives(for: "hungyr") == ["hungr"])
        #expect(lexicon.alternatives(for: "moom").isEmpty)     // four letters: no typo tolerance
        #expect(lexicon.alternatives(for: "xyzzy").isEmpty)
    }

    @Test("tsquery: AND of words, OR of alternatives, prefixes, quoting")
    func tsquery() {
        #expect(SearchText.tsquery([["goodn"], ["moon", "mono"]]) == "'goodn':* & ('moon':* | 'mono':*)")
        #expect(SearchText.tsquery([["o'brien"]], weights: "AB") == "'o''brien':*AB")
    }
}
