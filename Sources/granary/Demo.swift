import ArgumentParser
import Foundation
import GranaryStorage

/// The main job of `make demo`: builds a small library catalogue in a durable store, queries it,
/// checkpoints, reopens and verifies it, and says what each step did and how long it took.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the demo on a default embedded store and print what it did.")

    @Option(help: "Store directory (default: the per-user data directory, e.g. ~/.local/share/granary/Demo.granary).")
    var store: String?
    @Option(help: "Books to insert in the bulk transaction.") var books = 20_000
    @Flag(help: "Delete the demo store first instead of continuing the previous run's.") var fresh = false

    static var defaultLocation: URL {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("granary/Demo.granary")
    }

    func run() throws {
        try reportingFailures { try runDemo() }
    }

    private func step<T>(_ label: String, _ body: () throws -> T) rethrows -> T {
        let start = ContinuousClock.now
        let result = try body()
        let ms = (ContinuousClock.now - start) / .milliseconds(1)
        print(String(format: "  %-52@ %9.2f ms", label as NSString, ms))
        return result
    }

    private func runDemo() throws {
        let url = store.map { URL(fileURLWithPath: $0) } ?? Self.defaultLocation
        if fresh {
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.removeItem(at: url.deletingLastPathComponent().appendingPathComponent("Library.granary"))
            try? FileManager.default.removeItem(at: url.deletingLastPathComponent().appendingPathComponent("Members.granary"))
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        print("Granary demo")
        print("stores: \(url.deletingLastPathComponent().path)\n")
        let library = url.deletingLastPathComponent().appendingPathComponent("Library.granary")
        try ObjectGraphDemo.run(store: library)
        try MigrationDemo.run(copying: library)
        try RecordsDemo.run(store: url.deletingLastPathComponent().appendingPathComponent("Members.granary"))
        try SyncDemo.run(directory: url.deletingLastPathComponent().appendingPathComponent("Sync", isDirectory: true))
        print("Storage engine (module GranaryStorage), store \(url.lastPathComponent)")

        var engine = try step("open (recover log + snapshot)") { try Engine.open(.directory(url)) }
        let report = engine.recoveryReport
        print("  recovered: snapshot at commit \(report.snapshotLSN.map(String.init) ?? "none"), \(report.replayedCommits) commits replayed from the log")

        let schema = TableSchema(
            name: "book",
            columns: [Column("title", .string, nullable: false), Column("author", .reference), Column("year", .int),
                      Column("price", .double), Column("isbn", .string), Column("added", .date)],
            indexes: [IndexDefinition(name: "byIsbn", on: "isbn", unique: true),
                      IndexDefinition(name: "byYearPrice", on: "year", "price"),
                      IndexDefinition(name: "byTitle", on: "title")])
        let authors = ["Le Guin", "Borges", "Calvino", "Morrison", "Lem", "Achebe", "Atwood", "Pratchett"]
        try engine.write { tx in
            if !tx.snapshot.tableNames.contains("author") {
                try tx.createTable(TableSchema(name: "author", columns: [Column("name", .string, nullable: false)],
                                               indexes: [IndexDefinition(name: "byName", on: "name", unique: true)]))
                try tx.createTable(schema)
                for name in authors { try tx.insert([.string(name)], into: "author") }
            }
        }
        let authorTable = try engine.read().tableID(of: "author")
        let existing = try engine.read().count(in: "book")
        print("  the store holds \(existing) books from earlier runs\n")

        let firstKey = try engine.read().nextKey(in: "book")
        try step("insert \(books) books in one transaction") {
            try engine.write { tx in
                for i in 0..<Int64(books) {
                    let n = firstKey + i
                    try tx.insert([.string("Volume \(n)"), .reference(RowReference(table: authorTable, key: 1 + n % 8)),
                                   .int(1950 + n % 75), .double(Double(n % 4000) / 100), .string("978-\(n)"),
                                   .date(Date())], into: "book", key: n)
                }
            }
        }
        let durable = 200
        try step("\(durable) small durable commits (fdatasync each)") {
            for i in 0..<durable {
                try engine.write { tx in
                    try tx.update([.string("Volume \(firstKey + Int64(i)) (2nd ed.)"), .reference(RowReference(table: authorTable, key: 1)),
                                   .int(2024), .double(9.99), .string("978-\(firstKey + Int64(i))"), .date(Date())],
                                  in: "book", key: firstKey + Int64(i))
                }
            }
        }

        let snapshot = engine.read()
        let lookups = try step("10,000 point lookups by key") {
            var found = 0
            for i in 0..<10_000 where try snapshot.row(in: "book", key: firstKey + Int64(i % books)) != nil { found += 1 }
            return found
        }
        print("    found \(lookups) of 10000")
        let isbn = try step("unique-index lookup isbn = 978-\(firstKey + 42)") {
            try snapshot.query(IndexQuery(table: "book", index: "byIsbn", equal: [.string("978-\(firstKey + 42)")]))
        }
        print("    -> \(isbn.map { "\($0.row[0])" }.joined())")
        let cheap = try step("year = 1999, price 5...10, cheapest 5") {
            try snapshot.query(IndexQuery(table: "book", index: "byYearPrice", equal: [.int(1999)], range: .closed(.double(5), .double(10)), limit: 5))
        }
        for (_, row) in cheap { print("    -> \(row[0]) \(row[3])") }
        let prefixCount = try step("titles starting with \"Volume 12\"") {
            try snapshot.count(IndexQuery(table: "book", index: "byTitle", prefix: "Volume 12"))
        }
        print("    -> \(prefixCount) titles")

        let rejected: String
        do {
            try engine.write { tx in try tx.insert([.string("Duplicate"), .null, .null, .null, .string("978-\(firstKey)"), .null], into: "book") }
            rejected = "accepted (unexpected)"
        } catch let error as StorageError {
            rejected = "\(error)"
        }
        print("  a duplicate ISBN is rejected: \(rejected)")

        try step("checkpoint (LZ4 snapshot, log compacted)") { try engine.checkpoint() }
        let info = engine.info()
        print("    snapshot \(formatBytes(info.snapshotBytes)), log \(formatBytes(info.logBytes)); \(info.tables.map { "\($0.name) \($0.rows) rows" }.joined(separator: ", "))")
        let lsn = engine.read().lsn
        try engine.close()

        engine = try step("reopen") { try Engine.open(.directory(url)) }
        let reopened = engine.read()
        print("    reopened at commit \(reopened.lsn) (was \(lsn)), \(try reopened.count(in: "book")) books")
        let verification = step("verify checksums and indexes") { engine.verify() }
        print("    \(verification.isSound ? "sound" : "PROBLEMS: \(verification.problems)"): \(verification.rowsChecked) rows, \(verification.indexEntriesChecked) index entries, \(verification.filesChecked.count) files")
        try engine.close()
        print("\nRun again to continue with this store, or pass --fresh to start over.")
        print("Inspect it with: swift run granary info \(url.path)")
    }
}
