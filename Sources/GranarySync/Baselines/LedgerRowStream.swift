import Foundation
import GranaryStorage

/// The stored ledger read one object at a time, so that a baseline of a large ledger is written with
/// one object and one part in memory rather than the whole ledger (§13 "Streaming").
enum LedgerRowStream {
    typealias Objects = EventStoreSchema.Object
    typealias Registers = EventStoreSchema.Register
    typealias Members = EventStoreSchema.Member

    /// Calls `body` with every ledger object in `snapshot`, in object-row order, each whole (registers and
    /// members read through their indexes).
    /// - Throws: `EventStoreError.damaged` for an unreadable row; `StorageError` from the engine; what
    ///   `body` throws.
    static func forEachObject(in snapshot: Snapshot, path: String, _ body: (LedgerObject) throws -> Void) throws {
        try snapshot.forEachRow(in: Objects.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Objects.name, key: rowKey, path: path)
            guard try reader.optionalBytes(Objects.incarnations, "incarnations") != nil else { return true }
            let key = ObjectKey(try reader.string(Objects.entity, "entity"), try reader.string(Objects.globalID, "gid"))
            var object = LedgerObject(key: key)
            object.incarnations = try reader.json([Incarnation].self, Objects.incarnations, "incarnations")
            object.fuses = try reader.json([LedgerObject.Fuse].self, Objects.fuses, "fuses")
            let owner: [Value] = [.string(key.entity), .string(key.globalID)]
            for (registerKey, registerRow) in try snapshot.query(IndexQuery(table: Registers.name, index: Registers.byProperty, equal: owner)) {
                let register = EventStoreRowReader(row: registerRow, table: Registers.name, key: registerKey, path: path)
                let property = try register.string(Registers.property, "property")
                if try register.bool(Registers.isToOne, "isToOne") {
                    object.toOnes[property] = try register.json(Register<ObjectKey?>.self, Registers.candidates, "candidates")
                } else {
                    object.attributes[property] = try register.json(Register<SyncValue?>.self, Registers.candidates, "candidates")
                }
            }
            for (memberKey, memberRow) in try snapshot.query(IndexQuery(table: Members.name, index: Members.byMember, equal: owner)) {
                let member = EventStoreRowReader(row: memberRow, table: Members.name, key: memberKey, path: path)
                let relationship = try member.string(Members.relationship, "relationship")
                let memberKey = ObjectKey(try member.string(Members.memberEntity, "memberEntity"),
                                          try member.string(Members.memberGID, "memberGID"))
                object.members[relationship, default: [:]][memberKey] = try member.json(Membership.self, Members.adds, "adds")
            }
            try body(object)
            return true
        }
    }
}
