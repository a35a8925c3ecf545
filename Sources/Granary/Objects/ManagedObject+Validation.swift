import Foundation

/// The model's checks behind the default validation hooks of `ManagedObject`.
extension ManagedObject {
    /// Validates the properties at `indexes` with `validateValue(_:forKey:)`, collecting every
    /// `ValidationError`; during a save, a value the hook coerced is stored.
    /// - Throws: `ContextError.validation` with every problem found, or the first other error a
    ///   `validateValue(_:forKey:)` override threw.
    func validateProperties(_ indexes: [Int]) throws {
        var invalid: [ValidationError] = []
        let appliesCoercions = managedObjectContext?.lifecycle.appliesCoercions == true
        for i in indexes {
            // Transient attributes are never stored, so never checked at save.
            // Hidden inverses are the object graph's bookkeeping, optional and unbounded: nothing to check.
            if isTransient(at: i) || layout.isHidden[i] { continue }
            // The value `validateValue(_:forKey:)` is given: an attribute's value, a to-one's object, a
            // to-many's set (array when ordered) of objects.
            let attributeType = layout.attributeTypes[i]
            let isAttribute = attributeType != nil
            // A to-one's object without boxing and casting its ID (`publicValue(at:)` gives the same).
            var value: Any? = isAttribute ? values[i] : layout.isToOne[i] ? toOneTarget(at: i) : publicValue(at: i)
            // Only a relationship's is compared with what comes back (an attribute's is compared with
            // the stored value), so only a relationship's is kept.
            let given: Any? = isAttribute ? nil : value
            do {
                validatingIndex = Int16(truncatingIfNeeded: i <= Int(Int16.max) ? i : -1)
                defer { validatingIndex = -1 }
                try validateValue(&value, forKey: layout.names[i])
            } catch ContextError.validation(let list) {
                invalid += list
                continue
            } catch let error as ValidationError {
                invalid.append(error)
                continue
            }
            if appliesCoercions {
                // An attribute's value handed back as it was given (nearly always) is no coercion: seen
                // without copying the stored value out to compare.
                if let attributeType, values.withUnsafeBufferPointer({ attributeType.holdsSameOwnTypeValue(value, at: $0.baseAddress! + i) }) {
                    continue
                }
                // A to-one's object (or nil) handed back as it was given: no cast needed to see it.
                if layout.isToOne[i] && AnyBox.holdsSameObject(value, given) { continue }
                try adoptCoerced(value, given: given, at: i)
            }
        }
        if !invalid.isEmpty { throw ContextError.validation(invalid) }
    }

    /// Stores a value `validateValue(_:forKey:)` replaced (coerced); an unchanged one is left alone.
    /// `given` is what the hook was handed: a relationship value it gave back untouched is no coercion,
    /// which spares looking its objects up again (a to-many's may be thousands).
    private func adoptCoerced(_ value: Any?, given: Any?, at i: Int) throws {
        switch layout.kinds[i] {
        case .attribute:
            // The type alone, not the description: a switch binding it copies the whole description.
            if !ManagedObjectContext.same(value, values[i], as: layout.attributeTypes[i]) { try setPublicValue(value, at: i) }
        case .toOne:
            if let object = value as? ManagedObject, object === given as? ManagedObject { return }
            if value == nil && given == nil { return }
            let current = (values[i] as? ManagedObjectID).flatMap { managedObjectContext?.registeredOrFault($0) }
            if (value as? ManagedObject) !== current { try setPublicValue(value, at: i) }
        case .toMany:
            // The very collection handed out compares equal at once (same storage).
            if let now = value as? Set<ManagedObject>, let then = given as? Set<ManagedObject>, now == then { return }
            if let now = value as? [ManagedObject], let then = given as? [ManagedObject], now == then { return }
            // A collection of the same members is no coercion, whatever its type or order.
            let now = Set((values[i] as? [ManagedObjectID]) ?? [])
            if Set(members(of: value).map(\.objectID)) != now { try setPublicValue(value, at: i) }
        }
    }

    /// The model's rules for one property's value, with the value replaced by its canonical form (an
    /// `Int` for an `integer16` attribute becomes an `Int16`).
    func validateModelRules(_ value: inout Any?, forKey key: String) throws {
        let i: Int
        if validatingIndex >= 0, layout.names[Int(validatingIndex)] == key {
            i = Int(validatingIndex)
        } else if let found = layout.indexByName[key] {
            i = found
        } else {
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        // What `validate` and `canonical` below come to for a value of the attribute's own type and no
        // rules (the common case, met once per property of every saved object), without copying the
        // attribute's description.
        if layout.hasNoRules[i], let type = layout.attributeTypes[i] {
            if type.holdsOwnSwiftType(value) { return }
            if let given = value, let fast = type.canonicalFastPath(given) {
                value = fast
                return
            }
        }
        let errors: [ValidationError]
        switch layout.kinds[i] {
        case .attribute(let a):
            errors = a.validate(value)
            if errors.isEmpty { value = canonical(value, of: a) }
        case .toOne(let r):
            // An optional one (nearly all) needs no look at its object, which takes a cast.
            if r.isOptional { return }
            let present = (value as? ManagedObject).map { !isDiscarded($0) } ?? false
            errors = present ? [] : r.validate(count: 0)
        case .toMany(let r):
            errors = r.validate(count: memberCount(of: value))
        }
        if !errors.isEmpty { throw ContextError.validation(errors) }
    }

    /// Throws for the first relationship with the deny rule that still holds objects.
    /// - Throws: `ContextError.deleteDenied` naming it.
    func checkDenyRules() throws {
        fireFaultIfNeeded()
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

    /// How many objects of a to-many value count: all but discarded ones. The set a to-many is read as
    /// is counted in place, without copying its members.
    private func memberCount(of value: Any?) -> Int {
        let hasDiscarded = managedObjectContext.map { !$0.discarded.isEmpty } ?? false
        if let set = value as? Set<ManagedObject> {
            return hasDiscarded ? set.count { !isDiscarded($0) } : set.count
        }
        let list = members(of: value)
        return hasDiscarded ? list.count { !isDiscarded($0) } : list.count
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
        // Before looking through optionals, which costs a protocol cast: a cast to the type already does.
        if let value, let fast = a.type.canonicalFastPath(value) { return fast }
        guard let value = ManagedValueCoercion.unwrap(value), !(value is NSNull) else { return nil }
        if let fast = a.type.canonicalFastPath(value) { return fast }
        if case .transformable = a.type { return value }
        if a.type == .undefined { return value }
        guard let stored = try? a.storageValue(for: value), !stored.isNull else { return nil }
        guard let converted = try? a.swiftValue(from: stored) else { return value }
        return converted
    }
}
