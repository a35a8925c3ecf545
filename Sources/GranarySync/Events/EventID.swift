/// The identity of an event: the store that made it and its revision there (M6).
///
/// Two copies of one event (downloaded twice, or from a baseline and a file) have one ID, which is how
/// integrating the second copy is recognised and skipped.
struct EventID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    var store: StoreID
    var revision: Int64

    static func < (lhs: EventID, rhs: EventID) -> Bool {
        lhs.store != rhs.store ? lhs.store < rhs.store : lhs.revision < rhs.revision
    }

    var description: String { "\(store)#\(revision)" }
}
