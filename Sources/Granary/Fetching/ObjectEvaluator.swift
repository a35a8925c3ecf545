import Foundation

/// Evaluates predicates and sort keys on managed objects in memory (for unsaved changes, child
/// contexts and predicates the store cannot run), with exactly the semantics the store uses on rows:
/// each object is seen as a virtual row in `EntityLayout` order and handed to `RowEvaluator`.
struct ObjectEvaluator {
    let context: ManagedObjectContext
    /// Objects reached through relationships get virtual keys into this list.
    private final class Arena {
        var objects: [ManagedObject] = []
        var keys: [ObjectIdentifier: Int64] = [:]
        func key(for object: ManagedObject) -> Int64 {
            if let k = keys[ObjectIdentifier(object)] { return k }
            objects.append(object)
            let k = Int64(objects.count - 1)
            keys[ObjectIdentifier(object)] = k
            return k
        }
    }
    private let arena = Arena()

    init(context: ManagedObjectContext) { self.context = context }

    static func schema(for entity: EntityDescription) -> FetchSchema {
        let layout = EntityLayout.of(entity)
        var fields: [String: FieldInfo] = [:]
        for (i, kind) in layout.kinds.enumerated() {
            let fieldKind: FieldKind
            switch kind {
            case .attribute(let a):
                switch a.type {
                case .integer16, .integer32, .integer64: fieldKind = .integer
                case .double, .float: fieldKind = .double
                case .decimal: fieldKind = .decimal
                case .boolean: fieldKind = .bool
                case .string: fieldKind = .string
                case .date: fieldKind = .date
                case .uuid: fieldKind = .uuid
                case .uri: fieldKind = .uri
                case .binaryData, .transformable, .undefined: fieldKind = .binary
                }
            case .toOne(let r): fieldKind = .toOne(destination: r.destinationEntityName)
            case .toMany(let r): fieldKind = .toMany(destination: r.destinationEntityName)
            }
            fields[layout.names[i]] = FieldInfo(column: i, kind: fieldKind)
        }
        return FetchSchema(entityName: entity.name, fields: fields)
    }

    func row(for object: ManagedObject) -> Row {
        object.fireFaultIfNeeded()
        var values: [Value] = []
        values.reserveCapacity(object.values.count)
        for (i, kind) in object.layout.kinds.enumerated() {
            switch kind {
            case .attribute(let a):
                values.append((try? a.storageValue(for: object.values[i])) ?? .null)
            case .toOne:
                if let id = object.values[i] as? ManagedObjectID, let target = context.registeredOrFault(id) {
                    values.append(.reference(Self.reference(arena.key(for: target))))
                } else {
                    values.append(.null)
                }
            case .toMany:
                let ids = object.values[i] as? [ManagedObjectID] ?? []
                values.append(.references(ids.compactMap { context.registeredOrFault($0) }.map { Self.reference(arena.key(for: $0)) }))
            }
        }
        return Row(values)
    }

    private func evaluator(for entity: EntityDescription) -> RowEvaluator {
        RowEvaluator(schema: Self.schema(for: entity), resolve: { [arena, self] _, ref in
            guard ref.key >= 0, Int(ref.key) < arena.objects.count else { return nil }
            let target = arena.objects[Int(ref.key)]
            return (self.row(for: target), Self.schema(for: target.entity))
        }, objectReference: { [arena, context] id in
            // An object no row built so far points at has no key yet, and none can point at it: a row
            // gives every object it references a key as it is built, before it is evaluated.
            guard let object = context.registeredObject(for: id), let key = arena.keys[ObjectIdentifier(object)] else { return nil }
            return Self.reference(key)
        })
    }

    private static func reference(_ key: Int64) -> RowReference { RowReference(table: TableID(rawValue: 0), key: key) }

    func matches(_ node: PredicateNode, _ object: ManagedObject) throws -> Bool {
        let row = row(for: object)
        return try evaluator(for: object.entity).matches(node, row: row, reference: Self.reference(arena.key(for: object)))
    }

    /// The value at a key path of an object (through to-one relationships), as fetches sort on it.
    func value(at keyPath: KeyPathExpr, of object: ManagedObject) throws -> Value {
        try evaluator(for: object.entity).value(at: keyPath, in: row(for: object))
    }

    func compare(_ a: ManagedObject, _ b: ManagedObject, by keys: [SortKey]) throws -> ComparisonResult {
        try evaluator(for: a.entity).compare(row(for: a), row(for: b), by: keys)
    }
}
