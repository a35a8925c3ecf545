import Foundation
import GranaryStorage

/// The ledger's persisted form: per key an `object` row (incarnations, fuses, and the ID map's local
/// key), a `register` row per attribute or to-one, a `member` row per member of a to-many (§3.1).
///
/// Rows per property rather than one document per key, so that a merge step rewrites only the keys it
/// touched, and so that later slices can find every owner of a member through an index. Values inside
/// the `bytes` columns are in `LedgerBinaryCoding`'s form (rows of earlier versions, in JSON, still read).
enum LedgerRows {
    typealias Objects = EventStoreSchema.Object
    typealias Registers = EventStoreSchema.Register
    typealias Members = EventStoreSchema.Member

    /// Every ledger object in `snapshot`.
    /// - Throws: `EventStoreError.damaged` for an unreadable row, or a register or member row whose key
    ///   is not in the ledger; `StorageError` from the engine.
    static func load(from snapshot: Snapshot, path: String) throws -> Ledger {
        var objects: [ObjectKey: LedgerObject] = [:]
        try snapshot.forEachRow(in: Objects.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Objects.name, key: rowKey, path: path)
            guard try reader.optionalBytes(Objects.incarnations, "incarnations") != nil else { return true }
            let key = ObjectKey(try reader.string(Objects.entity, "entity"), try reader.string(Objects.globalID, "gid"))
            var object = LedgerObject(key: key)
            object.incarnations = try reader.ledgerValue([Incarnation].self, Objects.incarnations, "incarnations", binary: LedgerBinaryCoding.incarnations)
            object.fuses = try reader.ledgerValue([LedgerObject.Fuse].self, Objects.fuses, "fuses", binary: LedgerBinaryCoding.fuses)
            objects[key] = object
            return true
        }
        try snapshot.forEachRow(in: Registers.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Registers.name, key: rowKey, path: path)
            let key = ObjectKey(try reader.string(Registers.entity, "entity"), try reader.string(Registers.globalID, "gid"))
            let property = try reader.string(Registers.property, "property")
            guard objects[key] != nil else { throw reader.damaged("register \(property) of \(key), which is not in the ledger") }
            if try reader.bool(Registers.isToOne, "isToOne") {
                objects[key]?.toOnes[property] = try reader.ledgerValue(Register<ObjectKey?>.self, Registers.candidates, "candidates", binary: LedgerBinaryCoding.keyRegister)
            } else {
                objects[key]?.attributes[property] = try reader.ledgerValue(Register<SyncValue?>.self, Registers.candidates, "candidates", binary: LedgerBinaryCoding.valueRegister)
            }
            return true
        }
        try snapshot.forEachRow(in: Members.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Members.name, key: rowKey, path: path)
            let key = ObjectKey(try reader.string(Members.entity, "entity"), try reader.string(Members.globalID, "gid"))
            let relationship = try reader.string(Members.relationship, "relationship")
            let member = ObjectKey(try reader.string(Members.memberEntity, "memberEntity"),
                                   try reader.string(Members.memberGID, "memberGID"))
            guard objects[key] != nil else { throw reader.damaged("member \(member) of \(key).\(relationship), which is not in the ledger") }
            objects[key]?.members[relationship, default: [:]][member] = try reader.ledgerValue(Membership.self, Members.adds, "adds", binary: LedgerBinaryCoding.membership)
            return true
        }
        var ledger = Ledger()
        for object in objects.values { ledger.update(object.key) { $0 = object } }
        return ledger
    }

    /// The ledger objects of `keys` that are in the ledger (a key absent, or only mapped, is left out):
    /// what a step that touches a few keys reads instead of the whole ledger.
    /// - Throws: `EventStoreError.damaged` for an unreadable row; `StorageError` from the engine.
    /// The ledger object of `key` whose object row is `row`, with its registers and members; nil for a
    /// key that is mapped but not in the ledger (no incarnations).
    /// - Throws: `EventStoreError.damaged`; `StorageError` from the engine.
    static func object(_ key: ObjectKey, row: Row, rowKey: Int64, in snapshot: Snapshot, path: String) throws -> LedgerObject? {
        let reader = EventStoreRowReader(row: row, table: Objects.name, key: rowKey, path: path)
        guard try reader.optionalBytes(Objects.incarnations, "incarnations") != nil else { return nil }
        var object = LedgerObject(key: key)
        object.incarnations = try reader.ledgerValue([Incarnation].self, Objects.incarnations, "incarnations", binary: LedgerBinaryCoding.incarnations)
        object.fuses = try reader.ledgerValue([LedgerObject.Fuse].self, Objects.fuses, "fuses", binary: LedgerBinaryCoding.fuses)
        let owner: [Value] = [.string(key.entity), .string(key.globalID)]
        for (registerKey, register) in try snapshot.query(IndexQuery(table: Registers.name, index: Registers.byProperty, equal: owner)) {
            let reader = EventStoreRowReader(row: register, table: Registers.name, key: registerKey, path: path)
            let property = try reader.string(Registers.property, "property")
            if try reader.bool(Registers.isToOne, "isToOne") {
                object.toOnes[property] = try reader.ledgerValue(Register<ObjectKey?>.self, Registers.candidates, "candidates", binary: LedgerBinaryCoding.keyRegister)
            } else {
                object.attributes[property] = try reader.ledgerValue(Register<SyncValue?>.self, Registers.candidates, "candidates", binary: LedgerBinaryCoding.valueRegister)
            }
        }
        for (memberKey, member) in try snapshot.query(IndexQuery(table: Members.name, index: Members.byMember, equal: owner)) {
            let reader = EventStoreRowReader(row: member, table: Members.name, key: memberKey, path: path)
            let relationship = try reader.string(Members.relationship, "relationship")
            let memberObject = ObjectKey(try reader.string(Members.memberEntity, "memberEntity"),
                                         try reader.string(Members.memberGID, "memberGID"))
            object.members[relationship, default: [:]][memberObject] = try reader.ledgerValue(Membership.self, Members.adds, "adds", binary: LedgerBinaryCoding.membership)
        }
        return object
    }

    static func load(_ keys: some Sequence<ObjectKey>, from snapshot: Snapshot, path: String) throws -> [LedgerObject] {
        var objects: [LedgerObject] = []
        for key in keys {
            guard let rowKey = try objectRowKey(key, in: snapshot), let row = try snapshot.row(in: Objects.name, key: rowKey) else { continue }
            guard let object = try object(key, row: row, rowKey: rowKey, in: snapshot, path: path) else { continue }
            objects.append(object)
        }
        return objects
    }

    /// The keys whose to-many `relationship` holds a member row for `member` (an add not cancelled).
    /// - Throws: `EventStoreError.damaged`; `StorageError` from the engine.
    static func owners(of member: ObjectKey, in relationship: String, snapshot: Snapshot, path: String) throws -> [ObjectKey] {
        var owners: [ObjectKey] = []
        for (rowKey, row) in try snapshot.query(IndexQuery(table: Members.name, index: Members.byMemberGID, equal: [.string(member.globalID)])) {
            let reader = EventStoreRowReader(row: row, table: Members.name, key: rowKey, path: path)
            guard try reader.string(Members.memberEntity, "memberEntity") == member.entity,
                  try reader.string(Members.relationship, "relationship") == relationship else { continue }
            owners.append(ObjectKey(try reader.string(Members.entity, "entity"), try reader.string(Members.globalID, "gid")))
        }
        return owners.sorted()
    }

    /// Replaces the stored rows of `object`'s key by `object`, keeping its local key.
    ///
    /// Rows whose bytes are unchanged are left alone, changed ones updated in place, and only rows that
    /// appear or disappear are inserted or deleted: a merge or capture usually changes one register of
    /// an object, and rewriting all of them cost more than everything else the step wrote.
    /// - Throws: `StorageError` from the engine.
    static func write(_ object: LedgerObject, in tx: WriteTransaction, path: String) throws {
        let key = object.key
        let incarnations = Value.bytes(LedgerBinaryCoding.encode(object.incarnations))
        let fuses = Value.bytes(LedgerBinaryCoding.encode(object.fuses))
        try upsertObjectRow(key, in: tx) { values in
            values[Objects.incarnations] = incarnations
            values[Objects.fuses] = fuses
        }
        let owner: [Value] = [.string(key.entity), .string(key.globalID)]

        var registers: [RegisterSlot: [UInt8]] = [:]
        for (property, register) in object.attributes { registers[RegisterSlot(isToOne: false, property: property)] = LedgerBinaryCoding.encode(register) }
        for (property, register) in object.toOnes { registers[RegisterSlot(isToOne: true, property: property)] = LedgerBinaryCoding.encode(register) }
        try reconcile(IndexQuery(table: Registers.name, index: Registers.byProperty, equal: owner), bytesColumn: Registers.candidates,
                      with: registers, in: tx) { row -> RegisterSlot? in
            guard case let .bool(isToOne) = row[Registers.isToOne], case let .string(property) = row[Registers.property] else { return nil }
            return RegisterSlot(isToOne: isToOne, property: property)
        } newRow: { slot, bytes in
            [.string(key.entity), .string(key.globalID), .bool(slot.isToOne), .string(slot.property), .bytes(bytes)]
        }

        var members: [MemberSlot: [UInt8]] = [:]
        for (relationship, memberships) in object.members {
            for (member, membership) in memberships {
                members[MemberSlot(relationship: relationship, member: member)] = LedgerBinaryCoding.encode(membership)
            }
        }
        try reconcile(IndexQuery(table: Members.name, index: Members.byMember, equal: owner), bytesColumn: Members.adds,
                      with: members, in: tx) { row -> MemberSlot? in
            guard case let .string(relationship) = row[Members.relationship], case let .string(memberEntity) = row[Members.memberEntity],
                  case let .string(memberGID) = row[Members.memberGID] else { return nil }
            return MemberSlot(relationship: relationship, member: ObjectKey(memberEntity, memberGID))
        } newRow: { slot, bytes in
            [.string(key.entity), .string(key.globalID), .string(slot.relationship), .string(slot.member.entity),
             .string(slot.member.globalID), .bytes(bytes)]
        }
    }

    /// Makes the rows `query` finds hold `wanted` (slot → bytes of the value column): rows of slots not
    /// wanted are deleted, changed bytes updated in place, and missing slots inserted in slot order, so
    /// that one ledger written from scratch always gives the same row keys.
    private static func reconcile<Slot: Hashable & Comparable>(_ query: IndexQuery, bytesColumn: Int, with wanted: [Slot: [UInt8]],
                                                               in tx: WriteTransaction, slot: (Row) -> Slot?,
                                                               newRow: (Slot, [UInt8]) -> [Value]) throws {
        var missing = wanted
        for (rowKey, row) in try tx.snapshot.query(query) {
            guard let found = slot(row), let bytes = missing.removeValue(forKey: found) else {
                try tx.delete(from: query.table, key: rowKey)
                continue
            }
            if row[bytesColumn] != .bytes(bytes) {
                var values = row.values
                values[bytesColumn] = .bytes(bytes)
                try tx.update(Row(values), in: query.table, key: rowKey)
            }
        }
        for (slot, bytes) in missing.sorted(by: { $0.key < $1.key }) {
            _ = try tx.insert(Row(newRow(slot, bytes)), into: query.table)
        }
    }

    private struct RegisterSlot: Hashable, Comparable {
        var isToOne: Bool
        var property: String

        static func < (a: Self, b: Self) -> Bool { (a.isToOne ? 1 : 0, a.property) < (b.isToOne ? 1 : 0, b.property) }
    }

    private struct MemberSlot: Hashable, Comparable {
        var relationship: String
        var member: ObjectKey

        static func < (a: Self, b: Self) -> Bool { (a.relationship, a.member) < (b.relationship, b.member) }
    }

    /// Takes `key` out of the ledger, keeping its local key.
    /// - Throws: `StorageError` from the engine.
    static func remove(_ key: ObjectKey, in tx: WriteTransaction) throws {
        try upsertObjectRow(key, in: tx) { values in
            values[Objects.incarnations] = .null
            values[Objects.fuses] = .null
        }
        try deleteProperties(of: key, in: tx)
    }

    /// The keys of every object row in the ledger.
    /// - Throws: `EventStoreError.damaged`; `StorageError` from the engine.
    static func keys(in snapshot: Snapshot, path: String) throws -> [ObjectKey] {
        var keys: [ObjectKey] = []
        try snapshot.forEachRow(in: Objects.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Objects.name, key: rowKey, path: path)
            if try reader.optionalBytes(Objects.incarnations, "incarnations") != nil {
                keys.append(ObjectKey(try reader.string(Objects.entity, "entity"), try reader.string(Objects.globalID, "gid")))
            }
            return true
        }
        return keys
    }

    /// Changes the object row of `key` with `change`, inserting an empty one first when there is none.
    /// - Throws: `StorageError` from the engine (a unique violation for a local key already mapped).
    static func upsertObjectRow(_ key: ObjectKey, in tx: WriteTransaction, _ change: (inout [Value]) -> Void) throws {
        if let rowKey = try objectRowKey(key, in: tx.snapshot), let row = try tx.row(in: Objects.name, key: rowKey) {
            var values = row.values
            // A row written by an older version may be shorter; missing columns read as null.
            while values.count < Objects.schema.columns.count { values.append(.null) }
            change(&values)
            if values != row.values { try tx.update(Row(values), in: Objects.name, key: rowKey) }
        } else {
            var values: [Value] = [.string(key.entity), .string(key.globalID)]
                + Array(repeating: .null, count: Objects.schema.columns.count - 2)
            change(&values)
            _ = try tx.insert(Row(values), into: Objects.name)
        }
    }

    static func objectRowKey(_ key: ObjectKey, in snapshot: Snapshot) throws -> Int64? {
        try snapshot.queryKeys(IndexQuery(table: Objects.name, index: Objects.byKey,
                                          equal: [.string(key.entity), .string(key.globalID)], limit: 1)).first
    }

    private static func deleteProperties(of key: ObjectKey, in tx: WriteTransaction) throws {
        let owner: [Value] = [.string(key.entity), .string(key.globalID)]
        for rowKey in try tx.snapshot.queryKeys(IndexQuery(table: Registers.name, index: Registers.byProperty, equal: owner)) {
            try tx.delete(from: Registers.name, key: rowKey)
        }
        for rowKey in try tx.snapshot.queryKeys(IndexQuery(table: Members.name, index: Members.byMember, equal: owner)) {
            try tx.delete(from: Members.name, key: rowKey)
        }
    }
}
