import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The devices signed out and the accounts deleted lately, as every instance must know them within
/// a second: an access token names its account (`sub`) and its device (`sid`), and a token of a
/// revoked device or of a deleted account is refused though its signature and expiry are fine.
///
/// The sets are read from PostgreSQL (devices revoked, accounts ended — `ended_accounts`, kept by
/// a trigger — within an access token's lifetime) at most every `freshness` seconds, by the first
/// request that needs them (one read for all: single-flight); a request never trusts sets older
/// than `maxAge`. A revocation made here is known here at once. No background task: an idle
/// instance reads nothing. Writes do not wait for the next read: `ParentAuthMiddleware` checks
/// the device and the account in the database for every request that changes something.
///
/// The sets' age is a duration, measured with `ContinuousClock` (not the app's clock, which a test
/// may stop or move: the sets would then never grow old, or grow old at once).
final class RevokedSessions: Sendable {
    typealias Instant = ContinuousClock.Instant
    static let freshness: Duration = .milliseconds(250)
    static let maxAge: Duration = .milliseconds(900)

    private struct State {
        var ids: Set<Int> = []
        var accounts: Set<Int> = []
        /// Revocations made here, by when: kept across a read that may have started before them.
        var noted: [Int: Instant] = [:]
        var notedAccounts: [Int: Instant] = [:]
        /// When the last read began; nil: never read.
        var readAt: Instant?
        var reading: EventLoopFuture<Void>?
    }
    private let state = NIOLockedValueBox(State())

    /// Whether `device` (nil: a token from before devices) or `account` is revoked, when the sets
    /// are recent enough to say; nil: read them first. Starts a read in the background when the
    /// sets are getting old.
    func isRevoked(_ device: Int?, account: Int, now: Instant, refresh: () -> EventLoopFuture<Void>) -> Bool? {
        let (revoked, readAt) = state.withLockedValue { state in
            ((device.map { state.ids.contains($0) } ?? false) || state.accounts.contains(account), state.readAt)
        }
        if revoked { return true }
        guard let readAt else { return nil }
        let age = readAt.duration(to: now)
        guard age < Self.maxAge else { return nil }
        if age >= Self.freshness { _ = refresh() }
        return false
    }

    /// Reads the sets again (one read at a time; concurrent callers share it).
    func read(on loop: any EventLoop, window: TimeInterval, sql: any SQLDatabase) -> EventLoopFuture<Void> {
        let (promise, running) = state.withLockedValue { state -> (EventLoopPromise<Void>?, EventLoopFuture<Void>?) in
            if let reading = state.reading { return (nil, reading) }
            let promise = loop.makePromise(of: Void.self)
            state.reading = promise.futureResult
            return (promise, nil)
        }
        guard let promise else { return running! }
        let started = Instant.now
        promise.completeWithTask { [self] in
            defer { state.withLockedValue { $0.reading = nil } }
            let revoked = try await SessionQueries.recentlyRevoked(within: window, on: sql)
            state.withLockedValue { state in
                // Revocations noted here since the read began stay: it may have missed them.
                state.noted = state.noted.filter { $0.value >= started }
                state.notedAccounts = state.notedAccounts.filter { $0.value >= started }
                state.ids = revoked.devices.union(state.noted.keys)
                state.accounts = revoked.accounts.union(state.notedAccounts.keys)
                state.readAt = started
            }
        }
        return promise.futureResult
    }

    /// Ages the sets by `duration`, as if that long had passed since they were read — once a read
    /// under way has ended. Tests: what an instance knows a second later, without waiting a second
    /// (the sets' age is wall time, not the app's clock).
    func age(by duration: Duration) async throws {
        if let reading = state.withLockedValue({ $0.reading }) { try await reading.get() }
        state.withLockedValue { state in state.readAt = state.readAt.map { $0.advanced(by: .zero - duration) } }
    }

    /// Devices this instance just signed out: refused here from the next request on.
    func note(_ devices: [Int]) {
        let now = Instant.now
        state.withLockedValue { state in
            for device in devices { state.ids.insert(device); state.noted[device] = now }
        }
    }

    /// An account this instance found deleted: its every token refused here from the next request on.
    func note(account: Int) {
        let now = Instant.now
        state.withLockedValue { state in
            state.accounts.insert(account)
            state.notedAccounts[account] = now
        }
    }
}

extension Request {
    /// Fails with the 401 of a signed-out device (or a deleted account) when `token` names one,
    /// as far as the recent sets say (`RevokedSessions`); `requireLiveInDatabase` is the exact check.
    func requireLiveSession(_ token: ParentToken) -> EventLoopFuture<Void> {
        guard let account = token.parentID else { return eventLoop.makeFailedFuture(Problem.rejectedToken) }
        let device = token.deviceID
        let sessions = application.appServices.revokedSessions
        let window = max(application.settings.tokenLifetime, ParentGateRoutes.gateLifetime) + ParentToken.clockSkew + 60
        // Not the request's counted SQL: one read serves every request for a quarter second.
        let sql = application.db as! any SQLDatabase, loop = eventLoop
        let read: @Sendable () -> EventLoopFuture<Void> = { sessions.read(on: loop, window: window, sql: sql) }
        switch sessions.isRevoked(device, account: account, now: .now, refresh: read) {
        case .some(false): return eventLoop.makeSucceededVoidFuture()
        case .some(true): return eventLoop.makeFailedFuture(Problem.invalidToken)
        case .none:
            return read().flatMapThrowing {
                if sessions.isRevoked(device, account: account, now: .now, refresh: read) == true { throw Problem.invalidToken }
            }
        }
    }

    /// Fails with the 401 unless `token`'s account exists and its device is signed in, as the
    /// database says now (every instance agrees at once). Not the request's counted SQL.
    func requireLiveInDatabase(_ token: ParentToken) async throws {
        guard let account = token.parentID else { throw Problem.rejectedToken }
        let sessions = application.appServices.revokedSessions
        switch try await SessionQueries.liveness(parent: account, device: token.deviceID, on: application.db as! any SQLDatabase) {
        case .live: return
        case .signedOut: if let device = token.deviceID { sessions.note([device]) }
        case .accountGone: sessions.note(account: account)
        }
        throw Problem.invalidToken
    }
}
