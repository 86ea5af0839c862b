import CatalogIndexing
import Core
import Crypto
import SQLKit
import Vapor

/// The one read path of the parent catalog: reads the catalog version, works out whose catalog
/// it is (the caller's country, narrowed by a child's controls), and asks one source — the engine
/// when it is built, else SQL with its cache. Future-based: when the engine is already at the
/// version read and the answer needs no statement, it is answered on the request's event loop;
/// anything else (a catch-up, the SQL path, a child's controls) continues as a task.
struct CatalogService {
    let req: Request

    /// A list page and its total. A search that found nothing is counted with its cause
    /// (`SearchMisses`), after the answer is on its way.
    func books(_ parameters: CatalogParameters, child: Int?) -> EventLoopFuture<(body: ByteBuffer, total: Int)> {
        let req = self.req
        return answer(child: child, now: { $0.page(parameters, scope: $1, synonyms: $2) },
                      later: { try await $0.page(parameters, scope: $1, synonyms: $2) },
                      then: { answer, source, scope, synonyms in
                          guard answer.total == 0, !parameters.words.isEmpty else { return }
                          // What the task needs of the application is read now: it may run after the
                          // application shut down (its services are gone then; a query just fails).
                          let misses = req.appServices.searchMisses, secret = req.application.settings.sessionSecret, now = req.now
                          let account = try? req.parentID
                          // SQL after the answer went, on the primary resolved now (its pool closes with
                          // the application, and the statements then just fail).
                          // The engine works the cause out from memory, on the request's loop after the
                          // answer went (a task per miss cost more in thread hand-offs than the cause
                          // itself under one-off searches); a cause is kept per answer key.
                          if let engine = source as? EngineCatalogSource {
                              let cause = engine.missCause(parameters, scope: scope, synonyms: synonyms)
                              misses.record(words: parameters.words, country: scope.country, cause: cause, account: account, secret: secret, now: now)
                              return
                          }
                          guard let sqlSource = source as? SQLCatalogSource else { return }
                          let sql = req.sql
                          Task {
                              guard let cause = try? await sqlSource.missCause(parameters, scope: scope, synonyms: synonyms, sql: sql) else { return }
                              misses.record(words: parameters.words, country: scope.country, cause: cause, account: account, secret: secret, now: now)
                          }
                      })
    }

    /// As-you-type completions (`/catalog/suggest`).
    func suggest(_ words: [String], child: Int?) -> EventLoopFuture<[SuggestionDTO]> {
        answer(child: child, now: { $0.suggest(words, scope: $1, synonyms: $2) }, later: { try await $0.suggest(words, scope: $1, synonyms: $2) })
    }

    /// One book, or nil when it is not in the caller's (or the child's) catalog.
    func book(_ id: Int, child: Int?) -> EventLoopFuture<ByteBuffer?> {
        answer(child: child, now: { source, scope, _ in source.book(id, scope: scope) }, later: { source, scope, _ in try await source.book(id, scope: scope) })
    }

    private func answer<T: Sendable>(child: Int?, now: @escaping @Sendable (EngineCatalogSource, CatalogScope, Synonyms) -> T,
                                     later: @escaping @Sendable (any CatalogSource, CatalogScope, Synonyms) async throws -> T,
                                     then: @escaping @Sendable (T, any CatalogSource, CatalogScope, Synonyms) -> Void = { _, _, _, _ in }) -> EventLoopFuture<T> {
        let req = self.req
        return req.appServices.catalogCache.current(for: req).flatMap { reading in
            if let engine = Self.currentEngine(req, version: reading.generation.version),
               let synonyms = req.appServices.synonyms.cached(version: reading.synonymsVersion),
               let country = Self.knownCountry(req, reading: reading), var scope = Self.knownScope(of: child, req: req, reading: reading),
               let language = req.knownCatalogLanguage(version: reading.countriesVersion) {
                scope.country = country
                scope.locales = language
                let result = now(engine, scope, synonyms)
                // After this tick, once the answer went: on the same loop, no thread hand-off.
                req.eventLoop.execute { then(result, engine, scope, synonyms) }
                return req.eventLoop.makeSucceededFuture(result)
            }
            return req.eventLoop.makeFutureWithTask {
                let work = {
                    var scope = try await Self.scope(of: child, reading: reading, req: req)
                    scope.locales = try await req.catalogLanguage(version: reading.countriesVersion)
                    let synonyms = try await req.appServices.synonyms.current(version: reading.synonymsVersion, on: req.db as! any SQLDatabase)
                    let source = try await Self.source(req, reading: reading)
                    let result = try await later(source, scope, synonyms)
                    req.eventLoop.execute { then(result, source, scope, synonyms) }   // after the answer went
                    return result
                }
                // While the engine starts: a snapshot loading is waited for (seconds at most);
                // else SQL answers are bounded (`FallbackGate`). An engine never started (`off`:
                // tests of the SQL path, a command) leaves SQL unbounded, as CATALOG_ENGINE=off does.
                let engine = req.appServices.catalogEngine
                guard req.application.settings.catalogEngine, engine.isStarting else { return try await work() }
                if await engine.waitWhileLoading(seconds: 5) { return try await work() }
                return try await req.appServices.catalogFallback.run(work)
            }
        }
    }

