@testable import App
import SQLKit
import Testing

@Suite("Console declarations checked at start-up")
struct ResourceRegistryTests {
    static func broken(_ change: (inout AdminResource) -> Void) -> AdminResource {
        var resource = AdminResource.publishers
        change(&resource)
        return resource
    }

    @Test("every registered resource's SQL fits the schema; a mistake names its resource")
    func sqlChecked() async throws {
        try await withApp { app in
            try await ResourceRegistry.checkSQL(on: app.sql)
            let unknownColumn = Self.broken { $0 = AdminResource(slug: "publishers", table: "publishers", singular: "P", plural: "Ps",
                                                                 displayName: "t.name", columns: [AdminColumn("nmae", "Name", sortable: true)],
                                                                 fields: [], defaultSort: "nmae") }
            let badLookup = Self.broken { $0.filters = [AdminFilter(name: "x", label: "X", kind: .lookup(Lookup(table: "categories", label: "title", order: "id"))) { _ in nil }] }
            let badFilter = Self.broken { $0.filters = [AdminFilter(name: "x", label: "X", kind: .integer(0...1)) { "t.missing = \(bind: $0)" }] }
            for resource in [unknownColumn, badLookup, badFilter] {
                let error = await #expect(throws: ResourceRegistry.DeclarationError.self) { try await ResourceRegistry.checkSQL([resource], on: app.sql) }
                #expect(error?.description.hasPrefix("console resource publishers: its SQL does not fit the schema") == true, "\(String(describing: error))")
            }
        }
    }

    @Test("the declarations' shape: registered ones pass; a default sort, a name twice, a strange identifier or a missing parent fail")
    func shapeChecked() throws {
        try ResourceRegistry.checkDeclarations()
        let cases: [(AdminResource, String)] = [
            (Self.broken { $0 = AdminResource(slug: "publishers", table: "publishers", singular: "P", plural: "Ps", displayName: "t.name",
                                              columns: [AdminColumn("name", "Name")], fields: [], defaultSort: "name") },
             "the default sort \"name\" is not a sortable column"),
            (Self.broken { $0.filters = AdminResource.bookFilters + AdminResource.bookFilters }, "the filter \"status\" is declared twice"),
            (Self.broken { $0.joins = [AdminJoin(table: "books; DROP TABLE books", alias: "b", on: "true")] }, "\"books; DROP TABLE books\" is not a plain SQL name"),
        ]
        for (resource, problem) in cases {
            #expect(throws: ResourceRegistry.DeclarationError.self) { try ResourceRegistry.checkDeclarations([resource]) }
            do { try ResourceRegistry.checkDeclarations([resource]) } catch { #expect("\(error)" == "console resource publishers: \(problem)") }
        }
        #expect(throws: ResourceRegistry.DeclarationError.self) { try ResourceRegistry.checkDeclarations([.rightsWindows]) }
    }
}
