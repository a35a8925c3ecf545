import Foundation
import Synchronization

/// Where each property of an entity sits in a managed object's value array, and how typed key paths
/// map to properties. Built once per entity and shared by every object of it.
final class EntityLayout: Sendable {
    enum Kind: Sendable {
        case attribute(AttributeDescription)
        case toOne(RelationshipDescription)
        case toMany(RelationshipDescription)
    }

    let entity: EntityDescription
    let names: [String]
    let kinds: [Kind]
    let indexByName: [String: Int]
    /// Every property's `initialValue(at:)`, shared by new objects until they change one.
    // Immutable, and every element is a model default (`Sendable`) or an empty ID array.
    nonisolated(unsafe) let initialValues: [Any?]
    private let keyPathLock = NSLock()
    // Guarded by `keyPathLock`; key paths are immutable values, only the dictionary changes.
    nonisolated(unsafe) private var keyPathIndexes: [AnyKeyPath: Int] = [:]

    private init(entity: EntityDescription) {
        self.entity = entity
        var names: [String] = []
        var kinds: [Kind] = []
        for property in entity.properties {
            names.append(property.name)
            switch property {
            case .attribute(let a): kinds.append(.attribute(a))
            case .relationship(let r): kinds.append(r.isToMany ? .toMany(r) : .toOne(r))
            }
        }
        self.names = names
        self.kinds = kinds
        self.indexByName = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        self.initialValues = kinds.map { kind in
            switch kind {
            case .attribute(let a): return a.defaultValue
            case .toOne: return nil
            case .toMany: return [ManagedObjectID]()
            }
        }
    }

    private static let cacheLock = NSLock()
    // Guarded by `cacheLock`.
    nonisolated(unsafe) private static var cache: [EntityDescription: EntityLayout] = [:]

    static func of(_ entity: EntityDescription) -> EntityLayout {
        cacheLock.withLock {
            if let layout = cache[entity] { return layout }
            let layout = EntityLayout(entity: entity)
            cache[entity] = layout
            return layout
        }
    }

    func cachedIndex(forKeyPath keyPath: AnyKeyPath) -> Int? {
        keyPathLock.withLock { keyPathIndexes[keyPath] }
    }

    func cache(_ index: Int, forKeyPath keyPath: AnyKeyPath) {
        keyPathLock.withLock { keyPathIndexes[keyPath] = index }
    }

    /// The initial value of a property in a new object: the attribute's default, an empty to-many.
    func initialValue(at i: Int) -> Any? {
        initialValues[i]
    }
}
