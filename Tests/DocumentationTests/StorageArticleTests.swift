import Foundation
import GranaryStorage
import Testing

/// The code of GranaryStorage's landing page and of the articles "Using the engine" and "On-disk format
/// and recovery", run against real stores.
@Suite struct StorageArticleTests {
    /// A store with the landing page's `book` table and one book in it.
    static func bookStore(at url: URL) throws -> Engine {
        let engine = try Engine.open(.directory(url))
        try engine.write { tx in
            try tx.createTable(TableSchema(
                name: "book",
                columns: [Column("title", .string, nullable: false), Column("year", .int), Column("isbn", .string)],
                indexes: [IndexDefinition(name: "byIsbn", on: "isbn", unique: true),
                          IndexDefinition(name: "byYear", on: "year")]))
            try tx.insert(["Solaris", 1961, "978-0156027601"], into: "book")
        }
        return engine
    }

    @Test func theOverviewRuns() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        // snippet: storage-overview
        let engine = try Engine.open(.directory(url))                  // or .inMemory
        try engine.write { tx in
            try tx.createTable(TableSchema(
                name: "book",
                columns: [Column("title", .string, nullable: false), Column("year", .int), Column("isbn", .string)],
                indexes: [IndexDefinition(name: "byIsbn", on: "isbn", unique: true),
                          IndexDefinition(name: "byYear", on: "year")]))
            try tx.insert(["Solaris", 1961, "978-0156027601"], into: "book")
        }

