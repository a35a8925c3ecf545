import Foundation
import Testing
@testable import GranaryStorage

/// `Engine.rewrite`: the whole content replaced in one atomic step.
@Suite struct StoreRewriteTests {
    /// The people table with an extra `email` column, as a schema migration might produce it.
    static let widened = TableSchema(
        name: "people",
        columns: peopleSchema.columns + [Column("email", .string)],
        indexes: peopleSchema.indexes + [IndexDefinition(name: "byEmail", on: "email", unique: true)])

    /// Copies every person into `people` with an email made from the name.
    func migrate(_ rewrite: StoreRewrite) throws {
        let oldID = try rewrite.source.tableID(of: "person")
        let table = try rewrite.addTable(Self.widened, id: oldID, nextKey: try rewrite.source.nextKey(in: "person"))
        for (key, row) in try rewrite.source.rows(in: "person") {
            guard case .string(let name) = row[0] else { continue }
            try table.append(Row(row.values + [.string(name.lowercased() + "@example.com")]), key: key)
        }
        rewrite.metadata.schemaVersion = "2"
    }

    @Test func replacesTheContentAndKeepsIndexesUsable() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        let before = engine.read()
        try engine.rewrite(migrate)
        let s = engine.read()
        #expect(s.tableNames == ["people"])
        #expect(try s.count(in: "people") == 8)
        #expect(try s.tableID(of: "people") == before.tableID(of: "person"))
        #expect(try names(s.query(IndexQuery(table: "people", index: "byEmail", equal: ["ada@example.com"]))) == ["Ada"])
        #expect(try names(s.query(IndexQuery(table: "people", index: "byName", prefix: "Al"))) == ["Alan", "Alice"])
        #expect(s.metadata.schemaVersion == "2")
        #expect(s.lsn == before.lsn + 1)
        // A reader that started before keeps its view.
        #expect(before.tableNames == ["person"])
        // The writer goes on from the new content, keys continuing after the old ones.
        let key = try engine.write { tx in try tx.insert(["Zed", 1, nil, "zed@example.com"], into: "people") }
        #expect(key == 9)
        #expect(engine.verify().isSound)
    }

    @Test func survivesReopenAndLaterCommitsToo() throws {
        let dir = temporaryDirectory()
        do {
            let engine = try Engine.open(.directory(dir))
            try makePeople(engine)
            try engine.rewrite(migrate)
            try engine.write { tx in try tx.insert(["Zed", 1, nil, "zed@example.com"], into: "people", key: 40) }
            let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(files.filter { $0.hasSuffix(".snap") }.count == 1)
            #expect(files.filter { $0.hasSuffix(".wal") }.count == 1)
            try engine.close()
        }
        let reopened = try Engine.open(.directory(dir))
        let s = reopened.read()
        #expect(s.tableNames == ["people"])
        #expect(try s.count(in: "people") == 9)
        #expect(try s.row(in: "people", key: 40)?[3] == "zed@example.com")
        #expect(reopened.recoveryReport.replayedCommits == 1)
        #expect(reopened.verify().isSound)
    }

    @Test func aDuplicateInANewUniqueIndexNamesTheRowsAndChangesNothing() throws {
        let dir = temporaryDirectory()
        let engine = try Engine.open(.directory(dir))
        try makePeople(engine)
        let before = engine.read()
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let unique = TableSchema(name: "person", columns: peopleSchema.columns,
                                 indexes: [IndexDefinition(name: "uniqueCity", on: "city", unique: true)])
        #expect {
            try engine.rewrite { rewrite in
                let table = try rewrite.addTable(unique)
                for (key, row) in try rewrite.source.rows(in: "person") { try table.append(row, key: key) }
            }
        } throws: { error in
            // London has three people, New York two; Edsger's null city is exempt.
            let text = "\(error)"
            return text.contains("uniqueCity") && text.contains("\"London\" in rows 1, 3, 8")
                && text.contains("\"New York\" in rows 2, 7")
        }
        #expect(engine.read().lsn == before.lsn)
        #expect(engine.read().tableNames == ["person"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == filesBefore)
        try engine.write { tx in try tx.insert(["New", 1, "Oslo"], into: "person", key: 50) }
        try engine.close()
        #expect(try Engine.open(.directory(dir)).read().count(in: "person") == 9)
    }

    @Test func rejectsKeysOutOfOrderAndRowsThatDoNotFit() throws {
        let engine = try Engine.open(.inMemory)
        try makePeople(engine)
        #expect(throws: StorageError.self) {
            try engine.rewrite { rewrite in
                let table = try rewrite.addTable(peopleSchema)
                try table.append(["B", 1, nil], key: 5)
                try table.append(["A", 1, nil], key: 4)
            }
        }
        #expect(throws: StorageError.self) {
            try engine.rewrite { rewrite in
                try rewrite.addTable(peopleSchema).append([nil, 1, nil], key: 1)
            }
        }
        #expect(throws: StorageError.self) {
            try engine.rewrite { rewrite in _ = try rewrite.addTable(peopleSchema, id: TableID(rawValue: 999)) }
        }
        #expect(engine.read().tableNames == ["person"])
        #expect(try engine.read().count(in: "person") == 8)
    }

    /// A rewrite that dies after its snapshot is in place but before the old log is gone (here: the new
    /// segment cannot be created) leaves a newest segment whose records are all older than the
    /// snapshot. Reopening must use the snapshot and start a fresh segment, so later commits are kept.
    @Test func aRewriteCutShortAfterItsSwitchOpensRewritten() throws {
        let dir = temporaryDirectory()
        do {
            let engine = try Engine.open(.directory(dir))
            try makePeople(engine)
            try engine.write { tx in try tx.update(["Ada", 37, "London"], in: "person", key: 1) }
            let fault = FaultInjection.add(pathContains: dir.path + "/log-", operation: .open, errno: EIO, persistent: true)
            defer { FaultInjection.remove(fault) }
            #expect(throws: StorageError.self) { try engine.rewrite(migrate) }
            // The handle is poisoned: it cannot know which log to append to.
            #expect(throws: StorageError.self) { try engine.write { tx in try tx.delete(from: "people", key: 1) } }
            try? engine.close()
        }
        do {
            let reopened = try Engine.open(.directory(dir))
            #expect(reopened.read().tableNames == ["people"])
            #expect(try reopened.read().row(in: "people", key: 1)?[1] == 37)
            try reopened.write { tx in try tx.insert(["Zed", 1, nil, "zed@example.com"], into: "people", key: 40) }
            try reopened.close()
        }
        let again = try Engine.open(.directory(dir))
        #expect(try again.read().count(in: "people") == 9)
        #expect(again.recoveryReport.truncatedTail == nil)
    }
}
