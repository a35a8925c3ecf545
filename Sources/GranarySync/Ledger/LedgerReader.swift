/// Reads a ledger as objects: fuse groups with their representative (M22), existence (M9), eligibility
/// (M10) and winning writes (M14, M16, M19), for `Projection`.
///
/// Eligibility is decided here, at reading, and never stored: whether an incarnation is alive can change
/// with every delete, and a stored answer would depend on the order the events arrived in.
struct LedgerReader {
    let ledger: Ledger
    /// Each fuse group once, as its sorted keys, in key order.
    let groups: [[ObjectKey]]
    private let groupOfKey: [ObjectKey: [ObjectKey]]

    init(ledger: Ledger) {
        self.ledger = ledger
        groupOfKey = ledger.fuseGroups()
        var seen: Set<ObjectKey> = []
        var groups: [[ObjectKey]] = []
        for key in groupOfKey.keys.sorted() where !seen.contains(key) {
            let group = groupOfKey[key] ?? [key]
            seen.formUnion(group)
            groups.append(group)
        }
        self.groups = groups
    }

    func group(of key: ObjectKey) -> [ObjectKey] { groupOfKey[key] ?? [key] }

    /// The key of the group with the earliest first insert, the lowest key on a tie: every device picks
    /// the same one, whatever it learnt first.
    func representative(of group: [ObjectKey]) -> ObjectKey? {
        group.compactMap { key in ledger.object(key)?.firstPosition.map { (key, $0) } }
            .min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }?.0
    }

    private func liveIncarnations(_ group: [ObjectKey]) -> [EventMeta] {
        group.flatMap { ledger.object($0)?.incarnations.filter { !$0.isKilled }.map(\.insert) ?? [] }
    }

    func exists(_ group: [ObjectKey]) -> Bool { !liveIncarnations(group).isEmpty }

    /// The representative of `key`'s group if that object exists: what a reference to `key` reads as (M16).
    func existingRepresentative(_ key: ObjectKey) -> ObjectKey? {
        let group = group(of: key)
        return exists(group) ? representative(of: group) : nil
    }

    /// An op counts when its own event holds a live incarnation or a live incarnation happens before it.
    private func eligibility(_ group: [ObjectKey]) -> (EventMeta) -> Bool {
        let live = liveIncarnations(group)
        return { op in live.contains { $0.id == op.id || $0.happensBefore(op) } }
    }

    /// The eligible write with the highest position among the group's keys; the lower key wins when one
    /// event wrote two keys that were fused later.
    func winner<Value>(_ group: [ObjectKey], _ candidates: (LedgerObject) -> [Register<Value>.Write]) -> Register<Value>.Write? {
        let isEligible = eligibility(group)
        var best: (write: Register<Value>.Write, key: ObjectKey)?
        for key in group {
            guard let object = ledger.object(key) else { continue }
            for write in candidates(object) where isEligible(write.op) {
                if let current = best, !Self.beats(write.op.position, key, current.write.op.position, current.key) { continue }
                best = (write, key)
            }
        }
        return best?.write
    }

    /// The present members of a canonical to-many (M18), ordered by the order key of each member's
    /// winning add and then by key (M19), or by key alone.
    func members(of group: [ObjectKey], in name: String, ordered: Bool) -> [ObjectKey] {
        let best = presentAdds(of: group, in: name)
        guard ordered else { return best.keys.sorted() }
        return best.map { ($0.key, $0.value ?? 0) }
            .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map(\.0)
    }

    /// The present members of a canonical to-many, each with the order key of its winning add (M19):
    /// what capture compares a store's ordered relationship with to find the members that moved.
    func presentAdds(of group: [ObjectKey], in name: String) -> [ObjectKey: Double?] {
        let isEligible = eligibility(group)
        var best: [ObjectKey: (add: Membership.Add, owner: ObjectKey, member: ObjectKey)] = [:]
        for owner in group {
            for (member, membership) in ledger.object(owner)?.members[name] ?? [:] {
                guard let present = existingRepresentative(member) else { continue }
                for add in membership.adds where isEligible(add.op) {
                    if let current = best[present] {
                        let position = add.op.position, other = current.add.op.position
                        let wins = position != other ? position > other
                            : (owner != current.owner ? owner < current.owner : member < current.member)
                        guard wins else { continue }
                    }
                    best[present] = (add, owner, member)
                }
            }
        }
        return best.mapValues(\.add.orderKey)
    }

    private static func beats(_ position: EventPosition, _ key: ObjectKey, _ other: EventPosition, _ otherKey: ObjectKey) -> Bool {
        position != other ? position > other : key < otherKey
    }
}
