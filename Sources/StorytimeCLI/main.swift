import Foundation
import StorytimeKit

/// `storytime`: an example client of StorytimeKit that signs in and browses the catalog from a
/// terminal.
///
///     STORYTIME_EMAIL=… STORYTIME_PASSWORD=… storytime search goodn --age 4
///     storytime book 42
///     storytime categories
let usage = """
    usage: storytime search [WORDS…] [--age N] [--category SLUG] [--page N]
           storytime book ID
           storytime categories
    environment: STORYTIME_URL (default http://127.0.0.1:8080), STORYTIME_EMAIL, STORYTIME_PASSWORD
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

/// The command line: a command, its words, and `--name value` options.
struct Invocation {
    var command: String
    var words: [String] = []
    var options: [String: String] = [:]

    init(_ arguments: [String]) {
        guard let first = arguments.first else { fail(usage) }
        command = first
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument.hasPrefix("--") {
                guard let value = rest.popFirst() else { fail("\(argument) needs a value\n\(usage)") }
                options[String(argument.dropFirst(2))] = value
            } else {
                words.append(argument)
            }
        }
    }

    func number(_ name: String) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else { fail("--\(name) takes a number") }
        return value
    }
}

let environment = ProcessInfo.processInfo.environment
let invocation = Invocation(Array(CommandLine.arguments.dropFirst()))
guard let url = URL(string: environment["STORYTIME_URL"] ?? "http://127.0.0.1:8080") else { fail("STORYTIME_URL is not a URL") }
let client = StorytimeClient(baseURL: url)

func signIn() async throws {
    guard let email = environment["STORYTIME_EMAIL"], let password = environment["STORYTIME_PASSWORD"] else {
        fail("set STORYTIME_EMAIL and STORYTIME_PASSWORD")
    }
    try await client.signIn(email: email, password: password)
}

func line(_ book: Book) -> String {
    let duration = DurationFormat.badge(seconds: book.durationSeconds).map { " · \($0)" } ?? ""
    return "\(book.id)\t\(book.title) — \(book.author) (ages \(book.ageMin)-\(book.ageMax))\(duration)"
}

do {
    switch invocation.command {
    case "search":
        try await signIn()
        let page = invocation.number("page") ?? 1
        let answer = try await client.books(q: invocation.words.isEmpty ? nil : invocation.words.joined(separator: " "),
                                            age: invocation.number("age"), category: invocation.options["category"], page: page)
        answer.data.forEach { print(line($0)) }
        let shown = answer.data.isEmpty ? 0 : (page - 1) * answer.meta.perPage + answer.data.count
        print("\(shown) of \(answer.meta.totalCount)")
    case "book":
        guard let id = invocation.words.first.flatMap(Int.init) else { fail(usage) }
        try await signIn()
        let book = try await client.book(id: id)
        print(line(book))
        print(book.description)
    case "categories":
        for category in try await client.categories() { print("\(category.slug)\t\(category.name)") }
    default:
        fail(usage)
    }
} catch let error as StorytimeError {
    fail("storytime: \(error.code): \(error)")
}
