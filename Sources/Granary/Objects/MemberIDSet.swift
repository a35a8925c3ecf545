/// The members of a large to-many relationship, for the membership tests of inverse maintenance.
///
/// An import that moves a hundred thousand objects between a thousand owners tests, adds and removes
/// a member of an owner's relationship for each move. `Set` hashes every ID with SipHash, which is
/// made for keys an attacker chooses, and those hashes were most of the moves' cost. IDs are handed
/// out by the context and the store, so the multiplicative hash of `RowReferenceMap` over the scope's
/// address and the number is enough.
struct MemberIDSet {
    private var map: RowReferenceMap

    init<S: Sequence>(_ members: S) where S.Element == ManagedObjectID {
        map = RowReferenceMap(capacity: members.underestimatedCount)
        for member in members { map[Self.key(member)] = 1 }
    }

    @inline(__always)
    private static func key(_ id: ManagedObjectID) -> (UInt64, Int64) {
        (UInt64(UInt(bitPattern: ObjectIdentifier(id.scope))), id.number)
    }

    var count: Int { map.count }

    func contains(_ id: ManagedObjectID) -> Bool { map[Self.key(id)] != nil }

    /// Adds `id`; returns whether it was not there already.
    @discardableResult
    mutating func insert(_ id: ManagedObjectID) -> Bool {
        let before = map.count
        map[Self.key(id)] = 1
        return map.count > before
    }

    mutating func remove(_ id: ManagedObjectID) { map[Self.key(id)] = nil }
}
