import Foundation
import Observation
import Synchronization

/// Where each property of an entity sits in a managed object's value array, and how typed key paths
/// map to properties. Built once per entity and shared by every object of it.
final class EntityLayout: Sendable {
    /// Indirect: a description is a large struct, and hot loops copy kinds; a boxed payload copies as
    /// one retain instead of one per field.
    enum Kind: Sendable {
        indirect case attribute(AttributeDescription)
        indirect case toOne(RelationshipDescription)
        indirect case toMany(RelationshipDescription)
    }

    let entity: EntityDescription
    let names: [String]
    let kinds: [Kind]
    /// Each attribute's type, nil for relationships: the setters' fast path reads it without copying a
    /// whole attribute description out of `kinds`.
    let attributeTypes: [AttributeType?]
    /// Whether each property is transient, attribute or relationship (never stored, never validated at save).
    let isTransient: [Bool]
    /// Whether each property is a hidden inverse of a one-sided relationship: maintained and stored like
    /// any relationship, but left out of what the object hands out by name (`changedValues()`,
    /// `committedValues(forKeys:)`, dictionaries) and unknown to `value(forKey:)`.
    let isHidden: [Bool]
    /// Whether each property is an attribute without validation rules: a value of its type's own
    /// Swift type meets its model rules, which validation checks without copying the description.
    let hasNoRules: [Bool]
    /// Whether each property is a derived attribute, which only the save computes.
    let isDerived: [Bool]
    /// The indexes of derived attributes, in declared order.
    let derivedIndexes: [Int]
    /// The relationships whose destinations have derived attributes that read back through the inverse
    /// (`author.name` on Book, for Author's `books`): a save of this object recomputes them.
    let derivationDependents: [Int]
    let indexByName: [String: Int]
    /// The indexes of relationships, for passes that only care about references.
    let relationshipIndexes: [Int]
    /// Whether each property is a to-one relationship: a typed read takes the `toOneReads` path.
    let isToOne: [Bool]
    /// Whether the entity's class declares `Observable`: then reads and changes of its properties are
    /// reported to Swift's Observation framework (see `ObjectObservation`).
    let isObservable: Bool
    /// The key paths its properties were read through while observed.
    let observedKeyPaths = ObservedKeyPaths()
    /// How typed reads of to-one relationships convert the target (see `ToOneReadCache`).
    let toOneReads: ToOneReadCache
    /// Every property's `initialValue(at:)`, shared by new objects until they change one.
    // Immutable, and every element is a model default (`Sendable`) or an empty ID array.
    nonisolated(unsafe) let initialValues: [Any?]
    /// The scope of the entity's temporary IDs, so that a new object does not intern it.
    let temporaryScope: ManagedObjectID.Scope
    /// Property indexes of `@Managed` storage key paths. Looked up by identity first: a key path
    /// literal is one object for the life of the process, and comparing pointers is far cheaper than
    /// hashing a key path, which every typed read and write would otherwise do. The table holds its key
    /// paths, so an address cannot be reused by another key path while it is listed. Key paths that are
    /// made anew for each access (in generic code) are found by hash instead, and the identity table
    /// stops growing at `identityLimit`.
    ///
    /// The identity table is read without the lock (a lock per typed read was a fifth of its cost):
    /// entries are written once, under the lock, before the count that covers them is published with
    /// release ordering, and readers load the count with acquire ordering. The addresses stay valid
    /// because `identityHeld` holds every listed key path for the layout's life.
    private let keyPathLock = NSLock()
    // Guarded by `keyPathLock`; key paths are immutable.
    nonisolated(unsafe) private var keyPathsByHash: [AnyKeyPath: Int] = [:]
    /// The key paths whose addresses the identity table lists (a key path found by hash is another
    /// object than the one the hash table holds).
    nonisolated(unsafe) private var identityHeld: [AnyKeyPath] = []
    nonisolated(unsafe) private let identityKeys = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: identityLimit)
    nonisolated(unsafe) private let identityIndexes = UnsafeMutablePointer<Int>.allocate(capacity: identityLimit)
    private let identityCount = Atomic<Int>(0)
    private static let identityLimit = 64

    private init(entity: EntityDescription) {
        self.entity = entity
        self.temporaryScope = .of(entityName: entity.name, store: nil)
        var names: [String] = []
        var kinds: [Kind] = []
        // Hidden inverses included: the object graph maintains them like any relationship.
        for property in entity.storage.properties {
            names.append(property.name)
            switch property {
            case .attribute(let a): kinds.append(.attribute(a))
            case .relationship(let r): kinds.append(r.isToMany ? .toMany(r) : .toOne(r))
            }
        }
        self.names = names
        self.kinds = kinds
        self.attributeTypes = kinds.map { if case .attribute(let a) = $0 { a.type } else { nil } }
        self.isTransient = kinds.map {
            switch $0 {
            case .attribute(let a): a.isTransient
            case .toOne(let r), .toMany(let r): r.isTransient
            }
        }
        self.isHidden = kinds.map {
            switch $0 {
            case .attribute: false
            case .toOne(let r), .toMany(let r): r.isHiddenInverse
            }
        }
        self.hasNoRules = kinds.map { if case .attribute(let a) = $0 { a.validationRules.isEmpty } else { false } }
        let isDerived = kinds.map { if case .attribute(let a) = $0 { a.isDerived } else { false } }
        self.isDerived = isDerived
        self.derivedIndexes = isDerived.indices.filter { isDerived[$0] }
        self.derivationDependents = Self.derivationDependents(of: entity, kinds: kinds)
        self.indexByName = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        self.relationshipIndexes = kinds.indices.filter { if case .attribute = kinds[$0] { return false } else { return true } }
        self.isToOne = kinds.map { if case .toOne = $0 { true } else { false } }
        self.isObservable = entity.objectType is any Observable.Type
        self.toOneReads = ToOneReadCache(count: kinds.count)
        self.initialValues = kinds.map { kind in
            switch kind {
            case .attribute(let a): return a.defaultValue
            case .toOne: return nil
            case .toMany: return [ManagedObjectID]()
            }
        }
    }

    private static func derivationDependents(of entity: EntityDescription, kinds: [Kind]) -> [Int] {
        guard let graph = entity.graph else { return [] }
        return kinds.indices.filter { i in
            let relationship: RelationshipDescription
            switch kinds[i] {
            case .attribute: return false
            case .toOne(let r), .toMany(let r): relationship = r
            }
            guard let destination = graph.entities.firstIndex(where: { $0.declaration.name == relationship.destinationEntityName })
            else { return false }
            // Sub-entities of the destination inherit the inverse and may derive from it too.
            return ([destination] + graph.entities[destination].descendantIndices).contains { member in
                graph.entities[member].properties.contains { property in
                    guard case .success(let expression)? = property.attribute?.derivation else { return false }
                    return expression.path.first == relationship.graphInverseName
                }
            }
        }
    }

    /// The layout of an entity, made on first use and kept with the entity's storage (entities are
    /// equal exactly when their storage is the same object), so that creating an object looks nothing up.
    static func of(_ entity: EntityDescription) -> EntityLayout {
        if let layout = entity.storage.layout.load() { return layout }
        return entity.storage.layout.storeIfNil(EntityLayout(entity: entity))
    }

    func cachedIndex(forKeyPath keyPath: AnyKeyPath) -> Int? {
        let identity = UnsafeRawPointer(Unmanaged.passUnretained(keyPath).toOpaque())
        let listed = identityCount.load(ordering: .acquiring)
        for i in 0..<listed where identityKeys[i] == identity { return identityIndexes[i] }
        return keyPathLock.withLock {
            guard let index = keyPathsByHash[keyPath] else { return nil }
            listIdentity(of: keyPath, index: index)
            return index
        }
    }

    func cache(_ index: Int, forKeyPath keyPath: AnyKeyPath) {
        keyPathLock.withLock {
            keyPathsByHash[keyPath] = index
            listIdentity(of: keyPath, index: index)
        }
    }

    deinit {
        identityKeys.deallocate()
        identityIndexes.deallocate()
    }

    /// Adds a key path to the identity table, holding it. Called under `keyPathLock`.
    private func listIdentity(of keyPath: AnyKeyPath, index: Int) {
        let listed = identityCount.load(ordering: .relaxed)
        let identity = UnsafeRawPointer(Unmanaged.passUnretained(keyPath).toOpaque())
        guard listed < Self.identityLimit, !(0..<listed).contains(where: { identityKeys[$0] == identity }) else { return }
        identityHeld.append(keyPath)
        identityKeys[listed] = identity
        identityIndexes[listed] = index
        identityCount.store(listed + 1, ordering: .releasing)
    }

    /// The initial value of a property in a new object: the attribute's default, an empty to-many.
    func initialValue(at i: Int) -> Any? {
        initialValues[i]
    }
}
