import Foundation
import Granary

/// Which entities a connect manages and by which attributes their objects are known: Coherence's rule,
/// in its order.
///
/// 1. The entity's user info `uniquenessAttributes`: attribute names as a comma-separated string (or
///    written as a property-list array, `(a, b)`), whitespace trimmed; every name must be an attribute
///    of the entity (inherited ones count), else the entity is not managed.
/// 2. Else its superentity's setting, up the chain.
/// 3. Else the entity's own uniqueness constraint with the fewest attributes.
///
/// Abstract entities are never managed: they have no objects of their own to merge.
struct ManagedEntities: Sendable {
    /// The key attributes of each managed entity, in the order given.
    let keys: [String: [String]]
    /// Why each entity of the model that is not managed is not.
    let unmanaged: [String: String]

    static let userInfoKey = "uniquenessAttributes"

    /// What a connect that is not started manages: nothing.
    static let none = ManagedEntities(keys: [:], unmanaged: [:])

    private init(keys: [String: [String]], unmanaged: [String: String]) {
        self.keys = keys
        self.unmanaged = unmanaged
    }

    init(model: ManagedObjectModel) {
        var keys: [String: [String]] = [:]
        var unmanaged: [String: String] = [:]
        for entity in model.entities {
            switch Self.resolve(entity, in: model) {
            case .success(let attributes): keys[entity.name] = attributes
            case .failure(let reason): unmanaged[entity.name] = reason.text
            }
        }
        self.keys = keys
        self.unmanaged = unmanaged
    }

    struct Reason: Error { let text: String }

    static func resolve(_ entity: EntityDescription, in model: ManagedObjectModel) -> Result<[String], Reason> {
        guard !entity.isAbstract else { return .failure(Reason(text: "it is abstract")) }
        var current: EntityDescription? = entity
        while let candidate = current {
            if let setting = candidate.userInfo[userInfoKey] {
                let names = parse(setting)
                guard !names.isEmpty else { return .failure(Reason(text: "its \(userInfoKey) setting names no attribute")) }
                for name in names where entity.attributesByName[name] == nil {
                    return .failure(Reason(text: "its \(userInfoKey) setting names '\(name)', which is not an attribute of \(entity.name)"))
                }
                return .success(names)
            }
            current = candidate.superentity
        }
        if let smallest = entity.uniquenessConstraints.min(by: { $0.count < $1.count }), !smallest.isEmpty {
            return .success(smallest)
        }
        return .failure(Reason(text: "it has no \(userInfoKey) setting and no uniqueness constraint"))
    }

    /// `"a, b"` or `"(a, b)"` (an array as a property list prints it) into names.
    static func parse(_ setting: String) -> [String] {
        var text = Substring(setting).trimmingCharacters(in: .whitespacesAndNewlines)[...]
        if text.hasPrefix("("), text.hasSuffix(")") { text = text.dropFirst().dropLast() }
        return text.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }.filter { !$0.isEmpty }
    }
}
