import Foundation
import GranaryStorage

// The engine's API (Engine, Snapshot, IndexQuery) is being written in parallel. Until it lands, the
// store below is compiled only with `-Xswiftc -DGRANARY_ENGINE_READY`, and the Granary column shows
// "n/a". What can be written against today's value types (the schema, the row mapping, the row size)
// stays outside the condition, so the compiler keeps checking it.

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

/// The size of a row in Granary's row encoding (`RowCodec`: a varint column count, then a tag byte and
/// a payload per value), for the "encoded row" line of the table.
///
/// `RowCodec` is internal to the library, so its size rules are restated here for the types the bench
/// stores; replace this with the engine's own figure if it comes to expose one.
enum GranaryRowSize {
    static func encodedSize(of row: Row) -> Int {
        row.values.reduce(varintSize(UInt64(row.values.count))) { size, value in
            switch value {
            case .null, .bool: return size + 1
            case .int(let i): return size + 1 + varintSize(UInt64(bitPattern: (i << 1) ^ (i >> 63)))
            case .double, .date: return size + 1 + 8
            case .string(let s): return size + 1 + varintSize(UInt64(s.utf8.count)) + s.utf8.count
            case .bytes(let b): return size + 1 + varintSize(UInt64(b.count)) + b.count
            case .uuid: return size + 1 + 16
            case .reference, .references:
                preconditionFailure("the bench stores no references")
            }
        }
    }

    static func varintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 { value >>= 7; size += 1 }
        return size
    }
}

/// The Granary column, or `nil` while the engine is not there yet.
enum GranaryEngineSystem {
    static var system: BenchSystem? {
        #if GRANARY_ENGINE_READY
        BenchSystem(column: .granary, configuration: nil,
                    create: { try GranaryEngineStore.create(in: $0) },
                    open: { try GranaryEngineStore.open(in: $0) })
        #else
        nil
        #endif
    }
}

#if GRANARY_ENGINE_READY
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

    func memoryFootprint() throws -> Int? { engine.memoryFootprint(of: "item") }

    func checkpoint() throws { try engine.checkpoint() }

    func close() throws { try engine.close() }
}
#endif
