import Granary

/// Finds objects of a projection that share the values of a uniqueness constraint and makes the fuse
/// changes that join them (M22).
///
/// The search runs on the projection, not on the store: two devices holding the same events then find
/// the same collisions and record the same fuses (M23), whatever else their stores hold. A collision
/// with a row the ledger does not know (a local save not yet captured) is the store's to report, as a
/// constraint conflict the merge retries after capturing that save (M31).
struct UniquenessResolver {
    /// One uniqueness constraint as an entity sees it: the entity declaring it (objects of its
    /// sub-entities share it, as Granary checks them) and its property names.
    struct Constraint: Hashable {
        var owner: String
        var properties: [String]
    }

    /// Entity name → the constraints its objects are bound by, its own and its ancestors'.
    let constraints: [String: [Constraint]]

    init(model: ManagedObjectModel) {
        var constraints: [String: [Constraint]] = [:]
        for entity in model.entities {
            var all: [Constraint] = []
            var next: EntityDescription? = entity
            while let current = next {
                all += current.uniquenessConstraints.map { Constraint(owner: current.name, properties: $0) }
                next = current.superentity
            }
            if !all.isEmpty { constraints[entity.name] = all }
        }
        self.constraints = constraints
    }

    /// One value of a constraint's property: an attribute's value or a to-one's target.
    private enum Part: Hashable {
        case value(SyncValue)
        case object(ObjectKey)
        /// A large value by its content: two devices' data files of the same bytes have different names.
        case dataContent(sha256: String)

        init(_ value: SyncValue) {
            if case let .dataFile(.data(sha256, _)) = value { self = .dataContent(sha256: sha256) } else { self = .value(value) }
        }
    }

    /// The fuse changes, each loser into the survivor of its collision group (the key whose earliest
    /// incarnation has the lowest position, M22), sorted by loser; empty when nothing collides.
    /// `reader` reads the ledger `projection` was made from.
    func fuses(in projection: Projection, reader: LedgerReader) -> [ObjectChange] {
        guard !constraints.isEmpty else { return [] }
        // Union-find over representatives: a key colliding under two constraints joins both groups.
        var parent: [ObjectKey: ObjectKey] = [:]
        func root(_ key: ObjectKey) -> ObjectKey {
            var key = key
            while let next = parent[key], next != key { key = next }
            return key
        }
        var buckets: [[AnyHashable]: [ObjectKey]] = [:]
        for key in projection.objects.keys.sorted() {
            guard let entityConstraints = constraints[key.entity], let object = projection.objects[key] else { continue }
            for constraint in entityConstraints {
                var parts: [AnyHashable] = [AnyHashable(constraint)]
                for name in constraint.properties {
                    if let value = object.attributes[name] ?? nil {
                        parts.append(AnyHashable(Part(value)))
                    } else if let target = object.toOnes[name] ?? nil {
                        parts.append(AnyHashable(Part.object(target)))
                    }
                }
                // An object with a nil among the constrained values is exempt, as Granary has it.
                guard parts.count == constraint.properties.count + 1 else { continue }
                buckets[parts, default: []].append(key)
            }
        }
        for members in buckets.values where members.count > 1 {
            for member in members.dropFirst() {
                let a = root(members[0]), b = root(member)
                if a != b { parent[max(a, b)] = min(a, b) }
            }
        }
        // Each collision group by its root, the root included.
        var groups: [ObjectKey: [ObjectKey]] = [:]
        for key in parent.keys.sorted() { groups[root(key), default: [root(key)]].append(key) }
        var changes: [ObjectChange] = []
        for members in groups.values {
            let all = members.flatMap { reader.group(of: $0) }
            guard let survivor = reader.representative(of: all) else { continue }
            for loser in Set(members).sorted() where loser != survivor {
                changes.append(ObjectChange(key: loser, kind: .fuse(survivor: survivor)))
            }
        }
        return changes.sorted { $0.key < $1.key }
    }
}
