/// What the merge rules need to know of an event besides its changes: who made it, where it stands in
/// the global order, and what its device had integrated (the terms of MergeSemantics.md).
///
/// The ledger keeps one with every write, add and incarnation, because deciding eligibility (M10) and
/// cancellation (M18) asks "happens before" long after the event itself was integrated.
struct EventMeta: Hashable, Sendable, Codable, CustomStringConvertible {
    var id: EventID
    var globalCount: Int64
    /// For each other store, the highest revision integrated when the event was made; the own store's
    /// entry is ignored, its earlier revisions being implied.
    var vector: RevisionVector

    init(id: EventID, globalCount: Int64, vector: RevisionVector) {
        self.id = id
        self.globalCount = globalCount
        var others = vector
        others[id.store] = 0
        self.vector = others
    }

    var position: EventPosition { EventPosition(globalCount: globalCount, store: id.store) }

    /// Whether this event happens before `other`: an earlier revision of the same store, or one that
    /// `other`'s vector covers.
    func happensBefore(_ other: EventMeta) -> Bool {
        if id.store == other.id.store { return id.revision < other.id.revision }
        return other.vector[id.store] >= id.revision
    }

    var description: String { "\(id) at \(position)" }
}
