/// The name of one synced object on every device: its entity and its global ID (M8).
///
/// Global IDs are unique per entity only, so the entity is part of the key. Keys order by global ID
/// bytes, then entity bytes: the tie-break of the fusion rule (M22) and of member order (M19) must not
/// depend on how a platform compares strings.
struct ObjectKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    var entity: String
    var globalID: String

    init(_ entity: String, _ globalID: String) {
        self.entity = entity
        self.globalID = globalID
    }

    static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        if lhs.globalID != rhs.globalID { return lhs.globalID.utf8.lexicographicallyPrecedes(rhs.globalID.utf8) }
        return lhs.entity.utf8.lexicographicallyPrecedes(rhs.entity.utf8)
    }

    var description: String { "\(entity)/\(globalID)" }
}
