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
                AdminColumn("locked", "Locked", sql: "t.locked_at IS NOT NULL", format: .boolean),
                AdminColumn("created_at", "Created", sortable: true, format: .datetime),
            ],
            defaultSort: "email",
            batchActions: [
                // A lock ends their sessions and API tokens (triggers, migration 0032); not one's own.
                AdminBatchAction(name: "lock", label: "Lock (sign out, end API tokens)", target: nil, targetLabel: nil) { ids, _, batch in
                    let me = batch.audit.staffID ?? 0   // a batch is always a staff member's
                    let locked = try await batch.audited("lock", ids) { sql in
                        try await sql.raw("""
                            UPDATE staff_users SET locked_at = now() WHERE id = ANY(\(bind: ids)::bigint[]) AND id <> \(bind: me) AND locked_at IS NULL RETURNING id
                            """).all(decoding: ResourceRows.ID.self).map(\.id)
                    }
                    return "\(locked.count) staff \(locked.count == 1 ? "account" : "accounts") locked; their sessions and API tokens ended."
                        + (ids.contains(me) ? " (Not yours: you cannot lock yourself.)" : "")
                },
                AdminBatchAction(name: "unlock", label: "Unlock", target: nil, targetLabel: nil) { ids, _, batch in
                    let unlocked = try await batch.audited("unlock", ids) { sql in
                        try await sql.raw("""
                            UPDATE staff_users SET locked_at = NULL WHERE id = ANY(\(bind: ids)::bigint[]) AND locked_at IS NOT NULL RETURNING id
                            """).all(decoding: ResourceRows.ID.self).map(\.id)
                    }
                    return "\(unlocked.count) staff \(unlocked.count == 1 ? "account" : "accounts") unlocked (API tokens stay ended)."
                },
            ]
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
