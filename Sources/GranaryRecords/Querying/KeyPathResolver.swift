import Granary
import Synchronization

/// Turns typed key paths rooted at an entity's class into the property names Granary's predicates use,
/// checking that each step is a stored property (to-one relationships in the middle).
struct KeyPathResolver {
    let entity: EntityDescription
    let model: ManagedObjectModel

    /// The resolver for `Root`'s entity in the model of `context`'s coordinator.
    init<Root: ManagedObject>(for _: Root.Type, in context: ManagedObjectContext) throws(KeyPathQueryError) {
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            throw .noEntity(className: String(describing: Root.self))
        }
        try self.init(for: Root.self, in: model)
    }

    /// The resolver for `Root`'s entity in `model`.
    init<Root: ManagedObject>(for _: Root.Type, in model: ManagedObjectModel) throws(KeyPathQueryError) {
        guard let entity = model.entity(for: Root.self) else { throw .noEntity(className: String(describing: Root.self)) }
        self.entity = entity
        self.model = model
    }

    init(entity: EntityDescription, model: ManagedObjectModel) {
        self.entity = entity
        self.model = model
    }

    // @unchecked: a key path is an immutable value; only its class lacks the Sendable conformance.
    private struct CacheKey: Hashable, @unchecked Sendable {
        let model: ObjectIdentifier
        let entity: String
        let keyPath: AnyKeyPath
    }

    /// Key paths already resolved, per model and entity: resolving one prints it (Swift's description
    /// of a key path demangles its types), which cost more than the fetch it was for.
    private static let resolved = Mutex<[CacheKey: KeyPathExpr]>([:])

    func path(_ keyPath: AnyKeyPath) throws(KeyPathQueryError) -> KeyPathExpr {
        let key = CacheKey(model: ObjectIdentifier(model), entity: entity.name, keyPath: keyPath)
        if let names = Self.resolved.withLock({ $0[key] }) { return names }
        let names = try resolve(keyPath)
        Self.resolved.withLock { $0[key] = names }
        return names
    }

    private func resolve(_ keyPath: AnyKeyPath) throws(KeyPathQueryError) -> KeyPathExpr {
        let refused = KeyPathQueryError.notAStoredProperty(entity: entity.name, keyPath: String(describing: keyPath))
        guard let names = KeyPathNames.components(of: keyPath, entity: entity, model: model), !names.isEmpty else { throw refused }
        // A step the probe did not see (`\User.orders.count`: a to-many's count, a computed property
        // over a stored one) shows as a component more in Swift's description of the key path.
        if let steps = Self.describedSteps(keyPath), steps != names.count { throw refused }
        var current = entity
        for (i, name) in names.enumerated() {
            guard let property = current.propertiesByName[name], !property.isTransient else { throw refused }
            if i == names.count - 1 { break }
            guard let relationship = current.relationshipsByName[name], !relationship.isToMany,
                  let next = model.entity(named: relationship.destinationEntityName) else { throw refused }
            current = next
        }
        return names
    }

    /// A constant converted when the predicate was built; `nil` when it had no predicate value
    /// (`shown` is then how it printed).
    func value(_ converted: Value?, shown: String, for keyPath: AnyKeyPath) throws(KeyPathQueryError) -> Value {
        guard let converted else {
            throw .unrepresentableValue(entity: entity.name, keyPath: String(describing: keyPath), value: shown)
        }
        return converted
    }

    /// How many steps Swift's description of a key path shows (`\User.<computed 0x… (Set<Order>)>.count`
    /// shows 2): dots outside brackets after the root type; `nil` when the description does not start
    /// with the root type's name (local types print differently), and the check is skipped.
    static func describedSteps(_ keyPath: AnyKeyPath) -> Int? {
        let text = String(describing: keyPath)
        let root = "\\" + String(describing: type(of: keyPath).rootType) + "."
        guard text.hasPrefix(root) else { return nil }
        var depth = 0
        var steps = 1
        for c in text.dropFirst(root.count) {
            switch c {
            case "<", "(", "[": depth += 1
            case ">", ")", "]": depth -= 1
            case "." where depth == 0: steps += 1
            default: break
            }
        }
        return steps
    }
}
