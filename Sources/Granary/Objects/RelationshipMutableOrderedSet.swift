import Foundation

extension ManagedObject {
    /// A live, editable view of an ordered to-many relationship: objects inserted, added, replaced or
    /// removed through it change the relationship (and its inverse) in place, as with Core Data's
    /// `mutableOrderedSetValue(forKey:)`.
    ///
    /// Use it where Core Data code edits an ordered relationship through key-value coding, above all in
    /// the accessors Xcode generates (`insertIntoItems(_:at:)`, `removeFromItems(at:)`,
    /// `replaceItems(at:with:)`, `addToItems(_:)`). It never throws: what it cannot do is reported by the
    /// next `save()`, as with `mutableSetValue(forKey:)`. An object it already holds keeps its place.
    public func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        RelationshipMutableOrderedSet(RelationshipEditor(object: self, key: key))
    }
}

/// The `NSMutableOrderedSet` that `mutableOrderedSetValue(forKey:)` returns: it holds no members of its
/// own, but reads and writes the relationship on every call.
final class RelationshipMutableOrderedSet: NSMutableOrderedSet {
    private let editor: RelationshipEditor

    init(_ editor: RelationshipEditor) {
        self.editor = editor
        super.init(capacity: 0)
    }

    required override init(capacity numItems: Int) {
        preconditionFailure("a relationship's mutable ordered set is made only by mutableOrderedSetValue(forKey:)")
    }

    required init(arrayLiteral elements: Any...) {
        preconditionFailure("a relationship's mutable ordered set is made only by mutableOrderedSetValue(forKey:)")
    }

    required init?(coder aDecoder: NSCoder) { nil }

    override var count: Int { editor.members.count }

    override func object(at idx: Int) -> Any { editor.members[idx] }

    override func index(of object: Any) -> Int {
        guard let wanted = Self.object(object) else { return NSNotFound }
        return editor.members.firstIndex { $0 === wanted } ?? NSNotFound
    }

    override func contains(_ object: Any) -> Bool { index(of: object) != NSNotFound }

    override func insert(_ object: Any, at idx: Int) { insert([object], at: IndexSet(integer: idx)) }

    override func insert(_ objects: [Any], at indexes: IndexSet) {
        let inserted = objects.compactMap(editor.managed)
        editor.edit { members in
            // Objects already members keep their places, as in Foundation's ordered set.
            let fresh = inserted.filter { new in !members.contains { $0 === new } }
            for (object, index) in zip(fresh, indexes) { members.insert(object, at: Swift.min(index, members.count)) }
        }
    }

    override func removeObject(at idx: Int) { removeObjects(at: IndexSet(integer: idx)) }

    override func removeObjects(at indexes: IndexSet) {
        editor.edit { members in
            for index in indexes.reversed() where index < members.count { members.remove(at: index) }
        }
    }

    override func replaceObject(at idx: Int, with object: Any) { replaceObjects(at: IndexSet(integer: idx), with: [object]) }

    override func replaceObjects(at indexes: IndexSet, with objects: [Any]) {
        let replacements = objects.compactMap(editor.managed)
        editor.edit { members in
            for (index, object) in zip(indexes, replacements) where index < members.count { members[index] = object }
        }
    }

    override func add(_ object: Any) { addObjects(from: [object]) }

    override func addObjects(from array: [Any]) {
        let added = array.compactMap(editor.managed)
        editor.edit { $0 += added }
    }

    override func remove(_ object: Any) { removeMembers([object]) }

    override func union(_ other: NSOrderedSet) { addObjects(from: other.array) }

    override func minus(_ other: NSOrderedSet) { removeMembers(other.array) }

    override func removeAllObjects() { editor.edit { $0 = [] } }

    private func removeMembers(_ objects: [Any]) {
        let removed = Set(objects.compactMap { Self.object($0).map(ObjectIdentifier.init) })
        editor.edit { members in members = members.filter { !removed.contains(ObjectIdentifier($0)) } }
    }

    private static func object(_ value: Any) -> ManagedObject? { ((value as? AnyHashable)?.base ?? value) as? ManagedObject }
}
