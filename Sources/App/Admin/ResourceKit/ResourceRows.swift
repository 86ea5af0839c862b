import SQLKit

/// The rows of the fixed columns the console's generic statements name: ids, a record's name, its
/// audit snapshot, a lookup's label. The columns a resource declares are chosen at run time and
/// read by name where they are shown (`Cells`, `ResourceStore.formValues`).
enum ResourceRows {
    struct ID: Decodable, Sendable { let id: Int }

    /// The `row_id` a list page's or an export's row carries beside its declared columns.
    struct RowID: Decodable, Sendable {
        let rowID: Int
        enum CodingKeys: String, CodingKey { case rowID = "row_id" }
    }

    struct DisplayName: Decodable, Sendable {
        let displayName: String
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }
    }

    struct Snapshot: Decodable, Sendable { let id: Int; let snapshot: String }

    struct Label: Decodable, Sendable { let label: String }
}

extension SQLRow {
    /// The record id of a list page's or an export's row.
    func rowID() throws -> Int { try decode(model: ResourceRows.RowID.self).rowID }
}
