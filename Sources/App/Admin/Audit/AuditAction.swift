/// What an audited change was: the audit log's `kind` column, which a CHECK keeps to these raw
/// values (migration 0039). Readers — the audit page, the revert, the database's triggers and the
/// scheduled-transition index — go by the kind. The `action` column keeps the words the audit
/// page and the webhooks' `by`/`change` show; they are written from the kind (`words(_:)`) and
/// never read back.
enum AuditAction: String, CaseIterable, Codable, Sendable {
    /// A record's own form or delete (`ResourceStore`).
    case create, update, delete
    /// A batch action's change of one record (`batch: set_status`).
    case batch
    /// The revert of an earlier entry (`revert #12`), itself a change a revert can undo.
    case revert
    /// A CSV import's change of one book (`import #3`).
    case `import`
    case coverUpload = "cover_upload", coverRemoval = "cover_removal"
    case reviewSubmitted = "review_submitted", reviewApproved = "review_approved", reviewReturned = "review_returned"
    /// A book going live or leaving the catalog by its schedule (`ScheduleAudit`, no staff user).
    case scheduledLive = "scheduled_live", scheduledLeft = "scheduled_left"
    /// A video pipeline's event applied, or replayed by an admin (`pipeline: video.asset.ready`).
    case pipeline, pipelineReplay = "pipeline_replay"
    case passwordChange = "password_change", passwordReset = "password_reset"
    case twoFactorEnabled = "two_factor_enabled", twoFactorNewCodes = "two_factor_new_codes"
    case twoFactorDisabled = "two_factor_disabled", twoFactorReset = "two_factor_reset"
    case twoFactorRecoveryUsed = "two_factor_recovery_used"
    case apiTokenCreated = "api_token_created", apiTokenRevoked = "api_token_revoked"
    case webhookRedeliver = "webhook_redeliver"
    /// The catalog previewed as a family would see it.
    case preview
    /// An entry written before kinds existed whose words fit none: shown as written, never
    /// reverted. Migration 0039 gave it to such rows; the database refuses it on a new one.
    case legacy

    /// The kinds a revert may undo (when their snapshots allow it): `AuditRevert` decides.
    var revertible: Bool {
        switch self {
        case .create, .update, .delete, .batch, .revert: true
        default: false
        }
    }

    /// The words the audit page shows for it; `detail` names the batch action, the entry
    /// reverted, the import or the pipeline's event. Migration 0039 maps these back to kinds
    /// for the rows written before it (a test holds the two together).
    func words(_ detail: String? = nil) -> String {
        let detail = detail ?? ""
        switch self {
        case .create, .update, .delete, .passwordChange, .passwordReset: return rawValue
        case .batch: return "batch: " + detail
        case .revert: return "revert #" + detail
        case .import: return "import #" + detail
        case .coverUpload: return "cover upload"
        case .coverRemoval: return "cover removal"
        case .reviewSubmitted: return "review: submitted"
        case .reviewApproved: return "review: approved"
        case .reviewReturned: return "review: returned"
        case .scheduledLive: return "scheduled: went live"
        case .scheduledLeft: return "scheduled: left the catalog"
        case .pipeline: return "pipeline: " + detail
        case .pipelineReplay: return "pipeline replay: " + detail
        case .twoFactorEnabled: return "two-factor: enabled"
        case .twoFactorNewCodes: return "two-factor: new recovery codes"
        case .twoFactorDisabled: return "two-factor: disabled"
        case .twoFactorReset: return "two-factor: reset by an admin"
        case .twoFactorRecoveryUsed: return "two-factor: recovery code used"
        case .apiTokenCreated: return "api token: created"
        case .apiTokenRevoked: return "api token: revoked"
        case .webhookRedeliver: return "webhook: redeliver"
        case .preview: return "preview as a family"
        case .legacy: return detail.isEmpty ? rawValue : detail
        }
    }
}
