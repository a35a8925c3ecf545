/// The object graph a set of integrated events stands for: which objects exist and what each holds
/// (M9–M22). The store is made equal to it after each merge.
struct Projection: Hashable, Sendable, CustomStringConvertible {
    /// Live objects by the key representing their fuse group.
    var objects: [ObjectKey: ProjectedObject]

    init(objects: [ObjectKey: ProjectedObject]) { self.objects = objects }

    var description: String {
        objects.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "\n")
    }

    /// The projection of `ledger` under `schema`.
    init(of ledger: Ledger, schema: LedgerSchema) {
        let reader = LedgerReader(ledger: ledger)
        var objects: [ObjectKey: ProjectedObject] = [:]
        // Pass 1: existence, attributes, canonical sides with their effective values.
        var toOneWinners: [ObjectKey: [String: EventPosition]] = [:]
        for group in reader.groups {
            guard let representative = reader.representative(of: group), reader.exists(group),
                  let shape = schema.entities[representative.entity] else { continue }
            var object = ProjectedObject()
            for name in shape.attributes {
                object.attributes[name] = reader.winner(group) { $0.attributes[name]?.candidates ?? [] }?.value
            }
            for name in shape.toOnes.keys {
                let winner = reader.winner(group) { $0.toOnes[name]?.candidates ?? [] }
                object.toOnes[name] = (winner?.value).flatMap(reader.existingRepresentative)
                if let winner { toOneWinners[representative, default: [:]][name] = winner.op.position }
            }
            for (name, relationship) in shape.toManys {
                object.toManys[name] = reader.members(of: group, in: name, ordered: relationship.isOrdered)
            }
            for (name, isToOne) in schema.derivedRelationships(of: representative.entity) {
                if isToOne { object.toOnes[name] = .some(nil) } else { object.toManys[name] = [] }
            }
            objects[representative] = object
        }
        // Pass 2: derived sides, and the one-to-one claimant rule (M17).
        for owner in objects.keys.sorted() {
            guard let shape = schema.entities[owner.entity], let object = objects[owner] else { continue }
            for (name, relationship) in shape.toOnes {
                guard let target = object.toOnes[name] ?? nil else { continue }
                switch relationship.inverse {
                case .none: break
                case let .toMany(inverse): objects[target]?.toManys[inverse, default: []].append(owner)
                case let .toOne(inverse):
                    let claim = toOneWinners[owner]?[name]
                    if let current = objects[target]?.toOnes[inverse] ?? nil {
                        let currentClaim = toOneWinners[current]?[name]
                        if Self.claim(claim, owner, beats: currentClaim, current) {
                            objects[current]?.toOnes[name] = .some(nil)
                            objects[target]?.toOnes[inverse] = owner
                        } else {
                            objects[owner]?.toOnes[name] = .some(nil)
                        }
                    } else {
                        objects[target]?.toOnes[inverse] = owner
                    }
                }
            }
            for (name, relationship) in shape.toManys {
                guard let inverse = relationship.inverse else { continue }
                for member in object.toManys[name] ?? [] { objects[member]?.toManys[inverse, default: []].append(owner) }
            }
        }
        for key in objects.keys {
            for (name, isToOne) in schema.derivedRelationships(of: key.entity) where !isToOne { objects[key]?.toManys[name]?.sort() }
        }
        self.objects = objects
    }

    /// A later winning write claims a one-to-one target; one event claiming twice is settled by key.
    private static func claim(_ position: EventPosition?, _ key: ObjectKey, beats other: EventPosition?,
                              _ otherKey: ObjectKey) -> Bool {
        guard let position else { return false }
        guard let other else { return true }
        return position != other ? position > other : key < otherKey
    }
}
