import Foundation

/// Turns a batch insert's dictionaries straight into storage values, in the entity's layout order,
/// with everything that does not depend on the object worked out once per request.
///
/// A dictionary's key is matched to its attribute by comparing it with the attribute its position in
/// the previous dictionary matched (dictionaries built alike often iterate alike, though each has its
/// own hash seed), then with each name of a small entity, and only for a large one by hash. A value
/// already of its attribute's Swift type becomes its storage value in one cast. Anything else takes
/// `PersistentStoreCoordinator.batchValue`, so that errors and conversions are exactly those of a
/// value set one at a time.
struct BatchObjectConverter {
    private struct Slot {
        let index: Int
        /// The attribute's type when a value of its own Swift type may skip the general conversion:
        /// a stored attribute; nil for relationships and transient attributes, which only the
        /// general path reports.
        let fastType: AttributeType?
    }

    let entity: EntityDescription
    private let names: [String]
    private let kinds: [EntityLayout.Kind]
    private let slots: [Slot]
    private let slotByName: [String: Int]
    /// Every property's storage value before the object gives its own: attributes' defaults; `.null`
    /// for relationships and transient attributes, which have no column here.
    private let initial: [Value]
    /// Required stored attributes (neither optional nor transient), in layout order.
    private let required: [(index: Int, name: String)]
    /// The slot the n-th key of the previous dictionary matched.
    private var guesses: [Int] = []
    /// Up to this many properties a key is found by comparing it with each name, which costs less
    /// than hashing it.
    private static let scanLimit = 16

    /// A converter for `entity`, or `nil` when one of its defaults has no storage value (then the
    /// general path reports it, as for any object).
    init?(entity: EntityDescription) {
        self.entity = entity
        let layout = EntityLayout.of(entity)
        names = layout.names
        kinds = layout.kinds
        var slots: [Slot] = []
        var initial: [Value] = []
        var required: [(Int, String)] = []
        for (i, kind) in layout.kinds.enumerated() {
            switch kind {
            case .attribute(let a):
                slots.append(Slot(index: i, fastType: a.isTransient ? nil : a.type))
                if a.isTransient {
                    initial.append(.null)
                } else {
                    guard let value = try? a.type.storageValue(for: layout.initialValues[i]) else { return nil }
                    initial.append(value)
                    if !a.isOptional { required.append((i, a.name)) }
                }
            case .toOne, .toMany:
                slots.append(Slot(index: i, fastType: nil))
                initial.append(.null)
            }
        }
        self.slots = slots
        self.initial = initial
        self.required = required
        slotByName = layout.indexByName
    }

    /// One object's storage values in layout order, and the layout indexes of the attributes it gave.
    /// - Throws: what `PersistentStoreCoordinator.batchValue` throws for a key or value it refuses;
    ///   `ContextError.wrongValueType` for a required attribute the object leaves nil.
    mutating func convert(_ dictionary: [String: Any]) throws -> (values: [Value], given: [Int]) {
        var values = initial
        var given: [Int] = []
        given.reserveCapacity(dictionary.count)
        var position = 0
        for (key, value) in dictionary {
            defer { position += 1 }
            var slot = -1
            if position < guesses.count, case let guess = guesses[position], names[guess] == key {
                slot = guess
            } else {
                if names.count <= Self.scanLimit {
                    for (i, name) in names.enumerated() where name == key {
                        slot = i
                        break
                    }
                } else if let found = slotByName[key] {
                    slot = found
                }
                if slot >= 0 {
                    if position < guesses.count { guesses[position] = slot } else { guesses.append(slot) }
                }
            }
            if slot >= 0, let type = slots[slot].fastType, let fast = type.fastStorageValue(value) {
                values[slot] = fast
                given.append(slot)
                continue
            }
            // Unknown keys, relationships, transient attributes, and values of another Swift type.
            let canonical = try PersistentStoreCoordinator.batchValue(value, forKey: key, of: entity)
            guard slot >= 0, case .attribute(let a) = kinds[slot] else { continue }
            do { values[slot] = try a.type.storageValue(for: canonical) } catch {
                throw ContextError.wrongValueType(entity: entity.name, key: a.name, value: SafeDescription.of(canonical),
                                                  reason: "\(error.naming(a.qualifiedName))")
            }
            given.append(slot)
        }
        for (index, name) in required where values[index].isNull {
            throw ContextError.wrongValueType(entity: entity.name, key: name, value: "nil", reason: "the attribute is required and has no default")
        }
        return (values, given)
    }
}
