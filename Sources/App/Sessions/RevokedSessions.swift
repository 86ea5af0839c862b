import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The devices signed out lately, as every instance must know them within a second: an access
/// token names its device (`sid`), and a token of a revoked device is refused though its
/// signature and expiry are fine.
///
/// The set is read from PostgreSQL (devices revoked within an access token's lifetime) at most
/// every `freshness` seconds, by the first request that needs it (one read for all: single-flight);
/// a request never trusts a set older than `maxAge`. A revocation made here is known here at once.
/// No background task: an idle instance reads nothing.
final class RevokedSessions: Sendable {
    static let freshness: TimeInterval = 0.25
    static let maxAge: TimeInterval = 0.9

    private struct State {
        var ids: Set<Int> = []
        /// Revocations made here, by when: kept across a read that may have started before them.
        var noted: [Int: Date] = [:]
        var readAt = Date.distantPast
        var reading: EventLoopFuture<Void>?
    }
    private let state = NIOLockedValueBox(State())

    /// Whether `device` is revoked, when the set is recent enough to say; nil: read it first.
    /// Starts a read in the background when the set is getting old.
    func isRevoked(_ device: Int, now: Date, refresh: () -> EventLoopFuture<Void>) -> Bool? {
        let (revoked, age) = state.withLockedValue { ($0.ids.contains(device), now.timeIntervalSince($0.readAt)) }
        if revoked { return true }
        guard age < Self.maxAge else { return nil }
        if age >= Self.freshness { _ = refresh() }
        return false
    }

    /// Reads the set again (one read at a time; concurrent callers share it).
    func read(on loop: any EventLoop, window: TimeInterval, sql: any SQLDatabase) -> EventLoopFuture<Void> {
        let (promise, running) = state.withLockedValue { state -> (EventLoopPromise<Void>?, EventLoopFuture<Void>?) in
            if let reading = state.reading { return (nil, reading) }
            let promise = loop.makePromise(of: Void.self)
            state.reading = promise.futureResult
            return (promise, nil)
        }
        guard let promise else { return running! }
        let started = Date()
        promise.completeWithTask { [self] in
            defer { state.withLockedValue { $0.reading = nil } }
            let ids = try await SessionQueries.recentlyRevoked(within: window, on: sql)
            state.withLockedValue { state in
                // Revocations noted here since the read began stay: it may have missed them.
                state.noted = state.noted.filter { $0.value >= started }
                state.ids = ids.union(state.noted.keys)
                state.readAt = started
            }
        }
        return promise.futureResult
    }

    /// Devices this instance just signed out: refused here from the next request on.
    func note(_ devices: [Int]) {
        let now = Date()
        state.withLockedValue { state in
            for device in devices { state.ids.insert(device); state.noted[device] = now }
        }
    }
}

extension Request {
    /// Fails with the 401 of a signed-out device when `token` names one.
    func requireLiveSession(_ token: ParentToken) -> EventLoopFuture<Void> {
        guard let device = token.deviceID else { return eventLoop.makeSucceededVoidFuture() }
        let sessions = application.appServices.revokedSessions
        let window = application.settings.tokenLifetime + ParentToken.clockSkew + 60
        // Not the request's counted SQL: one read serves every request for a quarter second.
        let sql = application.db as! any SQLDatabase, loop = eventLoop
        let read: @Sendable () -> EventLoopFuture<Void> = { sessions.read(on: loop, window: window, sql: sql) }
        switch sessions.isRevoked(device, now: Date(), refresh: read) {
        case .some(false): return eventLoop.makeSucceededVoidFuture()
        case .some(true): return eventLoop.makeFailedFuture(Problem.invalidToken)
        case .none:
            return read().flatMapThrowing {
                if sessions.isRevoked(device, now: Date(), refresh: read) == true { throw Problem.invalidToken }
            }
        }
    }
}

