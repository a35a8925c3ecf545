import Foundation

/// The model's checks behind the default validation hooks of `ManagedObject`.
extension ManagedObject {
    /// Validates the properties at `indexes` with `validateValue(_:forKey:)`, collecting every
    /// `ValidationError`; during a save, a value the hook coerced is stored.
    /// - Throws: `ContextError.validation` with every problem found, or the first other error a
    ///   `validateValue(_:forKey:)` override threw.
    func validateProperties(_ indexes: [Int]) throws {
        var invalid: [ValidationError] = []
        for i in indexes {
            // Transient attributes are never stored, so never checked at save.
            if isTransient(at: i) { continue }
            var value: Any? = validationValue(at: i)
            do {
                try validateValue(&value, forKey: layout.names[i])
            } catch ContextError.validation(let list) {
                invalid += list
                continue
            } catch let error as ValidationError {
                invalid.append(error)
                continue
            }
            if managedObjectContext?.lifecycle.appliesCoercions == true { try adoptCoerced(value, at: i) }
        }
        if !invalid.isEmpty { throw ContextError.validation(invalid) }
    }

    /// The value `validateValue(_:forKey:)` is given: an attribute's value, a to-one's object, a
    /// to-many's set (array when ordered) of objects.
    private func validationValue(at i: Int) -> Any? {
        if case .attribute = layout.kinds[i] { return values[i] }
        return publicValue(at: i)
    }

    /// Stores a value `validateValue(_:forKey:)` replaced (coerced); an unchanged one is left alone.
    private func adoptCoerced(_ value: Any?, at i: Int) throws {
        switch layout.kinds[i] {
        case .attribute:
            if !ManagedObjectContext.same(value, values[i]) { try setPublicValue(value, at: i) }
        case .toOne:
            let current = (values[i] as? ManagedObjectID).flatMap { managedObjectContext?.registeredOrFault($0) }
            if (value as? ManagedObject) !== current { try setPublicValue(value, at: i) }
        case .toMany:
            // A collection of the same members is no coercion, whatever its type or order.
            let now = Set((values[i] as? [ManagedObjectID]) ?? [])
            if Set(members(of: value).map(\.objectID)) != now { try setPublicValue(value, at: i) }
        }
    }

    /// The model's rules for one property's value, with the value replaced by its canonical form (an
    /// `Int` for an `integer16` attribute becomes an `Int16`).
    func validateModelRules(_ value: inout Any?, forKey key: String) throws {
        guard let i = layout.indexByName[key] else { throw ContextError.unknownKey(entity: entity.name, key: key) }
        let errors: [ValidationError]
        switch layout.kinds[i] {
        case .attribute(let a):
            errors = a.validate(value)
            if errors.isEmpty { value = canonical(value, of: a) }
        case .toOne(let r):
            let present = (value as? ManagedObject).map { !isDiscarded($0) } ?? false
            errors = r.isOptional || present ? [] : r.validate(count: 0)
        case .toMany(let r):
            errors = r.validate(count: members(of: value).count { !isDiscarded($0) })
        }
        if !errors.isEmpty { throw ContextError.validation(errors) }
    }

    /// Throws for the first relationship with the deny rule that still holds objects.
    /// - Throws: `ContextError.deleteDenied` naming it.
    func checkDenyRules() throws {
        for (i, kind) in layout.kinds.enumerated() {
            let (relationship, count): (RelationshipDescription, Int)
            switch kind {
            case .attribute: continue
            case .toOne(let r): (relationship, count) = (r, values[i] is ManagedObjectID ? 1 : 0)
            case .toMany(let r): (relationship, count) = (r, (values[i] as? [ManagedObjectID] ?? []).count)
            }
            if relationship.deleteRule == .deny && count > 0 {
                throw ContextError.deleteDenied(entity: entity.name, relationship: relationship.name, object: objectID.description, count: count)
            }
        }
    }

    /// An object inserted and deleted before this save counts as gone: the save drops references to it.
    private func isDiscarded(_ object: ManagedObject) -> Bool {
        guard let context = managedObjectContext, !context.discarded.isEmpty else { return false }
        return context.discarded[object.objectID] === object
    }

    /// The objects of a to-many value in any of the forms a relationship is read or set as.
    private func members(of value: Any?) -> [ManagedObject] {
        let value = ManagedValueCoercion.unwrap(value)
        if let set = value as? Set<ManagedObject> { return Array(set) }
        if let array = value as? [ManagedObject] { return array }
        if let sequence = value as? any Sequence, let typed = Array(sequence) as? [ManagedObject] { return typed }
        return []
    }

    /// A valid value in the attribute's canonical Swift form, as the setters store it.
    private func canonical(_ value: Any?, of a: AttributeDescription) -> Any? {
        guard let value = ManagedValueCoercion.unwrap(value), !(value is NSNull) else { return nil }
        if let fast = a.type.canonicalFastPath(value) { return fast }
        if case .transformable = a.type { return value }
        guard let stored = try? a.storageValue(for: value), !stored.isNull else { return nil }
        guard let converted = try? a.swiftValue(from: stored) else { return value }
        return converted
    }
}
