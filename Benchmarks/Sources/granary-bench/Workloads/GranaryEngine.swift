import Foundation
import GranaryStorage

/// The `item` table as Granary declares it; the key (`id`) is the row key, not a column.
let granaryItemSchema = TableSchema(
    name: "item",
    columns: [Column("name", .string), Column("category", .int), Column("price", .double),
              Column("flag", .bool), Column("created", .date)],
    indexes: [IndexDefinition(name: "byCategory", on: "category"),
              IndexDefinition(name: "byCategoryPrice", on: "category", "price")])

extension Item {
    /// The columns of the row in schema order; the key travels separately.
    var granaryRow: Row { [.string(name), .int(category), .double(price), .bool(flag), .date(created)] }

    /// Reads a row of `granaryItemSchema` back.
    init(key: Int64, granaryRow row: Row) {
        func string(_ value: Value) -> String { if case .string(let s) = value { s } else { "" } }
        func int(_ value: Value) -> Int64 { if case .int(let i) = value { i } else { 0 } }
        func double(_ value: Value) -> Double { if case .double(let d) = value { d } else { .nan } }
        func bool(_ value: Value) -> Bool { if case .bool(let b) = value { b } else { false } }
        func date(_ value: Value) -> Date { if case .date(let d) = value { d } else { .distantPast } }
        self.init(id: key, name: string(row[0]), category: int(row[1]), price: double(row[2]),
                  flag: bool(row[3]), created: date(row[4]))
    }
}

/// The Granary column.
enum GranaryEngineSystem {
    static var system: BenchSystem? {
        BenchSystem(column: .granary, configuration: nil,
                    create: { try GranaryEngineStore.create(in: $0) },
                    open: { try GranaryEngineStore.open(in: $0) })
    }
}

/// Granary with durability `.full`: every commit is on disk (fdatasync) before `write` returns.
final class GranaryEngineStore: BenchStore {
    let engine: Engine

    init(engine: Engine) { self.engine = engine }

    static func open(in folder: URL) throws -> GranaryEngineStore {
        GranaryEngineStore(engine: try Engine.open(.directory(folder), options: .init(durability: .full)))
    }

    static func create(in folder: URL) throws -> GranaryEngineStore {
        let store = try open(in: folder)
        try store.engine.write { tx in _ = try tx.createTable(granaryItemSchema) }
        return store
    }

    func insert(_ items: ArraySlice<Item>) throws {
        try engine.write { tx in
            for item in items { try tx.insert(item.granaryRow, into: "item", key: item.id) }
        }
    }

    func fetch(keys: ArraySlice<Int64>) throws -> Int {
        let snapshot = engine.read()
        var checksum = 0
        for key in keys {
            if let row = try snapshot.row(in: "item", key: key) { checksum &+= Item(key: key, granaryRow: row).checksum }
        }
        return checksum
    }

    func queryCategories(_ categories: ArraySlice<Int64>) throws -> Int {
        let snapshot = engine.read()
        var checksum = 0
        for category in categories {
            let hits = try snapshot.query(IndexQuery(table: "item", index: "byCategory", equal: [.int(category)]))
            for hit in hits { checksum &+= Item(key: hit.key, granaryRow: hit.row).checksum }
        }
        return checksum
    }

    func queryPriceRanges(_ queries: ArraySlice<PriceRangeQuery>) throws -> Int {
        let snapshot = engine.read()
        var checksum = 0
        for query in queries {
            let hits = try snapshot.query(IndexQuery(
                table: "item", index: "byCategoryPrice", equal: [.int(query.category)],
                range: .closed(.double(query.lowestPrice), .double(query.highestPrice)), limit: PriceRangeQuery.limit))
            for hit in hits { checksum &+= Int((Item(key: hit.key, granaryRow: hit.row).price * 100).rounded()) }
        }
        return checksum
    }

    func update(_ items: ArraySlice<Item>) throws {
        try engine.write { tx in
            for item in items { try tx.update(item.granaryRow, in: "item", key: item.id) }
        }
    }

    func delete(keys: ArraySlice<Int64>) throws {
        try engine.write { tx in
            for key in keys { try tx.delete(from: "item", key: key) }
        }
    }

    func insertDurably(_ item: Item) throws {
        try engine.write { tx in try tx.insert(item.granaryRow, into: "item", key: item.id) }
    }

    /// The row tree only: the figure the "about 2x the encoded size" target is about. Index memory is
    /// reported by `granary info`.
    func memoryFootprint() throws -> Int? { try engine.read().memoryFootprint(of: "item").rows }

    func checkpoint() throws { try engine.checkpoint() }

    func close() throws { try engine.close() }
}
