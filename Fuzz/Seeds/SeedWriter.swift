import Foundation
@_spi(Fuzzing) import GranaryStorage

/// Writes the seed corpora of the fuzz targets into `Fuzz/Corpus/<target>/` (`make fuzz-seeds`).
///
/// Seeds are real encodings, made by the engine itself (a log segment and a snapshot of a store that
/// went through every kind of operation, rows with every kind of value) or taken from the test fixtures
/// (the Xcode model files), so that fuzzing starts from inputs that reach deep into each reader; a
/// format change is picked up by running this again. Run from the repository root.
@main enum SeedWriter {
    static let corpus = URL(fileURLWithPath: "Fuzz/Corpus")

    static func main() throws {
        try predicates()
        try models()
        try rows()
        try storeFiles()
        print("fuzz-seeds: wrote the seed corpora under \(corpus.path)")
    }

    static func write(_ bytes: [UInt8], to target: String, named name: String) throws {
        let directory = corpus.appendingPathComponent(target)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    static func predicates() throws {
        let formats = [
            "a = 1 and b == 2 && not c != 3 or d <> 4 || !(e =< 5) OR f => 6", "TRUEPREDICATE", "FALSEPREDICATE OR truepredicate",
            "a == -3", "a == 2.5e2", "a == 0x1F", "a == \"it's\"", "a == 'say \\'hi\\''", "a == NO", "a != NULL",
            "a == CAST(100, \"NSDate\")", "a == CAST('E621E1F8-C36C-495A-93FC-0C247A3E6E5F', \"UUID\")", "a == CAST('00ff', \"NSData\")",
            "a == CAST('3/-4', \"RowReference\")", "a == CAST('2.5', \"Double\")", "#in == 1", "30 < age", "2 <= reports.@count",
            "n ENDSWITH[d] 'x'", "n contains[cd] 'x'", "n MATCHES '[a-z]+'", "n LIKE[c] 'a*b?'", "n !=[c] 'ab'", "a < b.c",
            "%K == %@", "manager.%K > %d", "x == %f", "x IN %@", "x IN {1, 'a', 2.5, nil, YES}", "age BETWEEN {%@, %@}",
            "SOME reports.manager.name == 'A'", "ALL reports.age > 3", "NONE reports.name BEGINSWITH 'x'",
            "ANY reports.age > 30 AND reports.@count >= 2", "SUBQUERY(reports, $r, $r.age > 3 AND $r.name == 'A').@count > 0",
            "SUBQUERY(reports, $r, SUBQUERY($r.reports, $s, $s.age < 2).@count == 0).@count != 0",
            "age > %@ AND name BEGINSWITH[c] %@ OR manager.name == 'Ada' AND NOT (flag == YES) AND dept IN %@",
            "born > CAST(1e10, \"NSDate\") OR born == nil", "x == %@ AND y == %@ AND z == %@ AND w == %@ AND v == %@",
            // The fields of the fuzz target's fetch fixture (FetchFixture), so that fetches get past the key check.
            "age > 30 AND name BEGINSWITH[c] 'a'", "salary < 5000.5 OR price >= '9.80'", "flag == YES AND born > CAST(0, \"NSDate\")",
            "id == CAST('E621E1F8-C36C-495A-93FC-0C247A3E6E5F', \"UUID\")", "blob == CAST('0102ff', \"NSData\")",
            "manager.name == 'Ada' OR manager == nil", "ANY reports.age BETWEEN {30, 40}", "reports.@count == 0",
            "SUBQUERY(reports, $r, $r.salary > 1000).@count > 0", "name IN {'Ada', 'Bob'} AND NOT age IN {1, 2}",
            "name LIKE[cd] 'e*' OR name MATCHES '[A-Z].*'", "age == %d AND salary == %f", "%K == %@ AND name != nil",
            "age >= -9223372036854775808 AND salary != -0.0 AND price < 1e400",
        ]
        for (i, format) in formats.enumerated() { try write(Array(format.utf8), to: "predicate", named: "seed-\(i)") }
    }

    static func models() throws {
        let fixtures = URL(fileURLWithPath: "Tests/GranaryTests/Fixtures")
        let files = [
            ("Library", "Library.xcdatamodel/contents"), ("Tasks", "Tasks.xcdatamodeld/Tasks.xcdatamodel/contents"),
            ("Tasks-2", "Tasks.xcdatamodeld/Tasks 2.xcdatamodel/contents"), ("Tasks-3", "Tasks.xcdatamodeld/Tasks 3.xcdatamodel/contents"),
        ]
        for (name, path) in files {
            let bytes = Array(try Data(contentsOf: fixtures.appendingPathComponent(path)))
            try write(bytes, to: "model", named: name)
            try write(bytes, to: "xml", named: name)
        }
        // What a model file rarely holds, but the reader must: every kind of markup XML allows.
        let documents = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<!DOCTYPE m>\n<!-- c --><m a=\"1\" b='&amp;&#x41;&#66;&lt;'>t<![CDATA[<x>]]><?pi x?><e/></m>",
            "<a>\r\n<b c=\"\t\"/>&quot;&apos;&gt;</a>",
            "\u{FEFF}<x y=\"é\">ü</x><!-- after -->",
        ]
        for (i, document) in documents.enumerated() { try write(Array(document.utf8), to: "xml", named: "markup-\(i)") }
    }

