/// A to-many relationship's members on their way to the reader, before they are put in the collection
/// handed out.
///
/// The members are attached to batch faulters only once that collection exists, in the order it
/// iterates (see `BatchFaulter`): a `Set`'s order depends on the instance (each set seeds its hashes
/// with its own storage), so batches formed in the order of a `Set<ManagedObject>` are in no useful
/// order for the `Set<Employee>` a typed property hands out, and a walk over it then loaded every batch
/// before it was half done. A typed read also builds its collection straight from the members, where
/// casting a `Set<ManagedObject>` built it twice.
struct ToManyMembers {
    let objects: [ManagedObject]
    let isOrdered: Bool
    let context: ManagedObjectContext?

    /// The members as `value(forKey:)` hands them out: `[ManagedObject]` for an ordered relationship,
    /// `Set<ManagedObject>` otherwise.
    func handedOut() -> Any {
        if isOrdered {
            attach { objects.forEach($0) }
            return objects
        }
        let members = Set(objects)
        attach { members.forEach($0) }
        return members
    }

    /// The members in a collection of the type a `@Managed` property declares. Members that are not
    /// of its element type are left out (a cast of the whole collection failed, and the property read
    /// as empty).
    func handedOut<Collection: ManagedMemberCollection>(as type: Collection.Type) -> Collection {
        let collection = Collection(managedMembers: objects)
        attach(collection.forEachManagedMember)
        return collection
    }

    /// Attaches the members that are faults not yet in a batch, in the order `visit` gives them.
    private func attach(_ visit: ((ManagedObject) -> Void) -> Void) {
        guard let context else { return }
        var faults: [ManagedObject] = []
        visit { if $0.faultState && $0.batch == nil { faults.append($0) } }
        BatchFaulter.attachMembers(faults, context: context)
    }
}

/// The collections a to-many relationship can be handed out as: a set or an array of the destination's
/// class (or of `ManagedObject`).
protocol ManagedMemberCollection {
    /// The collection of the objects that are of its element type, in the order given for an array.
    init(managedMembers: [ManagedObject])
    /// Visits the elements in the order iterating the collection does.
    func forEachManagedMember(_ body: (ManagedObject) -> Void)
}

extension Set: ManagedMemberCollection where Element: ManagedObject {
    init(managedMembers: [ManagedObject]) {
        self.init(minimumCapacity: managedMembers.count)
        for object in managedMembers {
            // Objects of exactly the element class (nearly all) skip the dynamic cast.
            if type(of: object) == Element.self {
                insert(unsafeDowncast(object, to: Element.self))
            } else if let member = object as? Element {
                insert(member)
            }
        }
    }

    func forEachManagedMember(_ body: (ManagedObject) -> Void) {
        for member in self { body(member) }
    }
}

extension Array: ManagedMemberCollection where Element: ManagedObject {
    init(managedMembers: [ManagedObject]) {
        self.init()
        reserveCapacity(managedMembers.count)
        for object in managedMembers {
            if type(of: object) == Element.self {
                append(unsafeDowncast(object, to: Element.self))
            } else if let member = object as? Element {
                append(member)
            }
        }
    }

    func forEachManagedMember(_ body: (ManagedObject) -> Void) {
        for member in self { body(member) }
    }
}
