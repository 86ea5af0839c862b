import Core
import SQLKit
import Vapor

/// `staff create --email E --password P [--role admin|editor|viewer]`.
struct StaffCommand: StorytimeCommandGroup {
    let name = "staff"
    var help: String {
        "Manages console staff: 'staff create --email E --password P [--role R]', 'staff unlock --email E', 'staff code --email E', "
            + "'staff reseal-2fa --old-key-env NAME'."
    }
    var subcommands: [String: any AnyAsyncCommand] {
        ["create": StaffCreateCommand(), "unlock": UnlockCommand(kind: .staff), "code": StaffCodeCommand(), "reseal-2fa": StaffResealCommand()]
    }
}

struct StaffCreateCommand: StorytimeCommand {
    let options: Set<String> = ["email", "password", "role"]
    let usage = "App staff create --email E --password P [--role admin|editor|viewer]"
    var help: String { "Creates a staff user of the admin console (role defaults to editor)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let email = try CommandInput.email(arguments.required("email"))
        let password = try CommandInput.password(arguments.required("password"))
        let roleText = try arguments.single("role") ?? StaffRole.editor.rawValue
        guard let role = StaffRole(rawValue: roleText) else {
            throw Abort(.badRequest, reason: "--role must be admin, editor or viewer")
        }
        let hash = try context.application.password.hash(password)
        let id = try await context.withDatabase { sql in
            try await Accounts.createStaff(email: email, passwordHash: hash, role: role, on: sql)
        }
        context.console.print("Created \(role.rawValue) \(email) (staff user \(id)).")
    }
}

/// `parent create --email E --password P [--child NAME]...`.
struct ParentCommand: StorytimeCommandGroup {
    let name = "parent"
    var help: String { "Manages parent accounts: 'parent create --email E --password P [--child NAME]... [--time-zone Z]', 'parent unlock --email E'." }
    var subcommands: [String: any AnyAsyncCommand] { ["create": ParentCreateCommand(), "unlock": UnlockCommand(kind: .parent)] }
}

struct ParentCreateCommand: StorytimeCommand {
    let options: Set<String> = ["email", "password", "child", "time-zone", "country"]
    let usage = "App parent create --email E --password P [--child NAME]... [--time-zone IANA-NAME] [--country CC]"
    var help: String {
        "Creates a parent account, with one child per --child; family controls read days and bedtimes in --time-zone (default UTC); "
            + "rights windows apply as in --country (ISO 3166-1 alpha-2, default DEFAULT_COUNTRY)."
    }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let email = try CommandInput.email(arguments.required("email"))
        let password = try CommandInput.password(arguments.required("password"))
        let children = arguments.all("child").map { $0.trimmingCharacters(in: .whitespaces) }
        guard children.allSatisfy({ !$0.isEmpty && $0.count <= 100 }) else {
            throw Abort(.badRequest, reason: "--child needs a name of 1 to 100 characters")
        }
        let zone = try arguments.single("time-zone") ?? "UTC"
        let country = try Self.country(try arguments.single("country") ?? context.application.settings.defaultCountry)
        let hash = try context.application.password.hash(password)
        let zones = context.application.appServices.timeZoneNames
        let id = try await context.withDatabase { sql in
            guard try await zones.isFamilyZone(zone, on: sql) else {
                throw Abort(.badRequest, reason: "--time-zone must be an IANA time zone name such as Europe/Paris")
            }
            return try await Accounts.createParent(email: email, passwordHash: hash, children: children, timeZone: zone, country: country, on: sql)
        }
        let names = children.isEmpty ? "no children" : "children \(children.joined(separator: ", "))"
        context.console.print("Created parent \(email) (id \(id)) in \(country) with \(names).")
    }

    static func country(_ text: String) throws -> String {
        guard case .success(let codes) = Territories.parse(text), codes.count == 1 else {
            throw Abort(.badRequest, reason: "--country must be one ISO 3166-1 alpha-2 country code such as FR or US")
        }
        return codes[0]
    }
}

/// `parent unlock --email E` / `staff unlock --email E`: ends a sign-in lock-out at once (support
/// has checked who is asking) — for staff, the second-factor codes' (`staff_code`) too; otherwise
/// it ends by itself when the throttle window passes.
struct UnlockCommand: StorytimeCommand {
    let kind: LoginThrottle.Kind
    let options: Set<String> = ["email"]
    var usage: String { "App \(kind.rawValue) unlock --email E" }
    var help: String { "Clears the failed sign-ins counted for an email, so it may sign in again now." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let email = try CommandInput.email(arguments.required("email"))
        try await context.withDatabase { sql in
            try await LoginThrottle.clear(kind, email: email, on: sql)
            if kind == .staff { try await LoginThrottle.clear(.staffCode, email: email, on: sql) }
        }
        context.console.print("Cleared failed sign-ins\(kind == .staff ? " and second-factor codes" : "") of \(kind.rawValue) \(email).")
    }
}
