import Foundation
import Synchronization

/// Finds the property names behind typed key paths to `@Managed` properties, which Swift describes only
/// as `<computed 0x…>`: the key path is applied to a probe object whose `@Managed` getters record the
/// property they stand for instead of reading it, and whose to-one getters return probe objects of the
/// destination entity, so `\Employee.company?.name` yields `["company", "name"]`.
///
/// Used for `#Predicate` and `SortDescriptor` key paths; results are cached per key path.
final class KeyPathProbe: @unchecked Sendable {
    // @unchecked: a probe lives for one synchronous key-path application on one thread.
    @TaskLocal static var current: KeyPathProbe?
    /// Probes under way in the process: `@Managed` getters read the task-local `current` only when
    /// some are, since an atomic load costs a fraction of a task-local lookup.
    private static let activeProbes = Atomic<Int>(0)
    static var isProbing: Bool { activeProbes.load(ordering: .relaxed) > 0 }

    private let model: ManagedObjectModel
    private(set) var components: [String] = []

    private init(model: ManagedObjectModel) { self.model = model }

    private static let cacheLock = NSLock()
    // Guarded by `cacheLock`.
    nonisolated(unsafe) private static var cache: [AnyKeyPath: [String]] = [:]

    /// The property names a key path rooted at `entity`'s class goes through, or `nil` when it does not
    /// go through `@Managed` properties.
    static func components(of keyPath: AnyKeyPath, entity: EntityDescription, model: ManagedObjectModel) -> [String]? {
        if let cached = cacheLock.withLock({ cache[keyPath] }) { return cached }
        // Probing first: descriptions of computed (wrapped) key paths carry no name, and those of a
        // subclass's stored properties can carry the wrong one.
        let probe = KeyPathProbe(model: model)
        if let root = makeProbeObject(entity) {
            activeProbes.wrappingAdd(1, ordering: .relaxed)
            defer { activeProbes.wrappingSubtract(1, ordering: .relaxed) }
            $current.withValue(probe) { _ = root[keyPath: keyPath] }
        }
        if probe.components.isEmpty {
            guard let parsed = KeyPathNames.components(of: keyPath), !parsed.contains(where: { $0.hasPrefix("<") }) else { return nil }
            return parsed
        }
        cacheLock.withLock { cache[keyPath] = probe.components }
        return probe.components
    }

    private static func makeProbeObject(_ entity: EntityDescription) -> ManagedObject? {
        guard let type = entity.objectType as? ManagedObject.Type else { return nil }
        return type.init(entity: entity, insertInto: nil)
    }

    /// Called by `@Managed` getters while probing: records the property and returns a stand-in value.
    func record<Value>(_ object: ManagedObject, property i: Int, as type: Value.Type) -> Value {
        components.append(object.layout.names[i])
        var standIn: Any?
        switch object.layout.kinds[i] {
        case .attribute(let a):
            standIn = a.defaultValue ?? Self.zero(for: a.type)
        case .toOne(let r):
            standIn = model.entity(named: r.destinationEntityName).flatMap { Self.makeProbeObject($0) }
        case .toMany:
            standIn = [ManagedObject]()
        }
        if let value = ManagedValueCoercion.coerce(standIn, to: Value.self) { return value }
        if let value = ManagedValueCoercion.coerce(Set<ManagedObject>(), to: Value.self) { return value }
        preconditionFailure("cannot probe \(object.entity.name).\(object.layout.names[i]) of type \(Value.self)")
    }

    /// A stand-in value of a property's kind: an attribute's default or its type's zero, an empty
    /// to-many, nil for a to-one.
    static func zero(for kind: EntityLayout.Kind) -> Any? {
        switch kind {
        case .attribute(let a): return a.defaultValue ?? zero(for: a.type)
        case .toOne: return nil
        case .toMany: return [ManagedObject]()
        }
    }

    private static func zero(for type: AttributeType) -> Any? {
        switch type {
        case .integer16, .integer32, .integer64: return Int64(0)
        case .double, .float: return 0.0
        case .decimal: return Decimal(0)
        case .boolean: return false
        case .string, .uri: return type == .uri ? URL(string: "about:blank") as Any : ""
        case .date: return Date(timeIntervalSinceReferenceDate: 0)
        case .uuid: return UUID()
        case .binaryData: return Data()
        case .transformable, .undefined: return nil
        }
    }
}
