/// Everything the ledger knows of one key as the events named it: incarnations, writes, member adds and
/// the fuses that join it to other keys.
///
/// State stays with the key an event named even after a fuse (M22): the projection reads a fused group
/// as one object, and a delete or remove made without knowledge of the fuse can still be limited to the
/// key it named.
struct LedgerObject: Hashable, Sendable, Codable {
    struct Fuse: Hashable, Sendable, Codable {
        var other: ObjectKey
        var op: EventMeta
    }

    var key: ObjectKey
    var incarnations: [Incarnation] = []
    var attributes: [String: Register<SyncValue?>] = [:]
    var toOnes: [String: Register<ObjectKey?>] = [:]
    /// Canonical to-many name → member → its adds.
    var members: [String: [ObjectKey: Membership]] = [:]
    var fuses: [Fuse] = []

    init(key: ObjectKey) { self.key = key }

    /// Records a fuse once, kept by position then other key, so that arrival order leaves no trace.
    mutating func addFuse(_ fuse: Fuse) {
        guard !fuses.contains(fuse) else { return }
        let precedes = { (x: Fuse, y: Fuse) in x.op.position != y.op.position ? x.op.position < y.op.position : x.other < y.other }
        fuses.insert(fuse, at: fuses.firstIndex { precedes(fuse, $0) } ?? fuses.endIndex)
    }

    /// The position of the key's earliest insert, live or not: what makes a key the survivor of its fuse
    /// group (M22). `nil` for a key no insert named.
    var firstPosition: EventPosition? { incarnations.map(\.insert.position).min() }
}
