import Core
import SQLKit

extension AdminResource {
    /// Accounts (the `parents` table, still at `/admin/parents`), for support (admins only): who
    /// signed up, whether the address is confirmed, their role in their family, how many children
    /// and signed-in devices; an account's page links to its family (`families`). Lock / unlock and
    /// sign every device out are batch actions (select rows, or one row). No page here shows a
    /// password hash, a token, a child's name or history; the audit log keeps ids and states, never
    /// the email.
    static let parents = AdminResource(
        slug: "parents", table: "parents", singular: "Account", plural: "Accounts",
        displayName: "'Account #' || t.id",
        list: .init(
            columns: [
                AdminColumn("email", "Email", sortable: true, format: .link),
                AdminColumn("verified", "Verified", sql: "t.email_verified_at IS NOT NULL", format: .boolean),
                AdminColumn("country", "Country", sortable: true),
                AdminColumn("family_role", "Family role", sql: "(SELECT m.role FROM family_members m WHERE m.account_id = t.id)", format: .badge),
                AdminColumn("children", "Children", sql: "(SELECT count(*) FROM children c JOIN family_members m ON m.family_id = c.family_id WHERE m.account_id = t.id)", format: .number),
                AdminColumn("devices", "Devices", sql: "(SELECT count(*) FROM parent_devices d WHERE d.parent_id = t.id AND d.revoked_at IS NULL)", format: .number),
                AdminColumn("locked", "Locked", sql: "t.locked_at IS NOT NULL", format: .boolean),
                AdminColumn("created_at", "Created", sortable: true, format: .datetime),
            ],
            search: AdminSearch(label: "Email") { text in
                let words = text.trimmingCharacters(in: .whitespaces)
                return words.isEmpty ? nil : "lower(t.email) LIKE \(bind: "%" + words.lowercased().replacingOccurrences(of: "%", with: "").replacingOccurrences(of: "_", with: "") + "%")"
            },
            defaultSort: "created_at",
            defaultDescending: true,
            batchActions: [
                AdminBatchAction(name: "lock", label: "Lock (and sign every device out)", target: nil, targetLabel: nil) { ids, _, batch in
                    let locked = try await batch.audited("lock", ids) { sql in
                        let locked = try await sql.raw("""
                            UPDATE parents SET locked_at = now() WHERE id = ANY(\(bind: ids)::bigint[]) AND locked_at IS NULL RETURNING id
                            """).all(decoding: ResourceRows.ID.self).map(\.id)
                        _ = try await SessionQueries.revoke(devices: "d.parent_id = ANY(\(bind: locked)::bigint[])", on: sql)
                        return locked
                    }
                    return "\(locked.count) \(locked.count == 1 ? "account" : "accounts") locked; their devices are signed out."
                },
                AdminBatchAction(name: "unlock", label: "Unlock", target: nil, targetLabel: nil) { ids, _, batch in
                    let unlocked = try await batch.audited("unlock", ids) { sql in
                        try await sql.raw("""
                            UPDATE parents SET locked_at = NULL WHERE id = ANY(\(bind: ids)::bigint[]) AND locked_at IS NOT NULL RETURNING id
                            """).all(decoding: ResourceRows.ID.self).map(\.id)
                    }
                    return "\(unlocked.count) \(unlocked.count == 1 ? "account" : "accounts") unlocked."
                },
                AdminBatchAction(name: "sign_out", label: "Sign every device out", target: nil, targetLabel: nil) { ids, _, batch in
                    let devices = try await SessionQueries.revoke(devices: "d.parent_id = ANY(\(bind: ids)::bigint[])", on: batch.sql)
                    // Like the family's own "sign out everywhere": pending address changes end too.
                    _ = try await batch.audited("sign every device out", ids) { sql in
                        try await AccountQueries.endPendingChanges(parents: ids, on: sql)
                        return ids
                    }
                    return "\(devices.count) \(devices.count == 1 ? "device" : "devices") signed out (every instance knows within a second)."
                },
            ]
        ),
        form: .init(
            fields: [
                AdminField(name: "country", label: "Country (ISO 3166-1 alpha-2)", kind: .text(maxLength: 2), required: true),
            ],
            constraintMessages: ["parents_country_format": FieldMessage(field: "country", message: "Enter a two-letter country code in capitals, such as FR.")],
            validate: { values in
                guard case .text(let text)? = values["country"], case .success(let codes) = Territories.parse(text), codes == [text] else {
                    return ["country": "Enter a two-letter country code such as FR or US."]
                }
                return [:]
            }
        ),
        detail: .init(
            related: [
                AdminRelated(title: "Family",
                             columns: [AdminColumn("family", "Family"), AdminColumn("role", "Role", format: .badge),
                                       AdminColumn("members", "Members", format: .number), AdminColumn("joined", "Joined (UTC)")],
                             query: { id in """
                                SELECT m.family_id AS id, 'Family #' || m.family_id AS family, m.role,
                                       (SELECT count(*) FROM family_members o WHERE o.family_id = m.family_id)::text AS members,
                                       to_char(m.joined_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS joined
                                  FROM family_members m WHERE m.account_id = \(bind: id)
                                """ },
                             rowLink: { _, family in AdminPath.record(AdminResource.families.slug, family) },
                             emptyText: "In no family."),
            ],
            snapshot: "jsonb_build_object('id', t.id, 'country', t.country, 'email_verified_at', t.email_verified_at, 'locked_at', t.locked_at)"
        ),
        access: .init(
            allowCreate: false,
            allowDelete: false,
            requiresAdmin: true,
            menuLabel: "Accounts"
        )
    )
}
