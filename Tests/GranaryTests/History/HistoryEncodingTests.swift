import Foundation
import Testing
@testable import Granary
@testable import GranaryStorage

/// The binary form of recorded changes: exact for every attribute value, and damaged bytes are a typed
/// error, never a crash.
@Suite struct HistoryEncodingTests {
    static let sample = HistoryTable.StoredChanges(entities: ["Book", "Author"], changes: [
        .init(entity: 0, key: 1, kind: .insert),
        .init(entity: 1, key: Int64.max, kind: .update, updated: ["name", "books"]),
        .init(entity: 0, key: -7, kind: .delete, tombstone: [
            "nan": .double(.nan), "inf": .double(-.infinity), "zero": .double(-0.0), "min": .int(.min), "flag": .bool(true),
            "title": .string("Ærø ✓"), "data": .bytes([0, 255, 7]), "when": .date(Date(timeIntervalSinceReferenceDate: 1.5)),
            "id": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        ]),
        .init(entity: 1, key: 3, kind: .delete),
    ])

    @Test func everyValueRoundTripsBitForBit() throws {
        let decoded = try HistoryEncoding.decode(HistoryEncoding.encode(Self.sample))
        #expect(decoded.entities == Self.sample.entities)
        #expect(decoded.changes.map(\.key) == Self.sample.changes.map(\.key))
        #expect(decoded.changes.map(\.kind) == [.insert, .update, .delete, .delete])
        #expect(decoded.changes[1].updated == ["name", "books"])
        #expect(decoded.changes[3].tombstone == nil)
        let tombstone = try #require(decoded.changes[2].tombstone)
        // NaN != NaN: doubles compare by bit pattern.
        for (name, value) in Self.sample.changes[2].tombstone! {
            switch (value, tombstone[name]) {
            case (.double(let a), .double(let b)?): #expect(a.bitPattern == b.bitPattern, "\(name)")
            default: #expect(tombstone[name] == value, "\(name)")
            }
        }
    }

    // The last change names entity 5 and only two bytes (key, kind) follow its index: an index is not a
    // count of bytes to come.
    @Test func aLastChangeNamingAHighEntityIndexDecodes() throws {
        let names = ["A", "B", "C", "D", "E", "F"]
        let stored = HistoryTable.StoredChanges(entities: names, changes: names.indices.map { .init(entity: $0, key: 1, kind: .insert) })
        let decoded = try HistoryEncoding.decode(HistoryEncoding.encode(stored))
        #expect(decoded.changes.map(\.entity) == Array(names.indices))
        #expect(decoded.entities == names)
    }

    // The same through a real save touching four entities, the last one's index above the bytes after it.
    @Test func aSaveOverManyEntitiesReadsBack() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Alpha") { Attribute("value", .integer64, defaultValue: 0) }
            Entity("Beta") { Attribute("value", .integer64, defaultValue: 0) }
            Entity("Gamma") { Attribute("value", .integer64, defaultValue: 0) }
            Entity("Delta") { Attribute("value", .integer64, defaultValue: 0) }
            Entity("Epsilon") { Attribute("value", .integer64, defaultValue: 0) }
        }
        let (coordinator, context) = try HistorySupport.stack(model: model)
        try context.performAndWait {
            for name in ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"] { _ = try HistorySupport.insert(name, [:], into: context) }
            try context.save()
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.count == 1)
        #expect(Set(transactions.first?.changes.map(\.changedObjectID.entityName) ?? []) == ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"])
    }

    @Test func damagedBytesAreATypedErrorNeverACrash() {
        let bytes = HistoryEncoding.encode(Self.sample)
        for cut in 0..<bytes.count {
            #expect(throws: HistoryEncoding.Failure.self) { try HistoryEncoding.decode(Array(bytes[..<cut])) }
        }
        var state: UInt64 = 0x1234_5678
        for _ in 0..<2_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            var damaged = bytes
            damaged[Int(state >> 33) % damaged.count] ^= UInt8(truncatingIfNeeded: state >> 8) | 1
            // Either it still decodes (a flipped bit in a string or a key) or it fails with a message.
            do { _ = try HistoryEncoding.decode(damaged) } catch { #expect(!error.description.isEmpty) }
        }
        #expect(throws: HistoryEncoding.Failure.self) { try HistoryEncoding.decode([2]) }
        #expect(throws: HistoryEncoding.Failure.self) { try HistoryEncoding.decode(bytes + [0]) }
    }

    // A tombstone value JSON could not hold (NaN, infinity) is kept by a real delete.
    @Test func aDeleteKeepsANaNInItsTombstone() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Reading") { Attribute("value", .double, preservesValueInHistoryOnDeletion: true) }
        }
        let (coordinator, context) = try HistorySupport.stack(model: model)
        try context.performAndWait {
            let reading = try HistorySupport.insert("Reading", ["value": Double.nan], into: context)
            try context.save()
            context.delete(reading)
            try context.save()
        }
        let tombstone = try HistorySupport.history(coordinator)[1].changes[0].tombstone
        #expect((tombstone?["value"] as? Double)?.isNaN == true)
    }
}