    static func rows() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let rows: [Row] = [
            Row([]), Row([.null]), Row([.bool(false), .bool(true)]), Row([.int(0), .int(-1), .int(Int64.max), .int(Int64.min)]),
            Row([.double(2.5), .double(-.infinity), .double(.nan)]), Row([.string(""), .string("Ada"), .string("Émile 🚀")]),
            Row([.bytes([]), .bytes([0, 1, 0xFF])]), Row([.date(Date(timeIntervalSinceReferenceDate: 86_400.5))]),
            Row([.uuid(uuid)]), Row([.reference(RowReference(table: TableID(rawValue: 3), key: 42))]),
            Row([.references([]), .references([RowReference(table: TableID(rawValue: 1), key: -4), RowReference(table: TableID(rawValue: 2), key: 1 << 40)])]),
            Row([.string("Ada"), .int(36), .string("London"), .null, .double(9000.5), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 0))]),
        ]
        for (i, row) in rows.enumerated() { try write(StorageFuzzing.encodeRow(row), to: "row", named: "seed-\(i)") }
    }

    /// A store taken through every kind of operation, with its log before a checkpoint and its snapshot after.
    static func storeFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("granary-fuzz-seeds-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try Engine.open(.directory(directory), options: Engine.Options(durability: .off))
        let person = try engine.write { tx in
            var metadata = engine.metadata
            metadata.schemaVersion = "1"
            try tx.setMetadata(metadata)
            let person = try tx.createTable(TableSchema(
                name: "person",
                columns: [Column("name", .string, nullable: false), Column("age", .int), Column("city", .string)],
                indexes: [IndexDefinition(name: "byName", on: "name", unique: true),
                          IndexDefinition(name: "byCityAge", columns: [IndexColumn("city"), IndexColumn("age", descending: true)])]))
            _ = try tx.createTable(TableSchema(name: "note", columns: [Column("text", .string), Column("author", .reference)]))
            return person
        }
        try engine.write { tx in
            try tx.insert([.string("Ada"), .int(36), .string("London")], into: "person", key: 1)
            try tx.insert([.string("Grace"), .int(85), .null], into: "person", key: 2)
            try tx.insert([.string("hello"), .reference(RowReference(table: person, key: 1))], into: "note", key: 1)
        }
        try engine.write { tx in
            try tx.update([.string("Ada"), .int(37), .string("Paris")], in: "person", key: 1)
            try tx.delete(from: "note", key: 1)
            try tx.addColumn(Column("email", .string), to: "person")
            try tx.createIndex(IndexDefinition(name: "byAge", on: "age"), on: "person")
            _ = try tx.reserveKeys(10, in: "note")
        }
        try engine.write { tx in
            try tx.renameTable("note", to: "memo")
            try tx.dropIndex(named: "byAge", on: "person")
            var metadata = engine.metadata
            metadata.schemaVersion = "2"
            metadata.userInfo = ["k": "v"]
            try tx.setMetadata(metadata)
        }
        let log = try trimmed(file(in: directory, suffix: ".wal"))
        try engine.checkpoint()
        try engine.write { tx in try tx.insert([.string("Alan"), .int(41), .string("London"), .null], into: "person", key: 3) }
        let snapshot = try file(in: directory, suffix: ".snap")
        let tail = try trimmed(file(in: directory, suffix: ".wal"))
        try engine.close()

        for mode: UInt8 in [0, 1] {
            try write([mode] + log, to: "log", named: "segment-\(mode)")
            try write([mode] + log + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], to: "log", named: "preallocated-\(mode)")
            try write([mode] + Array(log.prefix(log.count - 5)), to: "log", named: "torn-\(mode)")
        }
        for mode: UInt8 in [0, 1, 2, 3] { try write([mode] + snapshot, to: "snapshot", named: "snapshot-\(mode)") }
        let length = [UInt8(snapshot.count & 0xFF), UInt8(snapshot.count >> 8)]
        precondition(snapshot.count < 1 << 16, "the store seed's snapshot outgrew its u16 length")
        try write([0] + length + snapshot + tail, to: "store", named: "snapshot-and-log")
        try write([1, 0, 0] + log, to: "store", named: "log-only")
        try write([1] + length + snapshot, to: "store", named: "snapshot-only")
    }

    /// A log segment without the zeros the writer preallocates past its last frame (a megabyte), which
    /// would make the seeds large and slow to mutate; one seed keeps a few.
    static func trimmed(_ log: [UInt8]) -> [UInt8] {
        Array(log[..<((log.lastIndex { $0 != 0 } ?? -1) + 1)])
    }

    /// The bytes of the one file in `directory` whose name ends in `suffix`.
    static func file(in directory: URL, suffix: String) throws -> [UInt8] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(suffix) }.sorted()
        guard let name = names.last else { throw CocoaError(.fileNoSuchFile) }
        return Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}
