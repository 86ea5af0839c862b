import CatalogIndexing
import Core
import Foundation
import Vapor

/// `engine profile --paths FILE`: what each step of a list answer costs in this build, without
/// HTTP — the words' expansions, the answer (sets, facets, ranking), the search's meta (spelling
/// correction and highlights) and the render — one-off (nothing kept) and kept (the engine's memos
/// warm), for the whole catalog and for a child's scope (max age 8, one blocked category). `make
/// bench` prints it at each size (`BENCH_ONLY=speed`).
struct EngineProfileCommand: StorytimeCommand {
    let options: Set<String> = ["paths", "limit", "path"]
    let usage = "App engine profile --paths FILE [--limit N] [--path SNAPSHOT]"
    var help: String { "Times each step of the catalog engine's list answer over the list paths in FILE (one-off and kept, scoped and not)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        guard let file = try arguments.single("paths") else { throw Abort(.badRequest, reason: "--paths FILE is required") }
        let limit = try arguments.single("limit").flatMap(Int.init) ?? 20_000
        let requests = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").compactMap(Self.listParameters).prefix(limit)
        let engine = CatalogEngine(logger: app.logger, buildURL: app.settings.databaseURL)
        if let snapshot = try arguments.single("path") ?? app.settings.engineSnapshotPath, (try? await engine.start(fromSnapshot: snapshot, on: app.db)) != nil {
        } else {
            try await engine.build(on: app.db)
        }
        let synonyms = try await context.withDatabase { try await SynonymStore().current(version: -1, on: $0) }
        guard let state = engine.currentState() else { throw Abort(.internalServerError, reason: "the engine did not start") }
        let index = state.index
        let child = CatalogScope(maxAge: 8, blockedCategories: index.categories.first.map { [$0.id] } ?? [])
        // The scope's books, kept per scope and index state as the engine keeps them (`scopeBooks`).
        let childBooks = index.books(in: child, offline: nil)
        let now = app.now
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        var steps = StepTimes()
        let wordSets = WordSetCache()
        var empty = 0
        // One-off pages first, on their own, in the file's order: each step below runs right
        // after the one before on the same words, and a page timed after them found its memory warm.
        steps.list("page, one-off (all steps, whole catalog)", "  of which found some", "  of which found nothing")
        for parameters in requests {
            let start = ContinuousClock.now
            let page = steps.time("page, one-off (all steps, whole catalog)") { engine.page(parameters, now: now, synonyms: synonyms) }
            // The same split by what it found: half of the one-off searches find nothing (a
            // correction then looked for), and the rest rank and highlight a page.
            steps.record(page.total == 0 ? "  of which found nothing" : "  of which found some", start.duration(to: .now))
            _ = steps.time("page, child's scope") { engine.page(parameters, scope: child, now: now, synonyms: synonyms) }
        }
        for parameters in requests {
            let expansions = steps.time("expansions (typo walk, stems, sounds)") { index.expansions(parameters.words, synonyms: synonyms) }
            let answer = steps.time("answer, whole catalog (sets, facets, order)") { index.answer(parameters, expansions: expansions) }
            if answer.total == 0 { empty += 1 }
            // Common words' sets kept between answers (`WordSetCache`), as the engine's pages keep them.
            _ = steps.time("answer, common words' sets kept") { index.answer(parameters, expansions: expansions, cache: WordSetCache.Reader(wordSets, version: 0)) }
            _ = steps.time("answer, child's scope (its books and the sets kept)") {
                index.answer(parameters, expansions: expansions, within: childBooks, cache: WordSetCache.Reader(wordSets, version: 0))
            }
            _ = steps.time("  correction: the corrected words") {
                SearchMeta.correction(parameters, expansions: expansions, total: answer.total, vocabulary: index.typos)
            }
            _ = steps.time("  highlights") {
                var writer = JSONWriter()
                CatalogEngine.highlight(answer.ids, expansions, in: index, into: &writer)
                return writer.bytes.count
            }
            let meta = steps.time("meta (correction, highlights)") {
                engine.computeSearchMeta(parameters, expansions, answer, in: index, narrowing: child, offline: nil, stateKey: "", version: state.version, synonyms: synonyms)
            }
            _ = steps.time("render") { engine.render(parameters.page, answer, meta: meta, in: index, at: micros, country: nil) }
            _ = engine.page(parameters, now: now, synonyms: synonyms)
            _ = steps.time("page, kept (the same again)") { engine.page(parameters, now: now, synonyms: synonyms) }
            _ = engine.page(parameters, scope: child, now: now, synonyms: synonyms)
            _ = steps.time("page, child's scope again") { engine.page(parameters, scope: child, now: now, synonyms: synonyms) }
        }
        context.console.print("\(requests.count) list requests (\(empty) found nothing: their cause is worked out after the answer), \(index.count) books, \(wordSets.count) common words' sets kept")
        context.console.print(steps.table)
    }

    /// The catalog list parameters of a bench path (`/api/v1/catalog/books?…`); nil for any other.
    static func listParameters(_ line: Substring) -> CatalogParameters? {
        let prefix = "/api/v1/catalog/books"
        guard line.hasPrefix(prefix) else { return nil }
        let rest = line.dropFirst(prefix.count)
        guard rest.isEmpty || rest.hasPrefix("?") else { return nil }
        return try? CatalogParameters(QueryParameters(query: String(rest.dropFirst())))
    }
}

/// Durations per named step, in the order first seen: mean and 99th percentile in µs.
struct StepTimes {
    private var order: [String] = []
    private var samples: [String: [Double]] = [:]

    mutating func time<T>(_ name: String, _ body: () -> T) -> T {
        let start = ContinuousClock.now
        let result = body()
        record(name, start.duration(to: .now))
        return result
    }

    /// Lists `names` in this order (a step first seen later is listed where it belongs).
    mutating func list(_ names: String...) { order += names.filter { samples[$0] == nil && !order.contains($0) } }

    mutating func record(_ name: String, _ elapsed: Duration) {
        if !order.contains(name) { order.append(name) }
        samples[name, default: []].append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
    }

    var table: String {
        order.map { name in
            let values = samples[name, default: []].sorted()
            let mean = values.reduce(0, +) / Double(max(values.count, 1))
            let p99 = values.isEmpty ? 0 : values[min(values.count - 1, values.count * 99 / 100)]
            return name.padding(toLength: 48, withPad: " ", startingAt: 0) + String(format: " %9.1f µs mean %9.1f µs p99", mean, p99)
        }.joined(separator: "\n")
    }
}
