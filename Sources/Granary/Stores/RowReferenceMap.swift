import GranaryStorage

/// A hash table from row references (or a row reference and a column, or any pair of integers the
/// store or a context hands out) to integers, for the graph pass of a save and the member sets of
/// inverse maintenance (`MemberIDSet`).
///
/// Swift's `Dictionary` hashes with SipHash under a per-table seed: sound against keys an attacker
/// chooses, and a visible cost when a save that links 100,000 rows looks references up several
/// hundred thousand times. Row references are keys the store handed out, so a multiplicative hash of
/// the two integers is enough here. Open addressing with linear probing, at most half full; removal
/// shifts the run back, so no tombstones build up.
struct RowReferenceMap {
    private struct Slot {
        var high: UInt64
        var low: Int64
        var value: Int
        var isUsed: Bool
    }

    private var slots: [Slot]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 0) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: Slot(high: 0, low: 0, value: 0, isUsed: false), count: size)
        mask = size - 1
    }

    /// The key of a row.
    @inline(__always)
    static func key(_ ref: RowReference) -> (UInt64, Int64) { (UInt64(ref.table.rawValue), ref.key) }

    /// The key of one column of a row.
    @inline(__always)
    static func key(_ ref: RowReference, column: Int) -> (UInt64, Int64) {
        (UInt64(ref.table.rawValue) | UInt64(truncatingIfNeeded: column + 1) << 32, ref.key)
    }

    @inline(__always)
    private func home(_ high: UInt64, _ low: Int64) -> Int {
        var h = (UInt64(bitPattern: low) ^ (high &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 31
        return Int(truncatingIfNeeded: h) & mask
    }

    @inline(__always)
    private func find(_ high: UInt64, _ low: Int64) -> (index: Int, found: Bool) {
        var i = home(high, low)
        while slots[i].isUsed {
            if slots[i].low == low && slots[i].high == high { return (i, true) }
            i = (i + 1) & mask
        }
        return (i, false)
    }

    subscript(ref: RowReference) -> Int? {
        get { self[Self.key(ref)] }
        set { self[Self.key(ref)] = newValue }
    }

    subscript(key: (UInt64, Int64)) -> Int? {
        get {
            let (i, found) = find(key.0, key.1)
            return found ? slots[i].value : nil
        }
        set {
            if let newValue { update(newValue, forKey: key) } else { remove(key) }
        }
    }

    private mutating func update(_ value: Int, forKey key: (UInt64, Int64)) {
        let (i, found) = find(key.0, key.1)
        if found {
            slots[i].value = value
            return
        }
        slots[i] = Slot(high: key.0, low: key.1, value: value, isUsed: true)
        count += 1
        if count * 2 > slots.count { grow() }
    }

    private mutating func remove(_ key: (UInt64, Int64)) {
        var (i, found) = find(key.0, key.1)
        guard found else { return }
        count -= 1
        // Shift later members of the run back into the hole, unless their home lies between the hole
        // and where they sit (then they must stay after it).
        var j = i
        while true {
            j = (j + 1) & mask
            guard slots[j].isUsed else { break }
            let k = home(slots[j].high, slots[j].low)
            let staysPut = i <= j ? (i < k && k <= j) : (i < k || k <= j)
            if staysPut { continue }
            slots[i] = slots[j]
            i = j
        }
        slots[i].isUsed = false
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(high: 0, low: 0, value: 0, isUsed: false), count: old.count * 2)
        mask = slots.count - 1
        for slot in old where slot.isUsed {
            let (i, _) = find(slot.high, slot.low)
            slots[i] = slot
        }
    }
}

/// A set of row references on `RowReferenceMap`: the members of a large to-many column.
struct RowReferenceSet {
    private var map: RowReferenceMap

    init<S: Sequence>(_ members: S) where S.Element == RowReference {
        map = RowReferenceMap(capacity: members.underestimatedCount)
        for member in members { map[member] = 1 }
    }

    func contains(_ member: RowReference) -> Bool { map[member] != nil }
    mutating func insert(_ member: RowReference) { map[member] = 1 }
    mutating func remove(_ member: RowReference) { map[member] = nil }
}
