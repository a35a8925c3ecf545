/// What one event changed in a context, as undo needs it: for each object, the value each changed
/// property had before the event's first change of it, and whether the object was alive before the
/// event first inserted or deleted it.
///
/// Before-images rather than a list of inverse operations: a property changed many times in one event
/// (an import linking a thousand employees to one department, one at a time) is kept once, and putting
/// the images back restores both ends of every relationship, whatever delete rules and inverse
/// maintenance did in between, without running them again. Undoing a record is itself a change, whose
/// record (the values and states it replaced) is the redo.
struct UndoRecord {
    struct Entry {
        let object: ManagedObject
        /// Whether the object was alive in the context (inserted, or registered and not deleted) before
        /// the event first inserted or deleted it; nil when the event did neither.
        var existed: Bool?
        /// Property index to value, relationships as IDs (`ManagedObject.values`' form).
        var values: [Int: Any?] = [:]
    }

    private(set) var entries: [Entry] = []
    private var indexOf: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { entries.isEmpty }

    func hasImage(of object: ManagedObject, at i: Int) -> Bool {
        guard let k = indexOf[ObjectIdentifier(object)] else { return false }
        return entries[k].values.index(forKey: i) != nil
    }

    /// Keeps `value` as the property's value before the event, unless an earlier change of the event
    /// kept one already.
    mutating func record(_ object: ManagedObject, at i: Int, before value: Any?) {
        let k = entryIndex(object)
        if entries[k].values.index(forKey: i) == nil { entries[k].values.updateValue(value, forKey: i) }
    }

    /// Keeps whether the object was alive before the event, unless an earlier insert or delete of the
    /// event kept it already.
    mutating func record(_ object: ManagedObject, existed: Bool) {
        let k = entryIndex(object)
        if entries[k].existed == nil { entries[k].existed = existed }
    }

    /// Drops the images of properties whose changes are not to be undone (what `awakeFromFetch()` sets),
    /// and the object's entry if nothing else is left in it: a record is registered only when not empty.
    mutating func forget(_ object: ManagedObject, at indexes: PropertyIndexSet) {
        guard let k = indexOf[ObjectIdentifier(object)] else { return }
        for i in indexes { entries[k].values.removeValue(forKey: i) }
        guard entries[k].values.isEmpty && entries[k].existed == nil else { return }
        // The last entry takes the freed place: the order of entries means nothing.
        indexOf[ObjectIdentifier(object)] = nil
        let last = entries.removeLast()
        if k < entries.count {
            entries[k] = last
            indexOf[ObjectIdentifier(last.object)] = k
        }
    }

    private mutating func entryIndex(_ object: ManagedObject) -> Int {
        if let k = indexOf[ObjectIdentifier(object)] { return k }
        entries.append(Entry(object: object))
        indexOf[ObjectIdentifier(object)] = entries.count - 1
        return entries.count - 1
    }
}
