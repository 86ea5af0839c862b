import Core
import SQLKit

extension AdminResource {
    /// Search synonyms (docs/api.md "Search"): saved, they are in the next catalog request on
    /// every instance; every change is audited like any record's.
    static let synonyms = AdminResource(
        slug: "synonyms", table: "search_synonyms", singular: "Search synonym", plural: "Search synonyms",
        displayName: "t.words",
        list: .init(
            columns: [
                AdminColumn("words", "Words", sortable: true, format: .link),
                AdminColumn("one_way", "One way", format: .boolean),
                AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
            ],
            search: AdminSearch(label: "Search words") { q in TextMatch.contains("t.words", q) },
            defaultSort: "words"
        ),
        form: .init(
            fields: [
                AdminField(name: "words", label: "Words", kind: .text(maxLength: 500), required: true,
                           help: "Two or more words separated by commas, e.g. bunny, rabbit, hare. Each finds the others (and their plurals)."),
                AdminField(name: "one_way", label: "One way", kind: .checkbox,
                           help: "Only the first word finds the others: kitty, cat lets “kitty” find cats, not “cat” find kitties."),
            ],
            constraintMessages: [
                "search_synonyms_words_length": FieldMessage(field: "words", message: "Enter two or more words, at most 500 characters."),
            ],
            prepare: { values in
                // Stored as searched: folded words, one comma between them.
                let words = SearchText.words(values.raw["words"] ?? "")
                if words.count > 1 { values.raw["words"] = words.joined(separator: ", ") }
            },
            validate: { values in
                guard case .text(let text)? = values["words"] else { return ["words": "Enter two or more words."] }
                let words = SearchText.words(text)
                if words.count < 2 { return ["words": "Enter two or more different words, separated by commas."] }
                return [:]
            }
        ),
        detail: .init(columns: [
            AdminColumn("words", "Words"), AdminColumn("one_way", "One way", format: .boolean),
            AdminColumn("updated_at", "Updated", format: .datetime),
        ])
    )
}
