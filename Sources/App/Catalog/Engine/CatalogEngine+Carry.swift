import CatalogIndexing
import Foundation
import Core
import NIOConcurrencyHelpers

/// What a change of the catalog leaves of the memos (`MemoCarry`: which answers it cannot have
/// reached), in two steps. `beginCarry`, under the index's write lock with the change, moves the
/// sets kept per index state and adds the change to the memos' chain (`AnswerMemo.chain`): until
/// they are carried through it, the memos stay as they were, and a request at the new version is
/// served a kept entry no change of the chain reaches (vetted on the spot: `CarryCheck`), else
/// computed and kept aside for that version (`AnswerMemo.next`). `finishCarry` then — after the
/// lock, on a thread of its own — removes the entries the chain's changes reach, moves the memos
/// to its last version and takes in what was computed at it; changes that came meanwhile are
/// carried next, together.
///
/// Visiting every kept answer and search under the write lock held every request for ~7 ms per
/// change, and before it, every request that read the new version waited for it: the p99 of
/// traffic with writes. Then the catch-up of the next change waited for the carry (25–45 ms
/// with the memos full, the request that found the change waiting too): changes now queue.
extension CatalogEngine {
    /// The task waiting for the thread that carries the memos through their chains (`carryChains`), while one runs.
    struct Carrying { var running = false; var task: Task<Void, Never>? }

    /// Under the index's write lock, with the change from `from` to `to` applied to `index`:
    /// whether the memos wait for `finishCarry` (else they were emptied, or nothing changed).
    func beginCarry(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) -> Bool {
        carrySets(from: from, to: to, carry, in: index)
        // A change applied at a version already reached (a build went further) keeps nothing;
        // nor does one that does not follow the memos' version or chain.
        // The changed books read again after the change: what patches the browses it reaches.
        let carry = carry.map(index.counting)
        guard let carry, to > from else {
            memo.withLockedValue { $0.removeAll(); $0.version = to }
            searchMemo.withLockedValue { Disposal.replace(&$0, with: SearchMemo(version: to, synonyms: $0.synonyms)) }
            return false
        }
        let answers = memo.withLockedValue { memo in
            guard (memo.carrying ?? memo.version) == from else {
                memo.removeAll()
                memo.version = to
                return false
            }
            memo.chain.append((to, carry))
            return true
        }
        let search = searchMemo.withLockedValue { memo in
            guard (memo.carrying ?? memo.version) == from else {
                Disposal.replace(&memo, with: SearchMemo(version: to, synonyms: memo.synonyms))
                return false
            }
            memo.chain.append((to, carry))
            return true
        }
        return answers || search
    }

    /// Starts the task carrying the memos through their chains, unless one runs (it carries
    /// what was added meanwhile before it stops).
    func startCarrying() {
        carrying.withLockedValue { state in
            guard !state.running else { return }
            state.running = true
            state.task = Task { await self.carryOnItsThread() }
        }
    }

