import Foundation

/// A batch insert worked out before anything is written: each object's row, and whether it is a new
/// row or an update of a row that has its uniqueness-constraint values (stored, or earlier in the
/// same request).
struct BatchInsertion {
    /// One object of the request: its values in layout order, and which of them it gave.
    struct Object {
        /// Swift values (from a managed object), encoded into a row by the store; empty when `stored` is set.
        var values: [Any?]
        /// Storage values (from a dictionary), already converted.
        var stored: [Value]?
        var given: [Int]
    }

    struct Entry {
        var key: Int64
        var row: Row
        var isNew: Bool
    }

    let table: String
    let snapshot: Snapshot
    let indexes: [UniqueIndex]
    private var nextKey: Int64
    /// Rows to write, in the order first reached, and the position of each key among them.
    private(set) var entries: [Entry] = []
    private var positions: [Int64: Int] = [:]
    /// The key holding each unique index's values among the rows this request writes.
    private var claimed: [[[Value]: Int64]]
    /// For each unique index and each row of the request (by position), the stored row holding the
    /// row's values in the snapshot, looked up together before any row is added.
    private var stored: [[Int64?]] = []
    /// For each unique index and each row of the request, the row's values in it (nil when one is null).
    private var rowKeys: [[[Value]?]] = []

    init(table: String, snapshot: Snapshot, indexes: [UniqueIndex], expectedCount: Int) throws {
        self.table = table
        self.snapshot = snapshot
        self.indexes = indexes
        nextKey = try snapshot.nextKey(in: table)
        claimed = indexes.map { _ in [:] }
        for n in claimed.indices { claimed[n].reserveCapacity(expectedCount) }
        positions.reserveCapacity(expectedCount)
        entries.reserveCapacity(expectedCount)
    }

    /// Looks up every row's values in the stored unique indexes at once (in key order, see
    /// `Snapshot.firstKeys`), for `add(_:given:columns:at:)` to use by the rows' positions.
    /// - Throws: storage errors.
    mutating func lookUpStored(_ rows: [Row]) throws {
        rowKeys = indexes.map { index in rows.map { index.key(of: $0) } }
        stored = try indexes.indices.map { n in
            var probes: [[Value]] = []
            var owners: [Int] = []
            probes.reserveCapacity(rows.count)
            owners.reserveCapacity(rows.count)
            for (position, key) in rowKeys[n].enumerated() {
                guard let key else { continue }
                probes.append(key)
                owners.append(position)
            }
            var found = [Int64?](repeating: nil, count: rows.count)
            for (i, key) in try snapshot.firstKeys(in: table, index: indexes[n].name, equalTo: probes).enumerated() { found[owners[i]] = key }
            return found
        }
    }

    /// Adds one object's row: a new row, or the given properties' columns written over the row that
    /// already has its constrained values.
    /// - Parameters:
    ///   - given: the layout indexes of the properties the object gave; `columns` maps them to columns.
    ///   - position: the row's position in what `lookUpStored` was given.
    /// - Throws: `ContextError.constraintViolation` when two constraints point at two different rows.
    mutating func add(_ row: Row, given: [Int], columns: [Int?], at position: Int) throws {
        var target: Int64?
        for n in indexes.indices {
            guard let key = rowKeys[n][position] else { continue }
            guard let holder = claimed[n][key] ?? stored[n][position] else { continue }
            if let target, target != holder {
                throw ContextError.constraintViolation(entity: indexes[n].entityName, properties: indexes[n].properties,
                                                      value: TableKeyDescription.of(key) + " (held by another object than the one an earlier constraint matched)")
            }
            target = holder
        }
        guard let target else {
            // A new row: its values in each index are the object's own.
            let key = nextKey
            nextKey += 1
            positions[key] = entries.count
            entries.append(Entry(key: key, row: row, isNew: true))
            for n in indexes.indices { if let value = rowKeys[n][position] { claimed[n][value] = key } }
            return
        }
        let at: Int
        if let earlier = positions[target] {
            at = earlier
        } else {
            guard var stored = try snapshot.row(in: table, key: target) else { return }
            if case .int(let version) = stored[StorageMapping.versionColumn] { stored[StorageMapping.versionColumn] = .int(version + 1) }
            at = entries.count
            positions[target] = at
            entries.append(Entry(key: target, row: stored, isNew: false))
        }
        if entries[at].row[StorageMapping.entityColumn] != row[StorageMapping.entityColumn] {
            throw ContextError.constraintViolation(entity: indexes.first?.entityName ?? table, properties: indexes.first?.properties ?? [],
                                                  value: "an object of another entity holds these values; a batch insert cannot change its entity")
        }
        for i in given { if let column = columns[i] { entries[at].row[column] = row[column] } }
        for n in indexes.indices {
            if let value = indexes[n].key(of: entries[at].row) {
                claimed[n][value] = target
            } else if let old = rowKeys[n][position] {
                claimed[n][old] = nil
            }
        }
    }

