import SQLKit

extension AdminResource {
    static let rightsWindows = AdminResource(
        slug: "rights_windows", table: "rights_windows", singular: "Rights window", plural: "Rights windows",
        displayName: "to_char(t.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' → ' || COALESCE(to_char(t.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended')",
        columns: [
            AdminColumn("starts_at", "Starts (UTC)", sortable: true, format: .datetime),
            AdminColumn("ends_at", "Ends (UTC)", sql: "t.ends_at", sortable: true, format: .datetime),
            AdminColumn("state", "State", sql: """
                CASE WHEN t.starts_at > now() THEN 'upcoming' WHEN t.ends_at IS NOT NULL AND t.ends_at <= now() THEN 'expired' ELSE 'active' END
                """, format: .badge),
            AdminColumn("window", "Window", sql: "'Edit'", format: .link),
        ],
        fields: [
            AdminField(name: "starts_at", label: "Starts at (UTC)", kind: .datetime, required: true),
            AdminField(name: "ends_at", label: "Ends at (UTC)", kind: .datetime, help: "Leave blank for an open-ended window.", nullable: true),
        ],
        defaultSort: "starts_at",
        constraintMessages: [
            "rights_windows_range_check": FieldMessage(field: "ends_at", message: "The end must be after the start."),
        ],
        validate: { values in
            if let start = values.date("starts_at"), let end = values.date("ends_at"), end <= start {
                return ["ends_at": "The end must be after the start."]
            }
            return [:]
        },
        parent: AdminParent(slug: "books", column: "book_id", label: "Book", displaySQL: "p.title", table: "books")
    )

    static let videoAssets = AdminResource(
        slug: "video_assets", table: "video_assets", singular: "Video asset", plural: "Video assets",
        displayName: "(SELECT b.title FROM books b WHERE b.id = t.book_id)",
        joins: "JOIN books b ON b.id = t.book_id",
        columns: [
            AdminColumn("book", "Book", sql: "b.title", sortable: true, format: .link),
            AdminColumn("status", "Status", sortable: true, format: .badge),
            AdminColumn("duration", "Duration", sql: "CASE WHEN t.status = 'ready' THEN t.duration_seconds END", format: .duration),
            AdminColumn("has_captions", "Captions", format: .boolean),
            AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
        ],
        detail: [
            AdminColumn("book", "Book", sql: "b.title"), AdminColumn("book_id", "Book ID"),
            AdminColumn("status", "Status", format: .badge),
            AdminColumn("duration", "Duration", sql: "CASE WHEN t.status = 'ready' THEN t.duration_seconds END", format: .duration),
            AdminColumn("duration_seconds", "Duration in seconds (stored)"),
            AdminColumn("has_captions", "Captions", format: .boolean), AdminColumn("updated_at", "Updated", format: .datetime),
        ],
        search: AdminSearch(label: "Search book title") { q in "b.title ILIKE \(bind: "%" + likeEscaped(q) + "%")" },
        filters: [
            AdminFilter(name: "status", label: "Status", kind: .choices(videoStatuses)) { value in
                videoStatuses.contains { $0.value == value } ? "t.status = \(bind: value)" : nil
            },
        ],
        fields: [
            AdminField(name: "book_id", label: "Book ID", kind: .integer(1...Int(Int32.max)), required: true,
                       help: "The book this video belongs to (one video per book)."),
            AdminField(name: "status", label: "Status", kind: .choice(videoStatuses), required: true, defaultValue: "pending"),
            AdminField(name: "duration_seconds", label: "Duration (seconds)", kind: .integer(0...86_400), nullable: true),
            AdminField(name: "has_captions", label: "Has captions", kind: .checkbox),
        ],
        defaultSort: "updated_at", defaultDescending: true,
        constraintMessages: [
            "video_assets_book_key": FieldMessage(field: "book_id", message: "That book already has a video asset."),
            "video_assets_book_id_fkey": FieldMessage(field: "book_id", message: "No book has this ID."),
            "video_assets_duration_check": FieldMessage(field: "duration_seconds", message: "A duration cannot be negative."),
        ],
        validate: { values in
            if case .text("ready")? = values["status"], values.integer("duration_seconds") == nil {
                return ["duration_seconds": "A ready video needs its duration."]
            }
            return [:]
        }
    )

    static let staffRoles = StaffRole.allCases.map { Choice(value: $0.rawValue, label: $0.rawValue.capitalized) }

    /// Staff management, for admins only. Passwords are set with `App staff create` or here.
    static let staffUsers = AdminResource(
        slug: "staff_users", table: "staff_users", singular: "Staff user", plural: "Staff users",
        displayName: "t.email",
        columns: [
            AdminColumn("email", "Email", sortable: true, format: .link),
            AdminColumn("role", "Role", sortable: true, format: .badge),
            AdminColumn("created_at", "Created", sortable: true, format: .datetime),
        ],
        fields: [
            AdminField(name: "email", label: "Email", kind: .text(maxLength: 320), required: true),
            AdminField(name: "role", label: "Role", kind: .choice(staffRoles), required: true, defaultValue: "editor"),
        ],
        defaultSort: "email",
        constraintMessages: [
            "staff_users_email_key": FieldMessage(field: "email", message: "A staff user with this email already exists."),
            "staff_users_email_format": FieldMessage(field: "email", message: "Enter an email address."),
        ],
        snapshot: "to_jsonb(t) - 'password_hash'",
        allowCreate: false,
        requiresAdmin: true,
        recordActions: [("Reset password", "password")]
    )
}
