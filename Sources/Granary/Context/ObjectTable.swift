/// Objects by key, kept in slots in the order they came: a context's registry and its changed objects.
///
/// A `Dictionary` of objects visits them in hash order. Dropping a context of 100,000 objects, or
/// finishing a save of them, then reaches each object at a random address, and every one of those
/// reaches is a cache miss. Here a `SlotMap` holds only slot numbers (a dictionary, or for the registry
/// an `IDSlotMap`), and the objects sit in an array in arrival order (a fetch's objects are allocated in
/// that order too), so walking and releasing them goes through memory in order and the hardware
/// prefetcher keeps up. Freed slots are reused; an emptied table starts over.
struct ObjectTable<Map: SlotMap> {
    typealias Key = Map.Key
    private var slotOf = Map()
    private var slots: [ManagedObject?] = []
    private var freeSlots: [Int] = []

    var count: Int { slotOf.count }
    var isEmpty: Bool { slotOf.count == 0 }

    /// The objects in slot order.
    var values: some Sequence<ManagedObject> { slots.lazy.compactMap { $0 } }

    subscript(key: Key) -> ManagedObject? {
        get { slotOf[key].flatMap { slots[$0] } }
        set {
            if let newValue { insert(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    mutating func insert(_ object: ManagedObject, forKey key: Key) {
        // One hash for the common case, a new key: claim a slot, then file it, and give the slot back
        // only if the key was there already.
        let slot = freeSlots.popLast() ?? slots.count
        if let existing = slotOf.updateValue(slot, forKey: key) {
            _ = slotOf.updateValue(existing, forKey: key)
            slots[existing] = object
            if slot < slots.count { freeSlots.append(slot) }
            return
        }
        if slot == slots.count { slots.append(object) } else { slots[slot] = object }
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> ManagedObject? {
        guard let slot = slotOf.removeValue(forKey: key) else { return nil }
        let object = slots[slot]
        free(slot)
        return object
    }

    /// Files the object under a new key, in the same slot (a saved object's permanent ID).
    mutating func rekey(_ old: Key, to new: Key) {
        guard let slot = slotOf.removeValue(forKey: old) else { return }
        if let displaced = slotOf.updateValue(slot, forKey: new) { free(displaced) }
    }

    /// The object under `key`, unless the table is all that holds it: then it is removed, and `nil`
    /// returned (what a weakly held table would already have lost).
    mutating func liveObject(forKey key: Key) -> ManagedObject? {
        guard let slot = slotOf.lookUp(key) else { return nil }
        if isKnownUniquelyReferenced(&slots[slot]) {
            _ = slotOf.removeValue(forKey: key)
            free(slot)
            return nil
        }
        return slots[slot]
    }

    /// The object under `key`, and whether the table is all that holds it, for a caller that decides
    /// for itself whether to keep such an object (`liveObject(forKey:)` never does).
    mutating func entry(forKey key: Key) -> (object: ManagedObject, isHeldOnlyHere: Bool)? {
        guard let slot = slotOf.lookUp(key) else { return nil }
        let isHeldOnlyHere = isKnownUniquelyReferenced(&slots[slot])
        return slots[slot].map { ($0, isHeldOnlyHere) }
    }

    /// Removes every object that only the table holds. In place: when every object is still held (a
    /// fetch building its result) nothing is rebuilt, only scanned.
    mutating func removeObjectsHeldOnlyHere(keyOf: (ManagedObject) -> Key) {
        var survivors = 0
        for slot in slots.indices where slots[slot] != nil && !isKnownUniquelyReferenced(&slots[slot]) { survivors += 1 }
        if survivors == count && !slotOf.isSparse { return }
        if survivors < count / 2 || slotOf.isSparse {
            // Mostly dead (a context whose fetched objects were let go): refiling the few survivors in a
            // new table costs less than removing every dead key from the map, one hash each. A sparse
            // map (an `IDSlotMap` keeps its emptied blocks) is refiled too, to give that room back.
            // The table keeps its room (up to a bound, so that a context that once held a large
            // result does not keep that much): one that refills after each sweep would otherwise
            // rehash every key on each doubling of its dictionary.
            var kept = ObjectTable()
            kept.reserveCapacity(Swift.max(survivors, Swift.min(count, 4096)))
            for slot in slots.indices where slots[slot] != nil && !isKnownUniquelyReferenced(&slots[slot]) {
                kept.insert(slots[slot]!, forKey: keyOf(slots[slot]!))
            }
            self = kept
            return
        }
        for slot in slots.indices where slots[slot] != nil && isKnownUniquelyReferenced(&slots[slot]) {
            _ = slotOf.removeValue(forKey: keyOf(slots[slot]!))
            slots[slot] = nil
            freeSlots.append(slot)
        }
        if slotOf.count == 0 { removeAll() }
    }

    mutating func removeAll() {
        self = ObjectTable()
    }

    /// Room for `n` objects. Grows geometrically: `Array.reserveCapacity` allocates exactly what it is
    /// asked for, so a context reserving room for each fetch's objects would otherwise copy the whole
    /// slot array on every fetch.
    mutating func reserveCapacity(_ n: Int) {
        guard n > slots.capacity else { return }
        let target = Swift.max(n, 2 * slots.capacity)
        slotOf.reserveCapacity(target)
        slots.reserveCapacity(target)
    }

    private mutating func free(_ slot: Int) {
        slots[slot] = nil
        if slotOf.count == 0 {
            slots.removeAll(keepingCapacity: true)
            freeSlots.removeAll(keepingCapacity: true)
        } else {
            freeSlots.append(slot)
        }
    }
}
