import Foundation
import StorytimeKit

/// `storytime`: an example client of StorytimeKit that signs in and browses the catalog from a
/// terminal.
///
///     STORYTIME_EMAIL=… STORYTIME_PASSWORD=… storytime search goodn --age 4
///     storytime book 42
///     storytime categories
///     storytime signup --country FR --time-zone Europe/Paris     (then paste the mailed link:)
///     storytime verify 'http://localhost:8080/account/verify?token=…'
///     storytime add-child Ada --birth-year 2021 --avatar owl
///     storytime devices
///     storytime sign-out DEVICE_ID
///     storytime family
///     storytime invite grandma@example.com --role caregiver
///     storytime accept 'http://localhost:8080/account/invitation?token=…'   (as the invited account)
let usage = """
    usage: storytime search [WORDS…] [--age N] [--category SLUG] [--page N]
           storytime book ID
           storytime categories
           storytime signup --country CC --time-zone ZONE     (email and password from the environment)
           storytime verify LINK                              (the link mailed after signup)
           storytime reset-password [LINK]                    (without LINK: mails one; with it: sets STORYTIME_NEW_PASSWORD)
           storytime children | add-child NAME [--birth-year YYYY] [--avatar KEY]
           storytime devices | sign-out DEVICE_ID | sign-out-everywhere
           storytime family | invite EMAIL [--role parent|caregiver (default)] | accept LINK
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

func credentials() -> (email: String, password: String) {
    guard let email = environment["STORYTIME_EMAIL"], let password = environment["STORYTIME_PASSWORD"] else {
        fail("set STORYTIME_EMAIL and STORYTIME_PASSWORD")
    }
    return (email, password)
}

func signIn() async throws {
    let (email, password) = credentials()
    try await client.signIn(email: email, password: password, deviceName: environment["STORYTIME_DEVICE"] ?? "storytime CLI")
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
    case "signup":
        let (email, password) = credentials()
        guard let country = invocation.options["country"], let zone = invocation.options["time-zone"] else { fail(usage) }
        let notice = try await client.privacyNoticeVersion()
        print("By signing up you accept Storytime's privacy notice, version \(notice).")
        try await client.signUp(email: email, password: password, country: country, timeZone: zone, privacyNotice: notice)
        print("Check \(email): paste the link we mailed into `storytime verify LINK`.")
    case "verify":
        guard let link = invocation.words.first else { fail(usage) }
        try await client.verifyEmail(link: link)
        print("Email confirmed.")
    case "reset-password":
        if let link = invocation.words.first {
            guard let new = environment["STORYTIME_NEW_PASSWORD"] else { fail("set STORYTIME_NEW_PASSWORD") }
            try await client.resetPassword(link: link, newPassword: new)
            print("Password changed; every device was signed out.")
        } else {
            try await client.requestPasswordReset(email: credentials().email)
            print("If the address has an account, a link is on its way.")
        }
    case "children":
        try await signIn()
        for child in try await client.children() { print("\(child.id)\t\(child.name)") }
    case "add-child":
        guard let name = invocation.words.first else { fail(usage) }
        try await signIn()
        let child = try await client.addChild(name: name, birthYear: invocation.number("birth-year"), avatar: invocation.options["avatar"])
        print("\(child.id)\t\(child.name)")
    case "devices":
        try await signIn()
        for device in try await client.devices() {
            print("\(device.id)\t\(device.name)\(device.current ? "\t(this one)" : "")")
        }
    case "sign-out":
        guard let id = invocation.words.first.flatMap(Int.init) else { fail(usage) }
        try await signIn()
        try await client.signOut(deviceID: id)
        print("Device \(id) signed out.")
    case "sign-out-everywhere":
        try await signIn()
        try await client.signOutEverywhere()
        print("Every device signed out.")
    case "family":
        try await signIn()
        let family = try await client.family()
        print("family \(family.id) (you are a \(family.role.rawValue))")
        for member in family.members {
            let answers = member.role == .caregiver && member.mayAnswerRequests ? ", answers requests" : ""
            print("\(member.accountId)\t\(member.email)\t\(member.role.rawValue)\(answers)")
        }
        for invitation in family.invitations {
            print("invited\t\(invitation.email)\t\(invitation.role.rawValue)\tuntil \(invitation.expiresAt.formatted(.iso8601))")
        }
        for child in family.children { print("child\t\(child.id)\t\(child.name)") }
    case "invite":
        guard let email = invocation.words.first else { fail(usage) }
        guard let role = FamilyRole(rawValue: invocation.options["role"] ?? "caregiver") else { fail("--role is parent or caregiver") }
        try await signIn()
        let invitation = try await client.invite(email: email, role: role)
        print("Invited \(invitation.email) as a \(invitation.role.rawValue): the link works once, until \(invitation.expiresAt.formatted(.iso8601)).")
    case "accept":
        guard let link = invocation.words.first else { fail(usage) }
        try await signIn()
        let family = try await client.accept(token: link)
        print("You joined family \(family.id) as a \(family.role.rawValue); its children: \(family.children.map(\.name).joined(separator: ", "))")
    default:
        fail(usage)
    }
} catch let error as StorytimeError {
    fail("storytime: \(error.code): \(error)")
}
