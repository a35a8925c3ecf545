import Foundation
import Synchronization
import Testing
@testable import GranaryStorage

@Suite struct EngineTests {
    @Test func insertReadUpdateDelete() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let s = engine.read()
        #expect(try s.count(in: "person") == 8)
        #expect(try s.row(in: "person", key: 1) == ["Ada", 36, "London"])
        try engine.write { tx in
            try tx.update(["Ada", 37, "London"], in: "person", key: 1)
            try tx.delete(from: "person", key: 2)
        }
        let after = engine.read()
        #expect(try after.row(in: "person", key: 1)?[1] == 37)
        #expect(try after.row(in: "person", key: 2) == nil)
        #expect(try after.count(in: "person") == 7)
        #expect(after.lsn == s.lsn + 1)
    }

    /// Writes that name the table by its identifier do what writes by name do, indexes and log
    /// included (a reopened durable engine replays them); an identifier no table has is refused.
    @Test func writesByTableIdentifierMatchWritesByName() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            do {
                let engine = try Engine.open(.directory(dir))
                try makePeople(engine)
                let id = try engine.read().tableID(of: "person")
                try engine.write { tx in
                    try tx.insert(["Zoe", 30, "Oslo"], into: id, key: 100)
                    try tx.update(["Ada", 37, "London"], in: id, key: 1)
                    try tx.delete(from: id, key: 2)
                }
                #expect(throws: StorageError.self) { try engine.write { tx in try tx.insert(["X", 1, "Y"], into: TableID(rawValue: 999), key: 1) } }
                // The unique index on names is checked as by name.
                #expect(throws: StorageError.self) { try engine.write { tx in try tx.insert(["Ada", 1, "Y"], into: id, key: 101) } }
                try engine.close()
            }
            let reopened = try Engine.open(.directory(dir))
            let s = reopened.read()
            #expect(try s.row(in: "person", key: 100) == ["Zoe", 30, "Oslo"])
            #expect(try s.row(in: "person", key: 1)?[1] == 37)
            #expect(try s.row(in: "person", key: 2) == nil)
            #expect(try s.queryKeys(IndexQuery(table: "person", index: "byName", equal: ["Zoe"])) == [100])
            #expect(try s.row(in: "person", key: 101) == nil)
            try reopened.close()
        }
    }

    /// A batch of equality probes finds, for each tuple, what one index query per tuple finds first,
    /// whatever order the tuples come in: present and missing values, a prefix of a two-column index,
    /// a tuple with a null, and the same tuple twice.
    @Test func batchedIndexProbesFindWhatSingleQueriesFindFirst() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let s = engine.read()
        let byName: [[Value]] = [["Ken"], ["Nobody"], ["Ada"], ["Alice"], ["Ada"], ["Zed"], ["A"]]
        let byCityAge: [[Value]] = [["London"], ["London", 41], ["London", 99], ["Portland", 54], [.null], ["New York"], ["Boston", .null]]
        let byAgeDesc: [[Value]] = [[80], [36], [1], [.null], [85]]
        for (index, probes) in [("byName", byName), ("byCityAge", byCityAge), ("byAgeDesc", byAgeDesc)] {
            let batched = try s.firstKeys(in: "person", index: index, equalTo: probes)
            let single = try probes.map { try s.queryKeys(IndexQuery(table: "person", index: index, equal: $0)).first }
            #expect(batched == single, "index \(index)")
        }
        #expect(try s.firstKeys(in: "person", index: "byName", equalTo: byName) == [7, nil, 1, 8, 1, nil, nil])
        #expect(throws: StorageError.noSuchIndex(table: "person", index: "byNothing")) {
            try s.firstKeys(in: "person", index: "byNothing", equalTo: [["Ada"]])
        }
        #expect(throws: StorageError.self) { try s.firstKeys(in: "person", index: "byName", equalTo: [["Ada", 36]]) }
    }

    /// Rows handed out still encoded decode to what `forEachRow` gives, in the same key order, and
    /// returning false stops the walk.
    @Test func encodedRowsWalkLikeDecodedOnes() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        try engine.write { tx in try tx.delete(from: "person", key: 3) }
        let s = engine.read()
        var decoded: [(Int64, Row)] = []
        try s.forEachRow(in: "person") { key, row in
            decoded.append((key, row))
            return true
        }
        var encoded: [(Int64, Row)] = []
        try s.forEachEncodedRow(in: "person") { row in
            encoded.append((row.key, try row.decode()))
            return true
        }
        #expect(encoded.count == 7)
        #expect(encoded.map(\.0) == decoded.map(\.0))
        #expect(encoded.map(\.1) == decoded.map(\.1))
        var visited = 0
        try s.forEachEncodedRow(in: "person") { _ in
            visited += 1
            return visited < 2
        }
        #expect(visited == 2)
        #expect(throws: StorageError.self) { try s.forEachEncodedRow(in: "nope") { _ in true } }
    }

    @Test func snapshotIsUnchangedByLaterCommits() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let before = engine.read()
        try engine.write { tx in
            for k in 1...8 { try tx.delete(from: "person", key: Int64(k)) }
            try tx.insert(["Zed", 1, "Nowhere"], into: "person", key: 100)
        }
        #expect(try before.count(in: "person") == 8)
        #expect(try names(before.query(IndexQuery(table: "person", index: "byName"))).first == "Ada")
        #expect(try engine.read().count(in: "person") == 1)
    }

    @Test func thrownBlockKeepsNothing() throws {
        struct Abort: Error {}
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let lsn = engine.read().lsn
        #expect(throws: Abort.self) {
            try engine.write { tx in
                try tx.insert(["Temp", 1, "X"], into: "person", key: 50)
                try tx.delete(from: "person", key: 1)
                throw Abort()
            }
        }
        let s = engine.read()
        #expect(s.lsn == lsn)
        #expect(try s.row(in: "person", key: 50) == nil)
        #expect(try s.row(in: "person", key: 1) != nil)
        #expect(try s.queryKeys(IndexQuery(table: "person", index: "byName", equal: ["Temp"])).isEmpty)
    }

    @Test func uniqueViolationNamesTableIndexAndValueAndChangesNothing() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        try engine.write { tx in
            do {
                try tx.insert(["Ada", 1, "Paris"], into: "person", key: 60)
                Issue.record("expected a unique violation")
            } catch let error as StorageError {
                #expect(error == .uniqueViolation(table: "person", index: "byName", value: "\"Ada\" (held by row 1)"))
                #expect(error.description.contains("byName") && error.description.contains("person") && error.description.contains("Ada"))
            }
            // The failed insert left nothing behind, so the transaction can go on.
            #expect(try tx.row(in: "person", key: 60) == nil)
            try tx.insert(["Ada Jr", 1, "Paris"], into: "person", key: 61)
        }
        let s = engine.read()
        #expect(try s.queryKeys(IndexQuery(table: "person", index: "byName", equal: ["Ada"])) == [1])
        #expect(try s.row(in: "person", key: 61) != nil)
        #expect(try s.count(IndexQuery(table: "person", index: "byCityAge", equal: ["Paris"])) == 1)
    }

    @Test func updateThatViolatesUniquenessIsRejected() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        #expect(throws: StorageError.self) {
            try engine.write { tx in try tx.update(["Grace", 36, "London"], in: "person", key: 1) }
        }
        #expect(try engine.read().row(in: "person", key: 1)?[0] == "Ada")
    }

    @Test func schemaIsEnforced() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        #expect(throws: StorageError.typeMismatch(table: "person", column: "age", expected: .int, value: "string \"old\"")) {
            try engine.write { tx in try tx.insert(["Old", "old", nil], into: "person", key: 70) }
        }
        #expect(throws: StorageError.nullViolation(table: "person", column: "name")) {
            try engine.write { tx in try tx.insert([nil, 1, nil], into: "person", key: 71) }
        }
        #expect(throws: StorageError.duplicateKey(table: "person", key: 1)) {
            try engine.write { tx in try tx.insert(["Dup", 1, nil], into: "person", key: 1) }
        }
        #expect(throws: StorageError.noSuchRow(table: "person", key: 999)) {
            try engine.write { tx in try tx.delete(from: "person", key: 999) }
        }
        #expect(throws: StorageError.noSuchTable("nope")) { try engine.read().row(in: "nope", key: 1) }
        #expect(throws: StorageError.self) {
            try engine.write { tx in try tx.insert(["a", 1, "b", "too many"], into: "person", key: 72) }
        }
    }

    @Test func keysAreNeverReused() throws {
        let engine = try Engine.open(.inMemory)
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int)])) }
        let k1 = try engine.write { tx in try tx.insert([1], into: "t") }
        let k2 = try engine.write { tx in try tx.insert([2], into: "t") }
        try engine.write { tx in try tx.delete(from: "t", key: k2) }
        let k3 = try engine.write { tx in try tx.insert([3], into: "t") }
        #expect(k1 == 1 && k2 == 2 && k3 == 3)
    }

    @Test func equalityRangePrefixAndOrderQueries() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let s = engine.read()
        let london = try s.query(IndexQuery(table: "person", index: "byCityAge", equal: ["London"]))
        #expect(names(london) == ["Alice", "Ada", "Alan"])  // ordered by age within the city
        let londonReversed = try s.query(IndexQuery(table: "person", index: "byCityAge", equal: ["London"], reverse: true))
        #expect(names(londonReversed) == ["Alan", "Ada", "Alice"])
        let range = try s.query(IndexQuery(table: "person", index: "byCityAge", equal: ["London"], range: .closed(31, 41)))
        #expect(names(range) == ["Ada", "Alan"])
        let open = try s.query(IndexQuery(table: "person", index: "byCityAge", equal: ["London"], range: .init(lower: 30, lowerInclusive: false, upper: 41, upperInclusive: false)))
        #expect(names(open) == ["Ada"])
        let prefix = try s.query(IndexQuery(table: "person", index: "byName", prefix: "Al"))
        #expect(names(prefix) == ["Alan", "Alice"])
        let limited = try s.query(IndexQuery(table: "person", index: "byName", offset: 2, limit: 3))
        #expect(names(limited) == ["Alice", "Barbara", "Edsger"])
    }

    @Test func descendingIndexAndNullsInRanges() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let s = engine.read()
        // Descending: oldest first; the null age (Barbara) sorts last and never matches a range.
        let all = try s.query(IndexQuery(table: "person", index: "byAgeDesc"))
        #expect(names(all) == ["Grace", "Ken", "Edsger", "Linus", "Alan", "Ada", "Alice", "Barbara"])
        let young = try s.query(IndexQuery(table: "person", index: "byAgeDesc", range: .lessThan(41)))
        #expect(names(young) == ["Ada", "Alice"])
        let old = try s.query(IndexQuery(table: "person", index: "byAgeDesc", range: .atLeast(72), limit: 2))
        #expect(names(old) == ["Grace", "Ken"])
        let youngestFirst = try s.query(IndexQuery(table: "person", index: "byAgeDesc", range: .atMost(41), reverse: true))
        #expect(names(youngestFirst) == ["Alice", "Ada", "Alan"])
        let cityNull = try s.query(IndexQuery(table: "person", index: "byCityAge", equal: [nil]))
        #expect(names(cityNull) == ["Edsger"])
    }

    @Test func malformedQueriesThrow() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let s = engine.read()
        #expect(throws: StorageError.noSuchIndex(table: "person", index: "nope")) { try s.query(IndexQuery(table: "person", index: "nope")) }
        #expect(throws: StorageError.self) { try s.query(IndexQuery(table: "person", index: "byName", equal: ["a", "b"])) }
        #expect(throws: StorageError.self) { try s.query(IndexQuery(table: "person", index: "byName", range: .atLeast("a"), prefix: "a")) }
        #expect(throws: StorageError.self) { try s.query(IndexQuery(table: "person", index: "byName", offset: -1)) }
    }

    @Test func createIndexOnExistingRowsAndRejectDuplicates() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        try engine.write { tx in try tx.createIndex(IndexDefinition(name: "byAge", on: "age"), on: "person") }
        #expect(try engine.read().count(IndexQuery(table: "person", index: "byAge", range: .atLeast(0))) == 7)
        #expect(throws: StorageError.self) {
            try engine.write { tx in try tx.createIndex(IndexDefinition(name: "byCity", on: "city", unique: true), on: "person") }
        }
        #expect(try engine.read().schema(of: "person").indexes.map(\.name) == ["byName", "byCityAge", "byAgeDesc", "byAge"])
    }

    @Test func schemaChangesAddColumnRenameDrop() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        try engine.write { tx in
            try tx.addColumn(Column("email", .string), to: "person")
            try tx.update(["Ada", 36, "London", "ada@example.com"], in: "person", key: 1)
            try tx.renameTable("person", to: "human")
        }
        let s = engine.read()
        #expect(try s.row(in: "human", key: 1)?[3] == "ada@example.com")
        #expect(try s.row(in: "human", key: 2)?[3] == .null)
        #expect(s.tableNames == ["human"])
        try engine.write { tx in try tx.dropTable("human") }
        #expect(engine.read().tableNames.isEmpty)
    }

    @Test func changeSummaryFoldsWritesPerKey() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let received = Mutex<[ChangeSummary]>([])
        let observation = engine.observeChanges { summary in received.withLock { $0.append(summary) } }
        try engine.write { tx in
            try tx.insert(["New", 1, nil], into: "person", key: 20)
            try tx.update(["New", 2, nil], in: "person", key: 20)      // still "inserted"
            try tx.insert(["Gone", 1, nil], into: "person", key: 21)
            try tx.delete(from: "person", key: 21)                      // vanishes
            try tx.update(["Ada", 40, "London"], in: "person", key: 1)  // updated
            try tx.delete(from: "person", key: 2)                       // deleted
        }
        try engine.write { tx in try tx.insert(["Other", 3, nil], into: "person", key: 22) }
        observation.cancel()
        try engine.write { tx in try tx.delete(from: "person", key: 22) }
        let summaries = received.withLock { $0 }
        #expect(summaries.count == 2)
        #expect(summaries[0].tables["person"] == TableChanges(inserted: [20], updated: [1], deleted: [2]))
        #expect(summaries[1].lsn == summaries[0].lsn + 1)
    }

    @Test func asyncChangeStreamDeliversCommitsInOrder() async throws {
        let engine = try Engine.open(.inMemory)
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int)])) }
        let stream = engine.changes()
        for i in 1...5 { try engine.write { tx in try tx.insert([.int(Int64(i))], into: "t", key: Int64(i)) } }
        var keys: [Int64] = []
        for await summary in stream {
            keys += summary.tables["t"]?.inserted ?? []
            if keys.count == 5 { break }
        }
        #expect(keys == [1, 2, 3, 4, 5])
    }

    @Test func readersRunBesideAWriter() throws {
        let engine = try Engine.open(.inMemory)
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int)])) }
        let stop = Mutex(false)
        let inconsistent = Mutex(0)
        let reader = Thread {
            while !stop.withLock({ $0 }) {
                // Each commit inserts two rows with the same value: a snapshot must never see one alone.
                let s = engine.read()
                if (try? s.count(in: "t")).map({ $0 % 2 != 0 }) ?? true { inconsistent.withLock { $0 += 1 } }
            }
        }
        reader.start()
        for i in 0..<2000 {
            try engine.write { tx in
                try tx.insert([.int(Int64(i))], into: "t")
                try tx.insert([.int(Int64(i))], into: "t")
            }
        }
        stop.withLock { $0 = true }
        #expect(inconsistent.withLock { $0 } == 0)
        #expect(try engine.read().count(in: "t") == 4000)
    }
}
