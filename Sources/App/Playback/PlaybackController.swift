import Core
import Foundation
import JWT
import Vapor

/// `POST /api/v1/children/:child_id/library/:book_id/playback`: permission to start a video now,
/// as a short-lived signed grant the video CDN checks (docs/api.md, "Playback grants"). A parent
/// or the child's own device may ask; the answer is never stored (`Cache-Control: no-store`).
struct PlaybackController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.family.on(.POST, "library", ":book_id", "playback", body: .collect(maxSize: "1kb"), use: grant)
    }

    /// The longest a grant lives, whatever else allows.
    static let maximumLifetime: TimeInterval = 6 * 3600

    struct GrantDTO: Content, Equatable {
        let url: String
        let token: String
        let expiresAt: Date
        /// What ends it: `rights_end`, `bedtime`, `time_limit` or `max_lifetime`.
        let expiresBecause: String
    }

    /// Checks in this order: the book in the child's library and the catalog of the family's
    /// country (404), the controls (the play's 403s), the book's `Playability` (as library entries
    /// show it: rights available now, 422 `rights_unavailable`; a ready video, 422
    /// `asset_not_ready`), then — when today has a daily limit — the minutes neither played nor
    /// held by the child's grants given today (`PlaybackReservations`: 403 `time_limit_reached`
    /// when none are left), which the grant reserves for its whole length, spent for the rest of
    /// the day.
    @Sendable
    func grant(req: Request) async throws -> Response {
        let child = try req.child
        let bookID = try req.pathID("book_id", missing: "No such book in this library.")
        let country = req.country(of: child)
        let now = req.now
        guard let entry = try await PlaybackQueries.entry(child: child.id, book: bookID, country: country, at: now, on: req.sql), entry.visible else {
            throw Problem.notFound("No such book in this child's library.")
        }
        // The book's part (`Playability`, as library entries show it): judged after the controls' day.
        let refusal = Playability.refusal(entry.playability)
        let asset = Playability.assetReady(entry.playableAssetStatus) ? entry.assetId : nil
        let availableUntil = entry.availableUntil, duration = entry.durationSeconds
        let parent = try req.parentID
        let grantID = UUID()
        // Judged and reserved under the child's lock: grants asked together never share a minute.
        let (expiry, reason) = try await req.transaction { sql -> (Date, String) in
            guard try await PlayAllowance.lockChild(child.id, parent: parent, on: sql) else {
                throw Problem.notFound("No such book in this child's library.")
            }
            let usedToday = try await PlayAllowance.requireAllowed(child: child.id, controls: child.controls, book: bookID, on: sql, now: now)
            if let refusal { throw refusal.problem }
            guard let used = usedToday else {
                return Self.expiry(now: now, availableUntil: availableUntil, controls: child.controls, usedToday: nil)
            }
            let clock = child.controls.clock, today = clock.day(containing: now)
            let held = try await PlaybackReservations.held(child: child.id, in: today, on: sql)
            let daily = child.controls.schedule.limits(weekday: clock.weekday(ofDayStarting: today.start)).dailySeconds ?? 0
            guard used + held < daily else {
                let verdict = PlayAllowance.decision(child.controls, now: now, usedToday: used + held)
                let until: Date = if case .timeLimitReached(let t) = verdict { t } else { today.end }
                throw PlaybackReservations.exhausted(dailySeconds: daily, now: now, until: until)
            }
            // A limited day's grant reserves the book's length (or what is left), not the whole
            // day: the child may start another book after this one. It lives a little longer
            // than it reserves, for pauses, but never past the minutes left.
            let (limit, limitReason) = Self.expiry(now: now, availableUntil: availableUntil, controls: child.controls, usedToday: used + held)
            var (expiry, reason) = (limit, limitReason)
            var reserved = Int(limit.timeIntervalSince(now).rounded(.up))
            if let length = duration, length > 0, length < reserved {
                reserved = length
                let paused = Date(timeIntervalSince1970: now.addingTimeInterval(TimeInterval(length + Self.pauseSeconds)).timeIntervalSince1970.rounded(.down))
                if paused < expiry { (expiry, reason) = (paused, "book_length") }
            }
            try await PlaybackReservations.reserve(child: child.id, book: bookID, grant: grantID, now: now, until: expiry,
                                                   seconds: reserved, on: sql)
            return (expiry, reason)
        }
        guard let asset else { throw Self.notReady }
        let payload = PlaybackGrant(sub: .init(value: String(asset)), aud: .init(value: [PlaybackGrant.audience]),
                                    exp: .init(value: expiry), iat: .init(value: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))),
                                    jti: .init(value: grantID.uuidString), book: bookID, child: child.id)
        let token = try await req.application.playbackKeys.keys.sign(payload)
        let dto = GrantDTO(url: "\(req.application.settings.playbackBaseURL)/\(asset).m3u8", token: token, expiresAt: expiry, expiresBecause: reason)
        let response = Response(status: .created, headers: ["Cache-Control": "no-store"])
        try response.content.encode(ItemDTO(data: dto), as: .json)
        return response
    }

    /// On a limited day, how long past the book's length its grant lives (pauses).
    static let pauseSeconds = 600

    static let notReady = Problem(status: .unprocessableEntity, code: "asset_not_ready",
                                  detail: "This book's video is not ready to play yet.")

    /// The earliest of: the end of the book's availability in the family's country (rights or
    /// schedule), the next bedtime, the minutes left today, and `maximumLifetime` — in whole
    /// seconds, as the token's `exp` carries it. A tie names the first in that order.
    static func expiry(now: Date, availableUntil: Date?, controls: ChildControls, usedToday: Int?) -> (Date, String) {
        var candidates: [(Date, String)] = []
        if let availableUntil { candidates.append((availableUntil, "rights_end")) }
        if let bedtime = controls.clock.bedtime(controls.schedule, around: now), bedtime.start > now {
            candidates.append((bedtime.start, "bedtime"))
        }
        let today = controls.clock.day(containing: now)
        if let used = usedToday, let limit = controls.schedule.limits(weekday: controls.clock.weekday(ofDayStarting: today.start)).dailySeconds {
            candidates.append((now.addingTimeInterval(TimeInterval(max(0, limit - used))), "time_limit"))
        }
        candidates.append((now.addingTimeInterval(maximumLifetime), "max_lifetime"))
        let (date, reason) = candidates.min { $0.0 < $1.0 }!
        return (Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)), reason)
    }
}
