import SQLKit

/// The statement of a child's export (`ChildExportController`).
enum ChildExportQueries {
    struct Document: Decodable { let document: String }

    /// Everything kept about `child` of `parent` as one JSON document: the profile and one array
    /// per section (every row of its table with the child's `child_id`, in its order); nil when
    /// the parent has no such child.
    static func document(child: Int, parent: Int, sections: [(name: String, table: String, order: String)],
                         on sql: any SQLDatabase) async throws -> String? {
        // The family's members are in it too: every account that can see the child's data.
        var parts: [SQLQueryString] = ["'exported_at', now()", "'profile', (SELECT to_jsonb(c) FROM children c WHERE c.id = \(bind: child))", """
            'family_members', (SELECT COALESCE(jsonb_agg(jsonb_build_object('account_id', m.account_id, 'email', p.email, 'role', m.role,
                                                                             'may_answer_requests', m.may_answer_requests, 'joined_at', m.joined_at)
                                                          ORDER BY m.joined_at, m.account_id), '[]')
                                 FROM children c JOIN family_members m ON m.family_id = c.family_id JOIN parents p ON p.id = m.account_id
                                WHERE c.id = \(bind: child))
            """]
        for section in sections {
            parts.append("""
                \(literal: section.name), (SELECT COALESCE(jsonb_agg(to_jsonb(t) ORDER BY \(unsafeRaw: section.order)), '[]')
                                             FROM \(ident: section.table) t WHERE t.child_id = \(bind: child))
                """)
        }
        return try await sql.raw("""
            SELECT jsonb_build_object(\(parts.joined(separator: ", ")))::text AS document
              FROM children WHERE id = \(bind: child) AND family_id = \(FamilyRole.family(of: parent))
            """).first(decoding: Document.self)?.document
    }
}