    /// `carryChains` on a thread of its own: a carry is tens of milliseconds of work in one go,
    /// and in a task it held one of the cooperative pool's threads — on two cores, one of the two
    /// every request's handler runs on. (At a lower priority, nice 10, carries took twice as long
    /// and the requests meanwhile vetted more kept answers on the spot: not kept.) When no thread
    /// can be made (the process's limit), in the task as before — a carry must not be lost: the
    /// chain would grow with every change and no carry would start again.
    private func carryOnItsThread() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let work = Unmanaged.passRetained(CarryWork { self.carryChains(); done.resume() })
            var thread = pthread_t()
            let started = pthread_create(&thread, nil, { context in
                Unmanaged<CarryWork>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, work.toOpaque())
            if started == 0 { pthread_detach(thread) } else { work.takeRetainedValue().run() }
        }
    }

    /// The work handed to the carry's thread.
    private final class CarryWork: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// `finishCarry` until no chain is left, counted and timed (`carries`).
    private func carryChains() {
        while true {
            let start = ContinuousClock.now
            let changes = finishCarry()
            let took = start.duration(to: .now)
            carries.wrappingAdd(changes, ordering: .relaxed)
            carryMicroseconds.wrappingAdd(Int(took.components.seconds) * 1_000_000 + Int(took.components.attoseconds / 1_000_000_000_000), ordering: .relaxed)
            // (Checked under the task's lock: a change added after this finds no task running and starts one.)
            let done = carrying.withLockedValue { state in
                let left = memo.withLockedValue { !$0.chain.isEmpty } || searchMemo.withLockedValue { !$0.chain.isEmpty }
                if !left { state.running = false }
                return !left
            }
            if done { return }
        }
    }

    /// Removes from the memos the entries their chains' changes reach and moves them to the
    /// chains' last versions — unless a change that did not follow emptied them meanwhile.
    /// Returns how many changes it carried.
    func finishCarry() -> Int {
        // No request changes a memo being carried: copies (copy-on-write) are read outside its
        // lock, and let go before the memos change — removing in place then copies nothing.
        typealias Chain = [(to: Int, carry: MemoCarry)]
        typealias Answers = (from: Int, epoch: Int, chain: Chain, current: [String: AnswerMemo.Entry], older: [String: AnswerMemo.Entry],
                             members: [AnswerMemo.Members], turns: Int)
        var answers = memo.withLockedValue { memo -> Answers? in
            memo.chain.isEmpty ? nil : (memo.version, memo.epoch, memo.chain, memo.answers, memo.older, [memo.members, memo.olderMembers], memo.turns)
        }
        typealias Search = (from: Int, epoch: Int, chain: Chain, expansions: [[String: [SearchExpansion]]], meta: [[String: [UInt8]]], synonyms: Synonyms)
        var search = searchMemo.withLockedValue { memo -> Search? in
            memo.chain.isEmpty ? nil : (memo.version, memo.epoch, memo.chain, [memo.expansions.current, memo.expansions.previous],
                                        [memo.meta.current, memo.meta.previous], memo.synonyms)
        }
        if answers != nil || search != nil { whileCarrying.withLockedValue { $0 }?() }
        // The first two checks of each chain keep their verdicts in the answers' word groups (`WordGroup`).
        func checks(_ chain: Chain?) -> [CarryCheck] {
            (chain ?? []).enumerated().map { i, link in
                var check = CarryCheck(link.carry)
                if i < 2 { check.cache = (carryStamps.wrappingAdd(1, ordering: .relaxed).newValue, i) }
                return check
            }
        }
        var answerChecks = checks(answers?.chain), searchChecks = checks(search?.chain)
        // Gone when a change reaches it — unless it is a browse the change's books patch; only
        // the answers of the word groups a change may reach are read (`AnswerMemo.carry`).
        let carriedAnswers = answers.map { kept in
            AnswerMemo.carry([(kept.current, kept.members[0]), (kept.older, kept.members[1])], turns: kept.turns, &answerChecks)
        }
        // The pages' meta read with the answers' own checks when both memos follow one chain
        // (the verdicts their word groups keep are read); the expansions always with the search
        // memo's, fresh: an answer's forms may be other than its kept expansion's (synonyms
        // changed in between), and a check keeps one set of forms per word — shared, the
        // answers' forms and the expansions' would take turns in it.
        let sameBase = answers != nil && answers?.from == search?.from
        let sameChain = sameBase && answers?.chain.map(\.to) == search?.chain.map(\.to)
        let goneExpansions: [String] = search.map { SearchMemo.carry(expansions: $0.expansions, synonyms: $0.synonyms, &searchChecks) } ?? []
        let goneMeta: [String] = search.map { kept in
            let base = sameBase ? answers.map { ($0.current, $0.older) } : nil
            return sameChain ? SearchMemo.carry(meta: kept.meta, answers: base, &answerChecks) : SearchMemo.carry(meta: kept.meta, answers: base, &searchChecks)
        } ?? []
        let answerChain = answers.map { ($0.from, $0.epoch, $0.chain.map(\.to)) }, searchChain = search.map { ($0.from, $0.epoch, $0.chain.map(\.to)) }
        let changesSomething = search?.chain.contains { !$0.carry.changesNothing } ?? false
        answers = nil
        search = nil
        // The carried part of each chain goes; a memo emptied meanwhile (a change that did not
        // follow) is left as it is — even when it came back to the same version and chain (its epoch).
        func follows(_ version: Int, _ epoch: Int, _ chain: Chain, _ carried: (Int, Int, [Int])) -> Bool {
            version == carried.0 && epoch == carried.1 && chain.count >= carried.2.count && zip(chain, carried.2).allSatisfy { $0.to == $1 }
        }
        if let carried = answerChain {
            memo.withLockedValue { memo in
                guard follows(memo.version, memo.epoch, memo.chain, carried) else { return }
                if let carriedAnswers {
                    memo.apply(carriedAnswers)
                    browsesPatched.wrappingAdd(carriedAnswers.patched.count, ordering: .relaxed)
                }
                memo.version = carried.2.last!
                memo.chain.removeFirst(carried.2.count)
                memo.joinNext()
            }
        }
        if let carried = searchChain {
            searchMemo.withLockedValue { memo in
                guard follows(memo.version, memo.epoch, memo.chain, carried) else { return }
                memo.expansions.remove(goneExpansions)
                memo.meta.remove(goneMeta)
                if changesSomething {
                    memo.suggestions.removeAll()
                    memo.causes.removeAll()
                }
                memo.version = carried.2.last!
                memo.chain.removeFirst(carried.2.count)
                memo.joinNext()
            }
        }
        return max(answerChain?.2.count ?? 0, searchChain?.2.count ?? 0)
    }

    /// Waits until the memos are carried through every change applied so far (tests; a snapshot's answers).
    func carried() async {
        while let task = carrying.withLockedValue({ $0.running ? $0.task : nil }) { await task.value }
    }

    /// The sets kept per index state follow: a common word's catalog-wide set stays unless the
    /// change touched one of its lexemes (`WordSetCache.carry`), a scope's books and a country's
    /// verdict stay unless a book's filters changed or a book came or went (`MemoCarry.browsing`)
    /// — or, for a change of territory rules alone, unless the scope is in a country it reaches.
    private func carrySets(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) {
        guard let carry else { return scopeSets.withLockedValue { Disposal.replace(&$0, with: ScopeBooks()) } }
        wordSets.carry(from: from, to: to, touched: carry.lexemes, in: index)
        scopeSets.withLockedValue { kept in
            // Emptied, not left to the version: a change applied at a version already reached
            // (a build racing a catch-up) must not leave sets it touched.
            if carry.browsing { Disposal.replace(&kept, with: ScopeBooks()); return }   // (up to 128 MB of sets, freed off the lock)
            if let countries = carry.territorial?.countries {
                for country in countries { kept.countries[country] = nil }
                Disposal.replace(&kept.sets, with: kept.sets.filter { key, _ in
                    Self.keptCountry(key).map { $0 != Self.unknownCountry && !countries.contains($0) } ?? true
                })
            }
            if kept.version == from { kept.version = to }
        }
    }

    /// The country whose catalog a kept key names (the scope's `memoKey` ends it, after `k`):
    /// nil when none (an answer no scope narrows, the whole catalog; a scope without a country),
    /// `unknownCountry` when the key does not say clearly.
    static func keptCountry(_ key: String) -> String? {
        // Bytes, not characters: this runs for every kept answer at a change of territory rules.
        let bytes = key.utf8
        guard let scope = bytes.lastIndex(of: 2) else { return nil }
        guard let k = bytes[scope...].lastIndex(of: UInt8(ascii: "k")) else { return unknownCountry }
        let country = bytes[bytes.index(after: k)...]
        if country.isEmpty { return nil }
        return country.count == 2 && country.allSatisfy({ (65...90).contains($0) }) ? String(Substring(country)) : unknownCountry
    }

    static let unknownCountry = "*"
}
