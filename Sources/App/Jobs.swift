import NIOConcurrencyHelpers
import Vapor

/// Every piece of background work the server does, in one list: what runs, how often, and
/// whether one instance at a time runs it (`Support/JobRunner.swift` says how). Started with the
/// server and stopped — awaited — before the database pool closes. In tests only mail delivery
/// runs by itself (a test reads mail from its SMTP server as a family would); tests run the rest
/// when they mean to.
extension Application {
    var backgroundJobs: [Job] {
        let services = appServices, settings = settings, logger = logger, pool = db
        let sql = db.sql(counting: services.queryCounter)
        var jobs = [
            Job("catalog change log purge", every: CatalogChangeLog.interval, .oneInstanceAtATime) {
                let purged = try await CatalogChangeLog.purge(on: sql)
                if purged > 0 { logger.info("catalog change log purged", metadata: ["rows": .stringConvertible(purged)]) }
            },
            Job("scheduled transitions", every: ScheduleAudit.interval, .oneInstanceAtATime) {
                _ = try await ScheduleAudit.record(on: sql, at: services.clock.now())
            },
            Job("play retention", every: PlayRetention.interval, .oneInstanceAtATime) {
                let outcome = try await PlayRetention.fold(olderThanMonths: settings.playRetentionMonths, pool: pool)
                if outcome.plays > 0 {
                    logger.info("plays folded", metadata: ["children": .stringConvertible(outcome.children), "plays": .stringConvertible(outcome.plays)])
                }
            },
            Job("idempotency keys purge", every: PlayRetention.interval, .oneInstanceAtATime) {
                try await IdempotencyStore.purge(on: sql)
            },
            // This instance's own counts of searches that found nothing.
            Job("search misses", every: SearchMisses.flushInterval, .everyInstance) {
                try await services.searchMisses.flush(on: sql)
            },
            Job(WebhookDelivery.job, every: .seconds(2), .oneInstanceAtATime) { [client = http.client.shared] in
                try await WebhookDelivery.pass(sql: sql, client: client, retry: settings.webhookRetrySeconds,
                                               targets: WebhookTargets(allowing: settings.webhookAllowPrivate),
                                               clock: services.clock, logger: logger)
            },
            Job("webhook log purge", every: .seconds(600), .oneInstanceAtATime) {
                try await WebhookDelivery.purge(on: sql)
            },
            Job("mail outbox purge", every: .seconds(600), .oneInstanceAtATime) {
                try await MailDelivery.purge(on: sql)
            },
        ]
        if let url = settings.smtpURL, let server = SMTPServer(url: url) {
            let client = SMTPClient(server: server, group: eventLoopGroup)
            jobs.append(Job(MailDelivery.job, every: MailDelivery.interval, .oneInstanceAtATime) {
                try await MailDelivery.pass(database: pool, client: client, from: settings.mailFrom, retry: settings.mailRetrySeconds,
                                            clock: services.clock, logger: logger)
            })
        }
        if settings.catalogEngine {
            let engine = services.catalogEngine, path = settings.engineSnapshotPath, tried = NIOLockedValueBox(false)
            // Its own memory: each instance starts its engine and keeps its own snapshot file.
            jobs.append(Job(CatalogEngineStarter.startJob, every: .seconds(5), .everyInstance) {
                try await CatalogEngineStarter.start(engine, snapshot: path, tried: tried, database: pool, jobs: services.jobs)
            })
            if let path {
                jobs.append(Job(CatalogEngineStarter.snapshotJob, every: .seconds(settings.engineSnapshotMinutes * 60), .everyInstance) {
                    guard engine.isReady else { return }
                    _ = try await engine.writeSnapshot(to: path, on: pool, now: services.clock.now())
                })
            }
        }
        return jobs
    }
}

/// Starts `backgroundJobs` with the server and stops them before the pool closes.
struct JobsStarter: LifecycleHandler {
    // Synchronous: VaporTesting boots with `boot()`, which calls only `didBoot`.
    func didBoot(_ app: Application) throws {
        if app.environment == .production && app.settings.smtpURL == nil {
            app.logger.warning("SMTP_URL is not set: mail stays in the outbox (console → Outbox) and nobody receives it")
        }
        // A one-off command (`migrate`, `staff unlock`…) boots the app too, but runs no background
        // work: it would build the catalog engine, deliver webhooks and purge tables on the side,
        // only to cancel them a moment later at exit (and a build cancelled mid-connect once hung
        // the command's exit for good). `serve` (also the default command) runs them.
        let command = app.environment.arguments.dropFirst().first
        guard app.environment == .testing || command == nil || command == "serve" || command?.hasPrefix("-") == true else { return }
        let jobs = app.environment == .testing ? app.backgroundJobs.filter { $0.name == MailDelivery.job } : app.backgroundJobs
        app.appServices.jobs.start(jobs, database: app.db, logger: app.logger)
        app.appServices.jobs.wake(CatalogEngineStarter.startJob)
    }

    func shutdownAsync(_ app: Application) async {
        await app.appServices.jobs.shutdown()
    }
}