    /// The engine when it may answer without waiting: enabled, built and already at `version`.
    private static func currentEngine(_ req: Request, version: Int) -> EngineCatalogSource? {
        let engine = req.appServices.catalogEngine
        guard req.application.settings.catalogEngine, engine.isReady, engine.currentVersion >= version else { return nil }
        return EngineCatalogSource(engine: engine, now: req.now)
    }

    /// The engine brought up to the version this request read (so a commit is in the very next
    /// answer on every instance); SQL while the engine builds or when it is off.
    private static func source(_ req: Request, reading: CatalogCache.Reading) async throws -> any CatalogSource {
        if let engine = currentEngine(req, version: reading.generation.version) { return engine }
        let engine = req.appServices.catalogEngine
        guard req.application.settings.catalogEngine, engine.isReady else { return SQLCatalogSource(req: req, reading: reading) }
        try await engine.catchUp(to: reading.generation.version, on: req.application.db)
        return EngineCatalogSource(engine: engine, now: req.now)
    }

    /// The caller's country when this instance already knows it (no statement needed).
    private static func knownCountry(_ req: Request, reading: CatalogCache.Reading) -> String? {
        guard let parent = try? req.parentID else { return nil }
        return req.appServices.parentCountries.cached(parent, version: reading.countriesVersion)
    }

    /// `child`'s scope when this instance already knows it at the controls version read (the
    /// whole catalog for no child).
    private static func knownScope(of child: Int?, req: Request, reading: CatalogCache.Reading) -> CatalogScope? {
        guard let child else { return CatalogScope() }
        guard let parent = try? req.parentID else { return nil }
        return req.appServices.childScopes.cached(child, parent: parent, version: reading.controlsVersion)
    }

    /// What the catalog is for this caller: their country's, narrowed by `child`'s controls when
    /// one is named. Another parent's child is a 404. The scope is kept (`ChildScopes`).
    private static func scope(of child: Int?, reading: CatalogCache.Reading, req: Request) async throws -> CatalogScope {
        let country = try await req.parentCountry(version: reading.countriesVersion)
        guard let child else { return CatalogScope(country: country) }
        let owned = try await req.ownedChild(child)
        var scope = owned.controls.scope(library: owned.library)
        if !owned.controls.approvedOnly {
            req.appServices.childScopes.keep(scope, child: child, parent: try req.parentID, version: reading.controlsVersion)
        }
        scope.country = country
        return scope
    }

    /// Every category with its ETag, kept per catalog generation.
    func categories() -> EventLoopFuture<CatalogCache.Entry> {
        let req = self.req
        let cache = req.appServices.catalogCache
        return cache.current(for: req).flatMap { reading in
            let language = req.knownCatalogLanguage(version: reading.countriesVersion) ?? [req.application.settings.catalogLocales.defaultLocale]
            req.catalogLanguage = language
            let key = "categories\u{1}" + language.joined(separator: ",")
            if let hit = cache.entry(key, in: reading.generation) { return req.eventLoop.makeSucceededFuture(hit) }
            return req.eventLoop.makeFutureWithTask {
                let sql = await req.catalogSQL(atLeast: reading.generation.version)
                var localized = CatalogScope()
                localized.locales = language
                let body = try ByteBuffer.json(ItemDTO(data: try await CatalogQueries(sql: sql, now: req.now, scope: localized).categories()))
                // Per locale: the same names in two locales are two representations.
                let etag = "\"" + SHA256.hash(data: Data(body.readableBytesView) + Data(language.joined(separator: ",").utf8)).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
                let entry = CatalogCache.Entry(body: body, totalCount: 0, etag: etag)
                cache.store(entry, for: key, in: reading.generation)
                return entry
            }
        }
    }
}

extension Request {
    /// The parent catalog as this request sees it.
    var catalog: CatalogService { CatalogService(req: self) }
}
