import Foundation
import OpenAPIRuntime

/// Child mode from the parent's side: pairing a tablet to a child, the parent PIN, and the
/// child's requests for books.
extension StorytimeClient {
    /// Pairs a device to the child: hand the answer to the tablet (`ChildSession(baseURL:pairing:)`).
    /// The device is listed in `devices()` with its `childId`, and signed out like any other.
    public func pairDevice(childID: Int, name: String) async throws -> ChildPairing {
        try await authorized { try await $0.pairChildDevice(path: .init(childId: childID), body: .json(.init(name: name))).created.body.json.data }
    }

    /// Sets the 4–6 digit PIN that unlocks parent mode on a child device.
    public func setPIN(_ pin: String, password: String) async throws {
        _ = try await authorized { try await $0.setParentPIN(body: .json(.init(pin: pin, password: password))).noContent }
    }

    /// The child's requests (pending unless `status` says otherwise), newest first.
    public func bookRequests(childID: Int, status: BookRequestStatus? = nil, page: Int? = nil) async throws -> BookRequestPage {
        try await authorized {
            try await $0.listBookRequests(path: .init(childId: childID), query: .init(status: status, page: page)).ok.body.json
        }
    }

    /// Approves a request: the book joins the library (`conflict`/`unprocessable` as an add would).
    @discardableResult
    public func approveRequest(childID: Int, requestID: Int) async throws -> BookRequestApproval {
        try await authorized {
            try await $0.approveBookRequest(path: .init(childId: childID, requestId: requestID)).ok.body.json.data
        }
    }

    @discardableResult
    public func declineRequest(childID: Int, requestID: Int) async throws -> BookRequest {
        try await authorized {
            try await $0.declineBookRequest(path: .init(childId: childID, requestId: requestID)).ok.body.json.data
        }
    }
}
