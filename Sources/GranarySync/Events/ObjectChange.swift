/// What one event does to one object: the unit the ledger integrates.
///
/// Updates carry only what changed in the capture window, and to-many changes are member adds and
/// removes, never the whole set (M18): a set would erase a concurrent device's additions.
struct ObjectChange: Hashable, Sendable, Codable {
    enum Kind: Hashable, Sendable, Codable {
        /// A new incarnation of the key (M8, M11), holding every synced attribute and canonical to-one.
        case insert
        /// A delete and a re-insert of the key in one capture window (M13).
        case replacingInsert
        case update
        case delete
        /// The key is one object with `survivor` from now on (M22); which of the two represents the pair
        /// is decided by the ledger, so the direction recorded here is informational.
        case fuse(survivor: ObjectKey)
    }

    /// One member added to a canonical to-many; ordered relationships carry the member's index on the
    /// recording device as its order key (M19).
    struct MemberAdd: Hashable, Sendable, Codable {
        var member: ObjectKey
        var orderKey: Double?
    }

    var key: ObjectKey
    var kind: Kind
    var attributes: [String: SyncValue?] = [:]
    /// Canonical to-ones by relationship name; `nil` clears the relationship.
    var toOnes: [String: ObjectKey?] = [:]
    var memberAdds: [String: [MemberAdd]] = [:]
    var memberRemoves: [String: [ObjectKey]] = [:]
}
