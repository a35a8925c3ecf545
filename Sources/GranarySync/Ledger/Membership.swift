/// The adds of one member of one canonical to-many that no remove has cancelled: an add-wins
/// observed-remove set (M18).
///
/// Removes are not kept: with causal delivery every add a remove saw is already here when it arrives,
/// and an add that comes later is concurrent with or after the remove, which must not cancel it.
struct Membership: Hashable, Sendable, Codable {
    struct Add: Hashable, Sendable, Codable {
        var op: EventMeta
        var orderKey: Double?
    }

    private(set) var adds: [Add] = []

    init() {}

    /// A membership holding `adds` as they are, already in position order (read back from storage).
    init(adds: [Add]) { self.adds = adds }

    var isEmpty: Bool { adds.isEmpty }

    mutating func add(_ add: Add) {
        guard !adds.contains(where: { $0.op.id == add.op.id }) else { return }
        // Kept by position, so that one set of events gives an equal membership in any arrival order.
        adds.insert(add, at: adds.firstIndex { add.op.position < $0.op.position } ?? adds.endIndex)
    }

    mutating func cancel(seenBy remove: EventMeta) {
        adds.removeAll { $0.op.happensBefore(remove) }
    }
}
