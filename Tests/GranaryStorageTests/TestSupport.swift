import Foundation
@testable import GranaryStorage

/// A fresh directory under the system temp folder, unique per call.
func temporaryDirectory(_ label: String = #function) -> URL {
    let safe = label.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("granary-tests")
        .appendingPathComponent("\(safe)-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The people table most engine tests use: name (unique), age, city, with a descending age index.
let peopleSchema = TableSchema(
    name: "person",
    columns: [Column("name", .string, nullable: false), Column("age", .int), Column("city", .string)],
    indexes: [
        IndexDefinition(name: "byName", on: "name", unique: true),
        IndexDefinition(name: "byCityAge", columns: [IndexColumn("city"), IndexColumn("age")]),
        IndexDefinition(name: "byAgeDesc", columns: [IndexColumn("age", descending: true)]),
    ])

func makePeople(_ engine: Engine) throws {
    try engine.write { tx in
        try tx.createTable(peopleSchema)
        let people: [(String, Value, Value)] = [
            ("Ada", 36, "London"), ("Grace", 85, "New York"), ("Alan", 41, "London"), ("Linus", 54, "Portland"),
            ("Barbara", nil, "Boston"), ("Edsger", 72, nil), ("Ken", 80, "New York"), ("Alice", 30, "London"),
        ]
        for (i, p) in people.enumerated() {
            try tx.insert([.string(p.0), p.1, p.2], into: "person", key: Int64(i + 1))
        }
    }
}

func names(_ rows: [(key: Int64, row: Row)]) -> [String] {
    rows.map { if case .string(let s) = $0.row[0] { return s } else { return "?" } }
}