        let snapshot = engine.read()                      // O(1), consistent, never blocks the writer
        let sixties = try snapshot.query(IndexQuery(table: "book", index: "byYear",
                                                    range: .halfOpen(1960, 1970), limit: 20))
        let observation = engine.observeChanges { summary in print(summary.tables) }  // or engine.changes()
        // end-snippet
        #expect(sixties.map(\.row) == [["Solaris", 1961, "978-0156027601"]])
        observation.cancel()
        try engine.close()
    }

    @Test func aFailedOperationOrAThrowingBlockKeepsWhatItShould() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        // snippet: storage-transactions
        try engine.write { tx in
            try tx.insert(["The Cyberiad", 1965, "978-0156027595"], into: "book")
            do {
                try tx.insert(["The Cyberiad (again)", 1965, "978-0156027595"], into: "book")   // same ISBN
            } catch StorageError.uniqueViolation(let table, let index, let value) {
                print("\(table).\(index) already holds \(value)")        // the first insert stays
            }
        }

        struct Cancelled: Error {}
        do {
            try engine.write { tx in
                try tx.insert(["Fiasco", 1986, "978-0156306706"], into: "book")
                throw Cancelled()                                         // nothing of this block is kept
            }
        } catch is Cancelled {}
        // end-snippet
        let titles = try engine.read().rows(in: "book").map { $0.row[0] }
        #expect(titles == ["Solaris", "The Cyberiad"])
        try engine.close()
    }

    @Test func aSnapshotNeverChanges() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        // snippet: storage-snapshots
        let before = engine.read()
        try engine.write { tx in try tx.insert(["Eden", 1959, "978-0156278102"], into: "book") }
        let then = try before.count(in: "book")        // as it was: a snapshot never changes
        let now = try engine.read().count(in: "book")  // one more
        // end-snippet
        #expect(then == 1 && now == 2)
        try engine.close()
    }

    @Test func durabilityOptionsOpenAStore() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        // snippet: storage-options
        let engine = try Engine.open(.directory(url), options: Engine.Options(durability: .normal(milliseconds: 50),
                                                                              checkpointThreshold: 16 << 20))
        // end-snippet
        #expect(engine.options.durability == .normal(milliseconds: 50))
        try engine.close()
    }

    @Test func indexQueriesAnswerAsTheArticleSays() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        try engine.write { tx in
            try tx.insert(["The Cyberiad", 1965, "978-0156027595"], into: "book")
            try tx.insert(["Fiasco", 1986, "978-0156306706"], into: "book")
        }
        // snippet: storage-queries
        let snapshot = engine.read()
        let byPrefix = try snapshot.query(IndexQuery(table: "book", index: "byIsbn", prefix: "978-01560"))
        let newestFirst = try snapshot.query(IndexQuery(table: "book", index: "byYear", reverse: true, limit: 10))
        let inSixties = try snapshot.count(IndexQuery(table: "book", index: "byYear", range: .closed(1960, 1969)))
        for (key, row) in newestFirst { print(key, row[0], row[1]) }
        // end-snippet
        #expect(byPrefix.map { $0.row[0] } == ["The Cyberiad", "Solaris"])
        #expect(newestFirst.map { $0.row[1] } == [1986, 1965, 1961])
        #expect(inSixties == 2)
        try engine.close()
    }

    @Test func observersSeeEachCommit() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        // snippet: storage-observe
        let observation = engine.observeChanges { summary in
            for (table, changes) in summary.tables {
                print("commit \(summary.lsn): \(table) +\(changes.inserted.count) ~\(changes.updated.count) -\(changes.deleted.count)")
            }
        }
        try engine.write { tx in try tx.delete(from: "book", key: 1) }
        observation.cancel()                                 // or let it go
        // end-snippet
        #expect(try engine.read().count(in: "book") == 0)
        try engine.close()
    }

    @Test func aRewriteReplacesTheContent() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        // snippet: storage-rewrite
        try engine.rewrite { rewrite in
            let old = rewrite.source
            let books = try rewrite.addTable(try old.schema(of: "book"), id: try old.tableID(of: "book"))
            for (key, row) in try old.rows(in: "book") {             // in increasing key order
                var row = row
                if case .string(let title) = row[0] { row[0] = .string(title.uppercased()) }
                try books.append(row, key: key)
            }
        }                                                          // tables not added are dropped
        // end-snippet
        try engine.close()
        let reopened = try Engine.open(.directory(url))
        #expect(try reopened.read().rows(in: "book").map { $0.row[0] } == ["SOLARIS"])
        #expect(reopened.verify().isSound)
        try reopened.close()
    }

    @Test func verifyFindsASoundStoreSound() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let engine = try Self.bookStore(at: url)
        // snippet: storage-verify
        let report = engine.verify()
        for problem in report.problems { print(problem) }     // each names the file, table, index or row
        // end-snippet
        #expect(report.isSound && report.rowsChecked == 1)
        try engine.close()
    }

    /// The article's three ways of opening a damaged store, on a store whose log has a flipped byte
    /// with intact commits after it.
    @Test func aDamagedStoreIsRefusedKeptToAPrefixOrSalvaged() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let rescued = url.deletingLastPathComponent().appendingPathComponent("Rescued.granary")
        do {
            let engine = try Self.bookStore(at: url)
            for year in 1962...1981 {
                try engine.write { tx in try tx.insert([.string("Book \(year)"), .int(Int64(year)), nil], into: "book") }
            }
            try engine.close()
        }
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: url.path).first { $0.hasSuffix(".wal") })
        let file = url.appendingPathComponent(segment)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: file)

        #expect(throws: StorageError.self) { try Engine.open(.directory(url)) }
        // snippet: storage-strict-open
        do {
            let engine = try Engine.open(.directory(url))
            try engine.close()
        } catch StorageError.corruption(let file, let offset, let reason) {
            print("damaged: \(file) at offset \(offset): \(reason)")     // the files are as they were
        }
        // end-snippet
        #expect(try Data(contentsOf: file) == bytes)

        // snippet: storage-salvage
        let report = try Engine.salvage(url, into: rescued)   // `rescued` must not exist yet
        print(report)                                         // what was kept, what is missing, where the damage is
        if !report.isComplete { print("missing commits: \(report.missingCommits)") }
        // end-snippet
        #expect(!report.isComplete)
        #expect(report.damage.count >= 1)

        // snippet: storage-keep-prefix
        let engine = try Engine.open(.directory(url), options: Engine.Options(recovery: .keepConsistentPrefix))
        if let lost = engine.recoveryReport.lostCommits {
            print("kept the commits up to \(lost.afterLSN); \(lost.file) at offset \(lost.offset): \(lost.reason)")
            print("set aside: \(lost.quarantinedFiles)")
        }
        // end-snippet
        let lost = try #require(engine.recoveryReport.lostCommits)
        // Commit 1 of a new store is its metadata; each later commit before the damage added one book.
        #expect(try engine.read().count(in: "book") == Int(lost.afterLSN) - 1)
        #expect(engine.verify().isSound)

        try engine.close()
    }
}
