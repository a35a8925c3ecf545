import Foundation
import Granary

/// Where each entity's new objects get their global IDs (§7 of the plan): the delegate first, then a
/// `Syncable` key or the configured attribute, read from the object, and a random UUID otherwise.
///
/// The attribute forms are decided once, from the model, so that a misnamed attribute is an error when
/// the ensemble opens rather than a crash or a silent duplicate at the first capture. The delegate is
/// asked per batch, since it may answer for some entities and not others.
struct GlobalIdentifierSource: Sendable {
    /// The app's delegate: the entity's name and a batch of its new objects; an array of one ID (or nil for
    /// a random one) per object, or nil to let the other sources decide.
    typealias Delegate = @Sendable (String, [ManagedObject]) -> [String?]?

    /// How an entity's objects name themselves when the delegate does not answer.
    enum Rule: Hashable, Sendable {
        case attribute(String)
        case random
    }

    /// The delegate is called with at most this many objects at a time, bounding what it must hold.
    static let delegateBatchSize = 1_000

    let rules: [String: Rule]
    let delegate: Delegate?

    /// The rules of every entity of `model`: the entity class's `Syncable.globalIdentifierKey`, else
    /// `attribute` when the entity has an attribute of that name, else random.
    /// - Throws: `SyncError.invalidGlobalIdentifierAttribute` when a `Syncable` key names no attribute of
    ///   its entity, or names (like a configured attribute present on the entity) one that is not a string
    ///   or UUID.
    init(model: ManagedObjectModel, attribute: String?, delegate: Delegate?) throws(SyncError) {
        var rules: [String: Rule] = [:]
        for entity in model.entities {
            if let syncable = entity.objectType as? any Syncable.Type {
                let key = syncable.globalIdentifierKey
                guard let described = entity.attributesByName[key], Self.canHoldIdentifier(described) else {
                    throw .invalidGlobalIdentifierAttribute(entity: entity.name, attribute: key)
                }
                rules[entity.name] = .attribute(key)
            } else if let attribute, let described = entity.attributesByName[attribute] {
                guard Self.canHoldIdentifier(described) else {
                    throw .invalidGlobalIdentifierAttribute(entity: entity.name, attribute: attribute)
                }
                rules[entity.name] = .attribute(attribute)
            } else {
                rules[entity.name] = .random
            }
        }
        self.rules = rules
        self.delegate = delegate
    }

    private static func canHoldIdentifier(_ attribute: AttributeDescription) -> Bool {
        guard !attribute.isTransient, attribute.derivationExpression == nil else { return false }
        return attribute.type == .string || attribute.type == .uuid
    }

    /// One global ID per object of `objects`, all of entity `entity`, in order, and how many of them were
    /// made up because the object's identifier attribute was nil or empty (for a diagnostic).
    /// - Throws: `SyncError.globalIdentifierCountMismatch` when the delegate answers with an array of the
    ///   wrong length.
    func identifiers(entity: String, objects: [ManagedObject]) throws(SyncError) -> (ids: [String], missing: Int) {
        var ids: [String] = []
        ids.reserveCapacity(objects.count)
        var missing = 0
        var start = 0
        while start < objects.count {
            let batch = Array(objects[start..<min(start + Self.delegateBatchSize, objects.count)])
            start += batch.count
            if let delegate, let answer = delegate(entity, batch) {
                guard answer.count == batch.count else {
                    throw .globalIdentifierCountMismatch(entity: entity, expected: batch.count, got: answer.count)
                }
                // An element nil (Ensembles' NSNull) or empty means "make one up".
                for id in answer {
                    if let id, !id.isEmpty { ids.append(id) } else { ids.append(Self.randomIdentifier()) }
                }
                continue
            }
            for object in batch {
                if let id = attributeIdentifier(of: object, entity: entity) {
                    ids.append(id)
                } else {
                    if case .attribute = rules[entity] { missing += 1 }
                    ids.append(Self.randomIdentifier())
                }
            }
        }
        return (ids, missing)
    }

    /// The ID the object's identifier attribute holds; nil when its entity has none or it is nil or empty.
    func attributeIdentifier(of object: ManagedObject, entity: String) -> String? {
        guard case let .attribute(name)? = rules[entity] else { return nil }
        switch try? object.value(forKey: name) {
        case let text as String: return text.isEmpty ? nil : text
        case let uuid as UUID: return uuid.uuidString
        default: return nil
        }
    }

    /// A random ID: an uppercase UUID string, as Ensembles makes them.
    static func randomIdentifier() -> String { UUID().uuidString }
}
