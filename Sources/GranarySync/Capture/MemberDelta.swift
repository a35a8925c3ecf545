/// The change of one canonical to-many between what the ledger holds and what the store holds now: the
/// members to add and to remove (M18), and for ordered relationships the members whose index moved,
/// added again with their new index (M19).
///
/// Never the whole set: a set would erase the members a concurrent device added.
struct MemberDelta: Hashable, Sendable {
    var adds: [ObjectChange.MemberAdd] = []
    var removes: [ObjectKey] = []

    /// The delta from `present` (each present member with its order key, from
    /// `LedgerReader.presentAdds`) to `current` (the store's members, in the relationship's order when it
    /// is ordered).
    init(current: [ObjectKey], present: [ObjectKey: Double?], isOrdered: Bool) {
        let members = isOrdered ? current : current.sorted()
        for (index, member) in members.enumerated() {
            let orderKey: Double? = isOrdered ? Double(index) : nil
            if let known = present[member], !isOrdered || known == orderKey { continue }
            adds.append(.init(member: member, orderKey: orderKey))
        }
        let kept = Set(members)
        removes = present.keys.filter { !kept.contains($0) }.sorted()
    }

    var isEmpty: Bool { adds.isEmpty && removes.isEmpty }

    /// Writes the delta into `change` under `relationship`.
    func record(in change: inout ObjectChange, as relationship: String) {
        if !adds.isEmpty { change.memberAdds[relationship] = adds }
        if !removes.isEmpty { change.memberRemoves[relationship] = removes }
    }
}
