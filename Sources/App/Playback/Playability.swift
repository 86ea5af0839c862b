import Foundation
import Vapor

/// Whether a book of a child's library can be played, judged once for both places that say it:
/// a playback grant refuses with its `reason` (`PlaybackController.grant`), and every library
/// entry of the parent API shows it as `playable` (`LibraryController.EntryDTO`). In the grant's
/// order: the child's controls keep the book out (`blocked_by_controls`), it is not live with
/// rights available in the family's country now (`rights_unavailable`), its video is not ready
/// (`asset_not_ready`). The child's day is not the book's: at bedtime or with today's minutes used
/// a playable book is still refused (`bedtime`, `time_limit_reached`; `/today` says until when).
struct Playability: Content, Equatable {
    let ok: Bool
    /// The grant's refusal code; null when `ok`.
    @ExplicitNull var reason: String?

    enum Reason: String, Sendable {
        case blockedByControls = "blocked_by_controls"
        case rightsUnavailable = "rights_unavailable"
        case assetNotReady = "asset_not_ready"

        /// The grant's answer.
        var problem: Problem {
            switch self {
            case .blockedByControls:
                Problem(status: .forbidden, code: rawValue, detail: "This book is blocked by the child's family controls.")
            case .rightsUnavailable: LibraryController.rightsUnavailable
            case .assetNotReady: PlaybackController.notReady
            }
        }
    }

    /// What decides it, as `PlaybackQueries.playabilityColumns(country:)` selects it.
    struct Row: Decodable {
        let playableBlocked: Bool
        let playableAvailable: Bool
        let playableAssetStatus: String?
    }

    /// The first reason a grant of the book would be refused, nil when none.
    static func refusal(_ row: Row) -> Reason? {
        if row.playableBlocked { return .blockedByControls }
        if !row.playableAvailable { return .rightsUnavailable }
        if !assetReady(row.playableAssetStatus) { return .assetNotReady }
        return nil
    }

    /// A video asset plays only once it is `ready`.
    static func assetReady(_ status: String?) -> Bool { status == "ready" }

    init(_ row: Row) {
        let refusal = Self.refusal(row)
        ok = refusal == nil
        reason = refusal?.rawValue
    }
}
