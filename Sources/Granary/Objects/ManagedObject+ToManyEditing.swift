import Foundation

/// Typed editing of to-many relationships, one member at a time, in place of the accessors Xcode
/// generates for Core Data classes (`addToEmployees(_:)`, `removeFromEmployees(_:)`,
/// `insertIntoBadges(_:at:)`, `removeFromBadges(at:)`):
///
/// ```swift
/// try company.add(alice, to: \.employees)
/// try company.remove(bob, from: \.employees)
/// try alice.insert(badge, at: 0, into: \.badges)
/// ```
///
/// Unlike `company.employees.insert(alice)`, which reads the whole relationship into a `Set` of
/// objects and writes it back, these change one member: the other members are not touched (faults
/// stay faults), and a member test on a large relationship is a hash lookup. The inverse side is kept
/// as for any relationship write. Every managed object class has them.
public protocol ToManyRelationshipEditing: AnyObject {}

extension ManagedObject: ToManyRelationshipEditing {}

extension ToManyRelationshipEditing where Self: ManagedObject {
    /// Adds `member` to an unordered to-many relationship; nothing happens if it is there already.
    /// - Throws: `ContextError.unknownKey` for a key path that is not a to-many relationship of the
    ///   entity; `.foreignObject` for a member of another context.
    public func add<Member: ManagedObject>(_ member: Member, to relationship: ReferenceWritableKeyPath<Self, Set<Member>>) throws {
        try addMembers([member], at: toManyIndex(relationship))
    }

    /// Adds every member of `members` (each once) to an unordered to-many relationship.
    /// - Throws: as `add(_:to:)`; nothing is added when a member is refused.
    public func add<Member: ManagedObject>(contentsOf members: some Sequence<Member>,
                                           to relationship: ReferenceWritableKeyPath<Self, Set<Member>>) throws {
        try addMembers(Array(members), at: toManyIndex(relationship))
    }

    /// Removes `member` from an unordered to-many relationship; nothing happens if it is not there.
    /// - Throws: `ContextError.unknownKey` for a key path that is not a to-many relationship.
    public func remove<Member: ManagedObject>(_ member: Member, from relationship: ReferenceWritableKeyPath<Self, Set<Member>>) throws {
        try removeMembers([member], at: toManyIndex(relationship))
    }

    /// Removes every member of `members` from an unordered to-many relationship.
    /// - Throws: as `remove(_:from:)`.
    public func remove<Member: ManagedObject>(contentsOf members: some Sequence<Member>,
                                              from relationship: ReferenceWritableKeyPath<Self, Set<Member>>) throws {
        try removeMembers(Array(members), at: toManyIndex(relationship))
    }

    /// Appends `member` to an ordered to-many relationship; nothing happens if it is there already.
    /// - Throws: as `add(_:to:)`.
    public func add<Member: ManagedObject>(_ member: Member, to relationship: ReferenceWritableKeyPath<Self, [Member]>) throws {
        try addMembers([member], at: toManyIndex(relationship))
    }

    /// Inserts `member` at `index` of an ordered to-many relationship, moving it there if it is a
    /// member already (an ordered relationship holds each object once).
    /// - Throws: as `add(_:to:)`; `ContextError.invalidRequest` for an index past the end.
    public func insert<Member: ManagedObject>(_ member: Member, at index: Int, into relationship: ReferenceWritableKeyPath<Self, [Member]>) throws {
        let i = try toManyIndex(relationship)
        var members = self.members(at: i)
        members.removeAll { $0 === member }
        guard (0...members.count).contains(index) else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "index \(index) is past the end of '\(layout.names[i])' (\(members.count) members)")
        }
        members.insert(member, at: index)
        try setToMany(members, at: i)
    }

    /// Removes `member` from an ordered to-many relationship; nothing happens if it is not there.
    /// - Throws: `ContextError.unknownKey` for a key path that is not a to-many relationship.
    public func remove<Member: ManagedObject>(_ member: Member, from relationship: ReferenceWritableKeyPath<Self, [Member]>) throws {
        try removeMembers([member], at: toManyIndex(relationship))
    }

    /// Removes the member at `index` of an ordered to-many relationship and returns it.
    /// - Throws: `ContextError.unknownKey`; `.invalidRequest` for an index out of range.
    @discardableResult
    public func removeMember<Member: ManagedObject>(at index: Int, from relationship: ReferenceWritableKeyPath<Self, [Member]>) throws -> Member {
        let i = try toManyIndex(relationship)
        let members = self.members(at: i)
        guard members.indices.contains(index), let member = members[index] as? Member else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "no member at index \(index) of '\(layout.names[i])' (\(members.count) members)")
        }
        try removeMembers([member], at: i)
        return member
    }

    /// The property index of a to-many relationship named by a typed key path.
    private func toManyIndex(_ keyPath: AnyKeyPath) throws -> Int {
        guard let model = managedObjectContext?.model else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "\(objectID) is in no context, so its relationships cannot be edited")
        }
        guard let names = KeyPathProbe.components(of: keyPath, entity: entity, model: model), names.count == 1,
            let i = layout.indexByName[names[0]], case .toMany = layout.kinds[i]
        else {
            throw ContextError.unknownKey(entity: entity.name, key: "\(keyPath)")
        }
        return i
    }
}

extension ManagedObject {
    /// Adds members one by one (each once), linking back through the inverse.
    func addMembers(_ members: [ManagedObject], at i: Int) throws {
        guard case .toMany(let r) = layout.kinds[i] else { return }
        for member in members where member.managedObjectContext !== managedObjectContext {
            throw ContextError.foreignObject(entity: entity.name, key: r.name, object: member.objectID.description)
        }
        for member in members where addMember(member.objectID, at: i) {
            member.inverseAdd(self, relationship: r)
        }
    }

    /// Removes members one by one, unlinking back through the inverse.
    func removeMembers(_ members: [ManagedObject], at i: Int) throws {
        guard case .toMany(let r) = layout.kinds[i] else { return }
        for member in members where removeID(member.objectID, at: i) {
            member.inverseRemove(self, relationship: r)
        }
    }
}
