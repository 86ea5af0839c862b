import CatalogIndexing

extension CatalogEngine.AnswerMemo {
    /// One generation's answer keys by word group, and its browses' keys: what a carry visits
    /// (`carry`). The answers of a group whose words a change cannot reach are passed over unread —
    /// visiting every kept answer at every change (~300 ns each, mostly memory) was a fifth of the
    /// server's CPU at ten changes a second. A key may outlive its entry here (moved to the newer
    /// generation, replaced by one of other words): each is read against its generation, and a
    /// carry that visits the list keeps only those still there.
    struct Members {
        var groups: [ObjectIdentifier: (group: WordGroup, keys: [String])] = [:]
        var browses: [String] = []

        mutating func add(_ key: String, _ group: WordGroup) {
            if group.words.isEmpty { browses.append(key) } else { groups[ObjectIdentifier(group), default: (group, [])].keys.append(key) }
        }
    }

    /// What a carry found of the answers (`finishCarry`): the keys that go, the browses patched,
    /// and each list it visited as it stays — with the group and the count it read, so a list
    /// changed meanwhile is left as it is, and the generations' turns it read (`turns`: after a
    /// turn, no list it read is the memo's).
    struct Carried {
        var turns = 0
        var gone: [String] = []
        var patched: [(String, Entry)] = []
        var lists: [(generation: Int, group: WordGroup, read: Int, keys: [String])] = []
        var browses: [(generation: Int, read: Int, keys: [String])] = []
    }

    /// The answers of `generations` (the newer first, each with its members; `turns`: the memo's,
    /// read with them) that the chain's `checks` reach: a search's go, a browse's are patched by
    /// the changed books where they can be (`CarryCheck.carried`). Only the groups a check may
    /// reach (`CarryCheck.mayReach`) are read.
    static func carry(_ generations: [(answers: [String: Entry], members: Members)], turns: Int, _ checks: inout [CarryCheck]) -> Carried {
        var carried = Carried(turns: turns)
        func reached(_ entry: Entry, _ key: String) -> Bool { checks.indices.contains { checks[$0].reaches(entry, key) } }
        for (generation, (kept, members)) in generations.enumerated() {
            for member in members.groups.values where checks.indices.contains(where: { checks[$0].mayReach(member.group) }) {
                var stay: [String] = []
                for key in member.keys {
                    guard let entry = kept[key], entry.group === member.group else { continue }
                    if reached(entry, key) { carried.gone.append(key) } else { stay.append(key) }
                }
                carried.lists.append((generation, member.group, member.keys.count, stay))
            }
            var stay: [String] = []
            for key in members.browses {
                guard let entry = kept[key], entry.words.isEmpty else { continue }
                if !reached(entry, key) { stay.append(key); continue }
                if let answer = CarryCheck.carried(entry, key, &checks) {
                    carried.patched.append((key, entry.with(answer)))
                    stay.append(key)
                } else {
                    carried.gone.append(key)
                }
            }
            carried.browses.append((generation, members.browses.count, stay))
        }
        return carried
    }

    /// Applies what a carry found (the memo not changed since, `finishCarry`'s `follows`).
    mutating func apply(_ carried: Carried) {
        for key in carried.gone {
            answers.removeValue(forKey: key)
            older.removeValue(forKey: key)
        }
        // (Where it is now: a request may have moved it to the newer generation meanwhile.)
        for (key, entry) in carried.patched {
            if answers[key] != nil { answers[key] = entry } else if older[key] != nil { older[key] = entry }
        }
        func update(_ generation: Int, _ change: (inout Members) -> Void) {
            guard carried.turns == turns else { return }
            if generation == 0 { change(&members) } else { change(&olderMembers) }
        }
        for list in carried.lists {
            update(list.generation) { members in
                let id = ObjectIdentifier(list.group)
                guard let now = members.groups[id], now.group === list.group, now.keys.count == list.read else { return }
                members.groups[id] = list.keys.isEmpty ? nil : (list.group, list.keys)
            }
        }
        for list in carried.browses {
            update(list.generation) { members in if members.browses.count == list.read { members.browses = list.keys } }
        }
    }

    /// A memo at `version` holding answers loaded from a snapshot, those of the same words
    /// sharing one word group again (each came with its own).
    init(version: Int, loaded: [String: Entry]) {
        self.version = version
        for (key, entry) in loaded {
            keep(Entry(entry.answer, group: group(entry.words, entry.forms), entry.filters, counting: entry.counting), key)
        }
    }
}
