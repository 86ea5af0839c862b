import SQLKit

extension AdminResource {
    static let staffRoles = StaffRole.allCases.map { Choice(value: $0.rawValue, label: $0.rawValue.capitalized) }

    /// Staff management, for admins only. Accounts are made with `App staff create`; passwords are
    /// reset from a staff user's page (`PasswordController`), never shown or stored in the audit log.
    static let staffUsers = AdminResource(
        slug: "staff_users", table: "staff_users", singular: "Staff user", plural: "Staff users",
        displayName: "t.email",
        list: .init(
            columns: [
                AdminColumn("email", "Email", sortable: true, format: .link),
                AdminColumn("role", "Role", sortable: true, format: .badge),
                AdminColumn("two_factor", "Two-factor", sql: "t.totp_enabled_at IS NOT NULL", format: .boolean),
                AdminColumn("created_at", "Created", sortable: true, format: .datetime),
            ],
            defaultSort: "email"
        ),
        form: .init(
            fields: [
                AdminField(name: "email", label: "Email", kind: .text(maxLength: 320), required: true),
                AdminField(name: "role", label: "Role", kind: .choice(staffRoles), required: true, defaultValue: "editor"),
            ],
            constraintMessages: [
                "staff_users_email_key": FieldMessage(field: "email", message: "A staff user with this email already exists."),
                "staff_users_email_format": FieldMessage(field: "email", message: "Enter an email address."),
            ]
        ),
        detail: .init(
            recordActions: [RecordAction(label: "Reset password", path: ResourcePath.password),
                            RecordAction(label: "Reset two-factor", path: TwoFactorController.resetPath, adminOnly: true)],
            snapshot: "to_jsonb(t) - 'password_hash' - 'totp_secret'"
        ),
        access: .init(
            allowCreate: false,
            requiresAdmin: true,
            menuLabel: "Staff"
        )
    )
}
