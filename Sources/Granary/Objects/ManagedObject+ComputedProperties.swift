import Foundation

/// Fetched properties (computed when read) and derived attributes (computed at save) on the object.
extension ManagedObject {
    // MARK: Fetched properties

    /// The objects of a fetched property: fetched on the first read, then kept until the object is
    /// refreshed (`ManagedObjectContext.refresh(_:mergeChanges:)`, merging or not) or its context is reset,
    /// as in Core Data.
    ///
    /// Use it for typed access to a fetched property (`try book.fetchedObjects(forKey: "sameAuthor",
    /// as: Book.self)`); `value(forKey:)` returns the same objects as `[ManagedObject]`. The fetch sees the
    /// context's unsaved changes as they were at the first read. An object outside a context has no
    /// fetched objects.
    /// - Throws: `ContextError.unknownKey` when the entity has no fetched property `key`;
    ///   `PredicateParseError` when its predicate cannot be evaluated for this object (a
    ///   `$FETCH_SOURCE.key` the object lacks, a missing `$FETCHED_PROPERTY.userInfo` entry of a type the
    ///   comparison cannot use); `ContextError.wrongValueType` when a result is not a `T`; fetch errors.
    public func fetchedObjects<T: ManagedObject>(forKey key: String, as type: T.Type = ManagedObject.self) throws -> [T] {
        assertOnContextQueue()
        guard let fetched = entity.fetchedPropertiesByName[key] else {
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        let objects: [ManagedObject]
        if let cached = fetchedResults[key] {
            objects = cached
        } else {
            guard let context = managedObjectContext else { return [] }
            var request = FetchRequest<ManagedObject>(entityName: fetched.destinationEntityName)
            request.filter = try fetched.predicate(source: self)
            request.sortKeys = fetched.sortKeys
            objects = try context.fetch(request)
            fetchedResults[key] = objects
        }
        var typed: [T] = []
        typed.reserveCapacity(objects.count)
        for object in objects {
            guard let member = object as? T else {
                throw ContextError.wrongValueType(
                    entity: entity.name, key: key, value: object.description,
                    reason: "fetched property \(fetched.qualifiedName) holds \(object.entity.name) objects, not \(T.self)")
            }
            typed.append(member)
        }
        return typed
    }

    /// Forgets the results of fetched properties, so the next read fetches again.
    func forgetFetchedResults() {
        if !fetchedResults.isEmpty { fetchedResults = [:] }
    }

    // MARK: Derived attributes

    func derivedAttributeIsReadOnly(at i: Int) -> ContextError {
        guard case .attribute(let attribute) = layout.kinds[i] else {
            return .readOnlyProperty(entity: entity.name, key: layout.names[i], reason: "it is derived")
        }
        return .readOnlyProperty(
            entity: entity.name, key: attribute.name,
            reason: "it is a derived attribute, computed from \(attribute.derivationExpression ?? "its expression") at each save")
    }

    /// Computes every derived attribute of the object and stores the values that changed (without the
    /// read-only check, and without marking an unchanged value as changed).
    ///
    /// - Throws: `ContextError.derivationFailed` when a value does not convert to the attribute's type.
    func updateDerivedAttributes(now: Date) throws {
        for i in layout.derivedIndexes {
            guard case .attribute(let attribute) = layout.kinds[i], case .success(let expression)? = attribute.derivation else {
                continue
            }
            var raw = derivedValue(of: expression, now: now)
            // An average (or a Double or Decimal attribute) stored in an integer attribute: its whole part,
            // as a column of integer affinity keeps it.
            if case .integer16 = attribute.type { raw = Self.wholePart(raw) }
            if case .integer32 = attribute.type { raw = Self.wholePart(raw) }
            if case .integer64 = attribute.type { raw = Self.wholePart(raw) }
            let value: Any?
            do {
                value = try attribute.type.swiftValue(from: attribute.storageValue(for: raw))
            } catch {
                throw ContextError.derivationFailed(
                    entity: entity.name, attribute: attribute.name, object: objectID, reason: error.description)
            }
            if !ManagedObjectContext.same(values[i], value, as: attribute.type) { setRaw(value, at: i) }
        }
    }

    private static func wholePart(_ value: Any?) -> Any? {
        switch value {
        case let d as Double where d.isFinite: return Int64(exactly: d.rounded(.towardZero)) ?? value
        case let f as Float where f.isFinite: return Int64(exactly: Double(f).rounded(.towardZero)) ?? value
        case let d as Decimal:
            let number = NSDecimalNumber(decimal: d).doubleValue
            return number.isFinite ? Int64(exactly: number.rounded(.towardZero)) ?? value : value
        default: return value
        }
    }

    private func derivedValue(of expression: DerivationExpression, now: Date) -> Any? {
        switch expression.form {
        case .now:
            return now
        case .keyPath(let path):
            return ManagedValueCoercion.unwrap(value(at: path))
        case .function(let function, let path):
            guard let text = ManagedValueCoercion.unwrap(value(at: path)) as? String else { return nil }
            switch function {
            case .lowercase: return text.lowercased()
            case .uppercase: return text.uppercased()
            case .canonical: return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
            }
        case .count(let path):
            return Int64(members(at: path).count)
        case .aggregate(let aggregate, let path, let key):
            let values = members(at: path).compactMap { ManagedValueCoercion.unwrap(try? $0.value(forKey: key)) }
            return Self.aggregate(aggregate, of: values)
        }
    }

    /// The value at a key path through to-one relationships; nil where a link is nil.
    private func value(at path: [String]) -> Any? {
        var object: ManagedObject = self
        for key in path.dropLast() {
            guard let next = ManagedValueCoercion.unwrap(try? object.value(forKey: key)) as? ManagedObject else { return nil }
            object = next
        }
        guard let last = path.last else { return nil }
        return try? object.value(forKey: last)
    }

    /// The members of the to-many relationship at the end of a key path.
    private func members(at path: [String]) -> [ManagedObject] {
        var object: ManagedObject = self
        for key in path.dropLast() {
            guard let next = ManagedValueCoercion.unwrap(try? object.value(forKey: key)) as? ManagedObject else { return [] }
            object = next
        }
        guard let last = path.last, let i = object.layout.indexByName[last] else { return [] }
        return object.members(at: i)
    }

    /// `@sum` and `@avg` of numbers (as `Decimal` when any is one, else `Double`, else `Int64`), `@max` and
    /// `@min` of numbers, dates or strings; nil for `@max`, `@min` and `@avg` of nothing, as Core Data.
    private static func aggregate(_ aggregate: DerivationExpression.Aggregate, of values: [Any]) -> Any? {
        switch aggregate {
        case .sum, .avg:
            if values.isEmpty { return aggregate == .sum ? Int64(0) : nil }
            if values.allSatisfy({ $0 is any BinaryInteger }) {
                let integers = values.compactMap { ($0 as? any BinaryInteger).map { Int64(clamping: $0) } }
                let sum = integers.reduce(Int64(0)) { $0.addingReportingOverflow($1).partialValue }
                return aggregate == .sum ? sum : Double(sum) / Double(integers.count)
            }
            if values.contains(where: { $0 is Decimal }) {
                let decimals = values.map { value -> Decimal in
                    if let d = value as? Decimal { return d }
                    if let i = value as? any BinaryInteger { return Decimal(Int64(clamping: i)) }
                    return Decimal(Self.double(value) ?? 0)
                }
                let sum = decimals.reduce(Decimal(0), +)
                return aggregate == .sum ? sum : sum / Decimal(decimals.count)
            }
            let doubles = values.compactMap(Self.double)
            let sum = doubles.reduce(0, +)
            return aggregate == .sum ? sum : sum / Double(doubles.count)
        case .max, .min:
            guard var best = values.first else { return nil }
            for value in values.dropFirst() {
                let order = ValueComparison.compare(value, best)
                if (aggregate == .max && order == .orderedDescending) || (aggregate == .min && order == .orderedAscending) {
                    best = value
                }
            }
            return best
        }
    }

    private static func double(_ value: Any) -> Double? {
        switch value {
        case let d as Double: return d
        case let f as Float: return Double(f)
        case let i as any BinaryInteger: return Double(Int64(clamping: i))
        case let d as Decimal: return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
}

/// Orders the values an aggregate compares: numbers of any width, dates, strings.
private enum ValueComparison {
    static func compare(_ a: Any, _ b: Any) -> ComparisonResult {
        if let x = number(a), let y = number(b) { return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame }
        if let x = a as? Date, let y = b as? Date { return x.compare(y) }
        if let x = a as? String, let y = b as? String { return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame }
        return .orderedSame
    }

    private static func number(_ value: Any) -> Double? {
        switch value {
        case let d as Double: return d
        case let f as Float: return Double(f)
        case let i as any BinaryInteger: return Double(Int64(clamping: i))
        case let d as Decimal: return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
}

extension ManagedObject: PredicateVariableValue {
    /// A `$FETCH_SOURCE.key` of a fetched property's predicate reads the object's property `key`.
    func predicateVariableValue(forKey key: String) -> PredicateVariableLookup {
        guard let value = try? value(forKey: key) else {
            return entity.propertiesByName[key] == nil && entity.fetchedPropertiesByName[key] == nil ? .unknownKey : .value(nil)
        }
        return .value(value)
    }
}
