/// Folds events into a ledger (M8–M23) and holds back those whose causal past is incomplete (M5).
///
/// Every decision `apply` makes depends only on the event and on events that happen before it, all of
/// which causal delivery has already integrated: so each device decides alike, whatever else it holds.
struct LedgerIntegrator: Sendable {
    private(set) var ledger = Ledger()
    private(set) var delivery = CausalDelivery()

    init() {}

    /// Takes `event` into the ledger if its past is integrated, then every waiting event this makes ready,
    /// returning the IDs integrated, in order. An event already integrated or already waiting changes
    /// nothing (M6); one whose past is missing waits, without error (M5).
    @discardableResult
    mutating func receive(_ event: Event) -> [EventID] {
        var integrated: [EventID] = []
        for ready in delivery.accept(event) {
            Self.apply(ready, to: &ledger)
            integrated.append(ready.id)
        }
        return integrated
    }

    /// Joins `baseline` into the ledger (M32), then integrates the waiting events it makes ready,
    /// returning their IDs in order. Events the baseline covers that were waiting are dropped: their
    /// changes are in it.
    @discardableResult
    mutating func join(_ baseline: Baseline) -> [EventID] {
        _ = BaselineJoiner.join(baseline, into: &ledger, integrated: delivery.integrated)
        var integrated: [EventID] = []
        for ready in delivery.cover(baseline.vector, globalCount: baseline.globalCount) {
            Self.apply(ready, to: &ledger)
            integrated.append(ready.id)
        }
        return integrated
    }

    /// The global count of the next local event (M2): one more than any event received, integrated or
    /// waiting.
    var nextGlobalCount: Int64 { delivery.highestGlobalCount + 1 }

    /// Integrates one event whose causal past is already in `ledger`.
    static func apply(_ event: Event, to ledger: inout Ledger) {
        let op = event.meta
        for change in event.changes {
            let key = change.key
            switch change.kind {
            case .insert:
                insert(change, by: op, into: &ledger)
            case .replacingInsert:
                kill(key, by: op, in: &ledger)
                insert(change, by: op, into: &ledger)
            case .update:
                // M12: nothing of this key was seen, so none of its writes could ever be eligible.
                let known = ledger.object(key)?.incarnations.contains { $0.insert.happensBefore(op) } ?? false
                guard known else { continue }
                record(change, by: op, into: &ledger)
            case .delete:
                kill(key, by: op, in: &ledger)
            case let .fuse(survivor):
                guard survivor != key else { continue }
                ledger.update(key) { $0.addFuse(.init(other: survivor, op: op)) }
                ledger.update(survivor) { $0.addFuse(.init(other: key, op: op)) }
            }
        }
    }

    private static func insert(_ change: ObjectChange, by op: EventMeta, into ledger: inout Ledger) {
        ledger.update(change.key) { object in
            if !object.incarnations.contains(where: { $0.insert.id == op.id }) {
                let index = object.incarnations.firstIndex { op.position < $0.insert.position } ?? object.incarnations.endIndex
                object.incarnations.insert(Incarnation(insert: op), at: index)
            }
        }
        record(change, by: op, into: &ledger)
    }

    private static func record(_ change: ObjectChange, by op: EventMeta, into ledger: inout Ledger) {
        ledger.update(change.key) { object in
            for (name, value) in change.attributes { object.attributes[name, default: Register()].record(value, by: op) }
            for (name, value) in change.toOnes { object.toOnes[name, default: Register()].record(value, by: op) }
            for (name, adds) in change.memberAdds {
                for add in adds {
                    object.members[name, default: [:]][add.member, default: Membership()]
                        .add(.init(op: op, orderKey: add.orderKey))
                }
            }
        }
        for (name, members) in change.memberRemoves {
            for member in members { remove(member, from: name, of: change.key, by: op, in: &ledger) }
        }
    }

    /// A delete kills the incarnations it saw, of the key it names or of keys it knew were fused with it
    /// (M9, M22); an insert it did not see survives.
    private static func kill(_ key: ObjectKey, by op: EventMeta, in ledger: inout Ledger) {
        for seen in ledger.keysFused(with: key, seenBy: op) where ledger.object(seen) != nil {
            ledger.update(seen) { object in
                for index in object.incarnations.indices where object.incarnations[index].insert.happensBefore(op) {
                    object.incarnations[index].isKilled = true
                }
            }
        }
    }

    /// A remove cancels the adds it saw, on the owners and members it knew to be the ones named (M18, M22).
    private static func remove(_ member: ObjectKey, from name: String, of owner: ObjectKey, by op: EventMeta,
                               in ledger: inout Ledger) {
        let members = ledger.keysFused(with: member, seenBy: op)
        for seenOwner in ledger.keysFused(with: owner, seenBy: op) {
            guard let object = ledger.object(seenOwner), let memberships = object.members[name] else { continue }
            let touched = members.filter { memberships[$0] != nil }
            guard !touched.isEmpty else { continue }
            ledger.update(seenOwner) { object in
                for seenMember in touched {
                    object.members[name]?[seenMember]?.cancel(seenBy: op)
                    if object.members[name]?[seenMember]?.isEmpty == true { object.members[name]?[seenMember] = nil }
                }
                // No empty relationship entry either: the stored ledger (one row per member) cannot hold
                // one, and a ledger must read back equal to what was saved.
                if object.members[name]?.isEmpty == true { object.members[name] = nil }
            }
        }
    }
}
