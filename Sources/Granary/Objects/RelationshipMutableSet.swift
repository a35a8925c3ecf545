import Foundation

extension ManagedObject {
    /// A live, editable view of an unordered to-many relationship: objects added to it are linked to this
    /// object (and the inverse kept), objects removed are unlinked, as with Core Data's
    /// `mutableSetValue(forKey:)`.
    ///
    /// Use it where Core Data code edits a relationship through key-value coding, above all in the
    /// accessors Xcode generates (`addToTags(_:)`, `removeFromTags(_:)`). It never throws, as in Core
    /// Data: an unknown key, a value that is not a managed object, or an object of another context is
    /// kept out and reported by the next `save()` (as `ContextError.unknownKey`, `.wrongValueType` or
    /// `.foreignObject`).
    public func mutableSetValue(forKey key: String) -> NSMutableSet {
        RelationshipMutableSet(RelationshipEditor(object: self, key: key))
    }
}

/// Reads and writes one to-many relationship of one object for the mutable proxies, reporting what it
/// cannot do to the next save.
struct RelationshipEditor {
    let object: ManagedObject
    let key: String

    /// The relationship's index, when the key names a to-many relationship.
    private var index: Int? {
        guard let i = object.layout.indexByName[key], case .toMany = object.layout.kinds[i] else { return nil }
        return i
    }

    /// The members now, in order.
    var members: [ManagedObject] { index.map(object.members(at:)) ?? [] }

    /// `value` as a managed object, or nil (reported) when it is not one.
    func managed(_ value: Any) -> ManagedObject? {
        let unwrapped = (value as? AnyHashable)?.base ?? value
        if let object = unwrapped as? ManagedObject { return object }
        object.reject(ContextError.wrongValueType(entity: object.entity.name, key: key, value: SafeDescription.of(unwrapped),
                                                  reason: "expected a managed object"))
        return nil
    }

    /// Edits the members and writes them back in one change.
    func edit(_ body: (inout [ManagedObject]) -> Void) {
        guard let i = index else {
            if object.layout.indexByName[key] == nil {
                object.reject(ContextError.unknownKey(entity: object.entity.name, key: key))
            } else {
                object.reject(ContextError.invalidRequest(entity: object.entity.name, reason: "'\(key)' is not a to-many relationship"))
            }
            return
        }
        var members = object.members(at: i)
        body(&members)
        do {
            try object.setToMany(members, at: i)
        } catch {
            object.reject(error)
        }
    }
}

/// The `NSMutableSet` that `mutableSetValue(forKey:)` returns: it holds no members of its own, but reads
/// and writes the relationship on every call, so it stays right however else the relationship changes.
final class RelationshipMutableSet: NSMutableSet {
    private let editor: RelationshipEditor

    init(_ editor: RelationshipEditor) {
        self.editor = editor
        super.init(capacity: 0)
    }

    required init(capacity numItems: Int) {
        preconditionFailure("a relationship's mutable set is made only by mutableSetValue(forKey:)")
    }

    required init?(coder aDecoder: NSCoder) { nil }

    override var count: Int { editor.members.count }

    override func member(_ object: Any) -> Any? {
        guard let wanted = (object as? AnyHashable)?.base as? ManagedObject ?? object as? ManagedObject else { return nil }
        return editor.members.first { $0 === wanted }
    }

    override func contains(_ anObject: Any) -> Bool { member(anObject) != nil }

    override var allObjects: [Any] { editor.members }

    override func objectEnumerator() -> NSEnumerator { NSArray(array: editor.members).objectEnumerator() }

    override func add(_ object: Any) { addObjects(from: [object]) }

    override func remove(_ object: Any) { removeMembers([object]) }

    override func addObjects(from array: [Any]) {
        let added = array.compactMap(editor.managed)
        editor.edit { $0 += added }
    }

    override func union(_ otherSet: Set<AnyHashable>) { addObjects(from: Array(otherSet)) }

    override func minus(_ otherSet: Set<AnyHashable>) { removeMembers(Array(otherSet)) }

    override func intersect(_ otherSet: Set<AnyHashable>) {
        let kept = Set(otherSet.compactMap { ($0.base as? ManagedObject).map(ObjectIdentifier.init) })
        editor.edit { members in members = members.filter { kept.contains(ObjectIdentifier($0)) } }
    }

    override func setSet(_ otherSet: Set<AnyHashable>) {
        let members = otherSet.compactMap { editor.managed($0) }
        editor.edit { $0 = members }
    }

    override func removeAllObjects() { editor.edit { $0 = [] } }

    private func removeMembers(_ objects: [Any]) {
        let removed = Set(objects.compactMap { ((($0 as? AnyHashable)?.base ?? $0) as? ManagedObject).map(ObjectIdentifier.init) })
        editor.edit { members in members = members.filter { !removed.contains(ObjectIdentifier($0)) } }
    }
}
