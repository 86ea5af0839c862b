import CatalogIndexing
import NIOConcurrencyHelpers

/// Children's catalog scopes (what their controls leave of the catalog), kept per instance while
/// `catalog_state.controls_version` — read with the catalog version on every catalog request,
/// moved by a trigger whenever controls change or a child is removed — stays the same. With it a
/// child's catalog request (every one, in child mode) is answered on the event loop like a
/// parent's. An approved-only child's scope is its library, which moves the version not: it is
/// never kept here (`CatalogService` reads it each time).
final class ChildScopes: Sendable {
    static let limit = 100_000
    private struct Entry { let parent: Int; let scope: CatalogScope }
    private struct State {
        var version = -1
        var scopes: [Int: Entry] = [:]
    }
    private let state = NIOLockedValueBox(State())

    /// `child`'s scope if known at `version` and `parent`'s child.
    func cached(_ child: Int, parent: Int, version: Int) -> CatalogScope? {
        state.withLockedValue { state in
            guard state.version == version, let entry = state.scopes[child], entry.parent == parent else { return nil }
            return entry.scope
        }
    }

    /// Keeps `scope`, read after `version` was: a newer version empties the set first.
    func keep(_ scope: CatalogScope, child: Int, parent: Int, version: Int) {
        state.withLockedValue { state in
            if state.version != version {
                guard version > state.version else { return }
                state.version = version
                state.scopes.removeAll(keepingCapacity: true)
            }
            if state.scopes.count >= Self.limit { state.scopes.removeAll(keepingCapacity: true) }
            state.scopes[child] = Entry(parent: parent, scope: scope)
        }
    }

    func forget(child: Int) {
        state.withLockedValue { _ = $0.scopes.removeValue(forKey: child) }
    }
}
