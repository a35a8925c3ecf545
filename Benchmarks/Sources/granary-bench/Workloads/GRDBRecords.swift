import Foundation
import GRDB

/// `Item` as a GRDB record: Codable drives both directions, and the table name is GRDB's default ("item").
extension Item: FetchableRecord, PersistableRecord {}

/// GRDB as most apps use it: Codable records and the query interface, with GRDB's defaults throughout
/// (dates as "yyyy-MM-dd HH:mm:ss.SSS" text, SQL generated per request).
final class GRDBRecordsStore: BenchStore {
    let writer: any DatabaseWriter

    init(writer: any DatabaseWriter) { self.writer = writer }

    static func system(_ kind: SQLiteSetup.ConnectionKind, cacheMiB: Int?) -> BenchSystem {
        BenchSystem(
            column: .grdbRecords, configuration: kind.rawValue,
            create: { GRDBRecordsStore(writer: try SQLiteSetup.create(kind, cacheMiB: cacheMiB, in: $0)) },
            open: { GRDBRecordsStore(writer: try SQLiteSetup.open(kind, cacheMiB: cacheMiB, in: $0)) })
    }

    private static let category = GRDB.Column("category")
    private static let price = GRDB.Column("price")

    func insert(_ items: ArraySlice<Item>) throws {
        try writer.write { db in
            for item in items { try item.insert(db) }
        }
    }

    func fetch(keys: ArraySlice<Int64>) throws -> Int {
        try writer.read { db in
            var checksum = 0
            for key in keys {
                if let item = try Item.fetchOne(db, key: key) { checksum &+= item.checksum }
            }
            return checksum
        }
    }

    func queryCategories(_ categories: ArraySlice<Int64>) throws -> Int {
        try writer.read { db in
            var checksum = 0
            for category in categories {
                for item in try Item.filter(Self.category == category).fetchAll(db) { checksum &+= item.checksum }
            }
            return checksum
        }
    }

    func queryPriceRanges(_ queries: ArraySlice<PriceRangeQuery>) throws -> Int {
        try writer.read { db in
            var checksum = 0
            for query in queries {
                let items = try Item
                    .filter(Self.category == query.category && (query.lowestPrice...query.highestPrice).contains(Self.price))
                    .order(Self.price)
                    .limit(PriceRangeQuery.limit)
                    .fetchAll(db)
                for item in items { checksum &+= Int((item.price * 100).rounded()) }
            }
            return checksum
        }
    }

    func update(_ items: ArraySlice<Item>) throws {
        try writer.write { db in
            for item in items { try item.update(db) }
        }
    }

    func delete(keys: ArraySlice<Int64>) throws {
        try writer.write { db in
            for key in keys { try Item.deleteOne(db, key: key) }
        }
    }

    func insertDurably(_ item: Item) throws {
        try writer.write { db in try item.insert(db) }
    }

    func memoryFootprint() throws -> Int? { nil }

    func checkpoint() throws { try SQLiteSetup.checkpoint(writer) }

    func close() throws { try writer.close() }
}
