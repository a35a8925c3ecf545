/// The members of a large to-many relationship, for the membership tests of inverse maintenance.
///
/// An import that moves a hundred thousand objects between a thousand owners tests, adds and removes
/// a member of an owner's relationship for each move. `Set` hashes every ID with SipHash, which is
/// made for keys an attacker chooses, and those hashes were most of the moves' cost. IDs are handed
/// out by the context and the store, so a multiplicative hash of the scope's address and the number
/// is enough (as in `RowReferenceMap`). Open addressing with linear probing, at most half full;
/// removal shifts the run back, so no tombstones build up.
struct MemberIDSet {
    private struct Slot {
        /// The scope's address; 0 for an empty slot (no scope lives at address 0).
        var scope: UInt
        var number: Int64
    }

    private var slots: [Slot]
    private var mask: Int
    private(set) var count = 0

    init<S: Sequence>(_ members: S) where S.Element == ManagedObjectID {
        var size = 16
        while size < members.underestimatedCount * 2 { size <<= 1 }
        slots = Array(repeating: Slot(scope: 0, number: 0), count: size)
        mask = size - 1
        for member in members { insert(member) }
    }

    @inline(__always)
    private static func key(_ id: ManagedObjectID) -> (UInt, Int64) {
        (UInt(bitPattern: ObjectIdentifier(id.scope)), id.number)
    }

    @inline(__always)
    private func home(_ scope: UInt, _ number: Int64) -> Int {
        var h = (UInt64(bitPattern: number) ^ (UInt64(scope) &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 31
        return Int(truncatingIfNeeded: h) & mask
    }

    /// Where `id` is, or the empty slot where it would go.
    @inline(__always)
    private func find(_ scope: UInt, _ number: Int64) -> (index: Int, found: Bool) {
        var i = home(scope, number)
        while slots[i].scope != 0 {
            if slots[i].number == number && slots[i].scope == scope { return (i, true) }
            i = (i + 1) & mask
        }
        return (i, false)
    }

    func contains(_ id: ManagedObjectID) -> Bool {
        let (scope, number) = Self.key(id)
        return find(scope, number).found
    }

    /// Adds `id`; returns whether it was not there already.
    @discardableResult
    mutating func insert(_ id: ManagedObjectID) -> Bool {
        let (scope, number) = Self.key(id)
        let (i, found) = find(scope, number)
        if found { return false }
        slots[i] = Slot(scope: scope, number: number)
        count += 1
        if count * 2 > slots.count { grow() }
        return true
    }

    mutating func remove(_ id: ManagedObjectID) {
        let (scope, number) = Self.key(id)
        var (i, found) = find(scope, number)
        guard found else { return }
        count -= 1
        // Shift later members of the run back into the hole, unless their home lies between the hole
        // and where they sit (then they must stay after it).
        var j = i
        while true {
            j = (j + 1) & mask
            guard slots[j].scope != 0 else { break }
            let k = home(slots[j].scope, slots[j].number)
            let staysPut = i <= j ? (i < k && k <= j) : (i < k || k <= j)
            if staysPut { continue }
            slots[i] = slots[j]
            i = j
        }
        slots[i].scope = 0
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(scope: 0, number: 0), count: old.count * 2)
        mask = slots.count - 1
        for slot in old where slot.scope != 0 {
            slots[find(slot.scope, slot.number).index] = slot
        }
    }
}