    /// The request's objects, converted and checked, from its array or its handler.
    /// - Throws: `ContextError.invalidBatchObject` naming the object's position and what was wrong.
    static func objects(of request: BatchInsertRequest, entity: EntityDescription) throws -> [Object] {
        let layout = EntityLayout.of(entity)
        func checked(_ values: [Any?], given: [Int], at position: Int) throws -> Object {
            for case (let i, .attribute(let a)) in layout.kinds.enumerated() where !a.isOptional && !a.isTransient && values[i] == nil {
                throw ContextError.invalidBatchObject(
                    index: position, error: .wrongValueType(entity: entity.name, key: a.name, value: "nil", reason: "the attribute is required and has no default"))
            }
            return Object(values: values, stored: nil, given: given)
        }
        var converter = BatchObjectConverter(entity: entity)
        func converted(_ dictionary: [String: Any], at position: Int) throws -> Object {
            do {
                if converter != nil {
                    let (stored, given) = try converter!.convert(dictionary)
                    return Object(values: [], stored: stored, given: given)
                }
            } catch let error as ContextError {
                throw ContextError.invalidBatchObject(index: position, error: error)
            }
            var values = layout.initialValues
            var given: [Int] = []
            given.reserveCapacity(dictionary.count)
            for (key, value) in dictionary {
                do {
                    let converted = try PersistentStoreCoordinator.batchValue(value, forKey: key, of: entity)
                    let i = layout.indexByName[key]!
                    values[i] = converted
                    given.append(i)
                } catch let error as ContextError {
                    throw ContextError.invalidBatchObject(index: position, error: error)
                }
            }
            return try checked(values, given: given, at: position)
        }
        var objects: [Object] = []
        if let handler = request.managedObjectHandler {
            let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
            while true {
                let object = type.init(entity: entity, insertInto: nil)
                if handler(object) { break }
                let position = objects.count
                if let rejected = object.rejectedValues.first {
                    throw ContextError.invalidBatchObject(
                        index: position, error: (rejected as? ContextError) ?? .wrongValueType(entity: entity.name, key: "?", value: "?", reason: "\(rejected)"))
                }
                var given: [Int] = []
                for i in object.changedIndexes.sorted() {
                    switch layout.kinds[i] {
                    case .attribute(let a):
                        if !a.isTransient { given.append(i) }
                    case .toOne(let r), .toMany(let r):
                        throw ContextError.invalidBatchObject(
                            index: position, error: .wrongValueType(entity: entity.name, key: r.name, value: SafeDescription.of(object.values[i]),
                                                                    reason: "batch requests set attributes only; set relationships on managed objects"))
                    }
                }
                objects.append(try checked(object.values, given: given, at: position))
            }
        } else if let handler = request.dictionaryHandler {
            while true {
                var dictionary: [String: Any] = [:]
                if handler(&dictionary) { break }
                objects.append(try converted(dictionary, at: objects.count))
            }
        } else {
            objects.reserveCapacity(request.objects.count)
            for (position, dictionary) in request.objects.enumerated() { objects.append(try converted(dictionary, at: position)) }
        }
        return objects
    }
}

/// Words a unique index's values for an error message.
enum TableKeyDescription {
    static func of(_ key: [Value]) -> String {
        key.count == 1 ? SafeDescription.of(key[0]) : "(" + key.map { SafeDescription.of($0) }.joined(separator: ", ") + ")"
    }
}
