/// The folded history of every integrated event: per key, its incarnations, registers, member adds and
/// fuses (§6 of the plan). The store is its `Projection`.
///
/// Each part is a merge that commutes for causally delivered events, so any causal order of one set of
/// events builds an equal ledger (M7).
struct Ledger: Hashable, Sendable {
    private(set) var objects: [ObjectKey: LedgerObject] = [:]

    init() {}

    func object(_ key: ObjectKey) -> LedgerObject? { objects[key] }

    mutating func update(_ key: ObjectKey, _ body: (inout LedgerObject) -> Void) {
        var object = objects[key] ?? LedgerObject(key: key)
        body(&object)
        objects[key] = object
    }

    /// The keys joined to `key` by fuses that happen before `op`: what a device making `op` knew to be one
    /// object with `key` (M22). Always holds `key`.
    func keysFused(with key: ObjectKey, seenBy op: EventMeta) -> [ObjectKey] {
        var found: Set<ObjectKey> = [key]
        var frontier = [key]
        while let next = frontier.popLast() {
            for fuse in objects[next]?.fuses ?? [] where fuse.op.happensBefore(op) && !found.contains(fuse.other) {
                found.insert(fuse.other)
                frontier.append(fuse.other)
            }
        }
        return found.sorted()
    }

    /// Every key in fuse groups, grouped: each key with the sorted keys of its group, by all fuses.
    func fuseGroups() -> [ObjectKey: [ObjectKey]] {
        var groups: [ObjectKey: [ObjectKey]] = [:]
        for key in objects.keys.sorted() where groups[key] == nil {
            var found: Set<ObjectKey> = [key]
            var frontier = [key]
            while let next = frontier.popLast() {
                for fuse in objects[next]?.fuses ?? [] where !found.contains(fuse.other) {
                    found.insert(fuse.other)
                    frontier.append(fuse.other)
                }
            }
            let members = found.sorted()
            for member in members { groups[member] = members }
        }
        return groups
    }
}
