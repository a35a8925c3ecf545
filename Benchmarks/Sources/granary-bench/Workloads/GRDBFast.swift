import Foundation
import GRDB

/// GRDB's fastest idiom: SQL written by hand, cached prepared statements, unchecked `StatementArguments`,
/// and rows read straight from the statement's cursor by column index, never copied.
///
/// Dates are stored as REAL seconds since 1970, the cheapest form to bind and read; the records peer
/// uses GRDB's default text form instead.
final class GRDBFastStore: BenchStore {
    let writer: any DatabaseWriter

    init(writer: any DatabaseWriter) { self.writer = writer }

    static func system(_ kind: SQLiteSetup.ConnectionKind, cacheMiB: Int?) -> BenchSystem {
        BenchSystem(
            column: .grdbFast, configuration: kind.rawValue,
            create: { GRDBFastStore(writer: try SQLiteSetup.create(kind, cacheMiB: cacheMiB, in: $0)) },
            open: { GRDBFastStore(writer: try SQLiteSetup.open(kind, cacheMiB: cacheMiB, in: $0)) })
    }

    static let columns = "id, name, category, price, flag, created"

    func insert(_ items: ArraySlice<Item>) throws {
        try writer.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO item (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
            for item in items { try Self.bindAndExecute(statement, item) }
        }
    }

    func fetch(keys: ArraySlice<Int64>) throws -> Int {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.columns) FROM item WHERE id = ?")
            var checksum = 0
            for key in keys {
                statement.setUncheckedArguments([key])
                let rows = try Row.fetchCursor(statement)
                if let row = try rows.next() { checksum &+= Self.item(row).checksum }
            }
            return checksum
        }
    }

    func queryCategories(_ categories: ArraySlice<Int64>) throws -> Int {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.columns) FROM item WHERE category = ?")
            var checksum = 0
            for category in categories {
                statement.setUncheckedArguments([category])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { checksum &+= Self.item(row).checksum }
            }
            return checksum
        }
    }

    func queryPriceRanges(_ queries: ArraySlice<PriceRangeQuery>) throws -> Int {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT \(Self.columns) FROM item WHERE category = ? AND price BETWEEN ? AND ? ORDER BY price LIMIT \(PriceRangeQuery.limit)
                """)
            var checksum = 0
            for query in queries {
                statement.setUncheckedArguments([query.category, query.lowestPrice, query.highestPrice])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { checksum &+= Int((Self.item(row).price * 100).rounded()) }
            }
            return checksum
        }
    }

    func update(_ items: ArraySlice<Item>) throws {
        try writer.write { db in
            let statement = try db.cachedStatement(sql: """
                UPDATE item SET name = ?, category = ?, price = ?, flag = ?, created = ? WHERE id = ?
                """)
            for item in items {
                statement.setUncheckedArguments([item.name, item.category, item.price, item.flag,
                                                 item.created.timeIntervalSince1970, item.id])
                try statement.execute()
            }
        }
    }

    func delete(keys: ArraySlice<Int64>) throws {
        try writer.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?")
            for key in keys {
                statement.setUncheckedArguments([key])
                try statement.execute()
            }
        }
    }

    func insertDurably(_ item: Item) throws {
        try writer.write { db in
            try Self.bindAndExecute(try db.cachedStatement(sql: "INSERT INTO item (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)"), item)
        }
    }

    func memoryFootprint() throws -> Int? { nil }

    func checkpoint() throws { try SQLiteSetup.checkpoint(writer) }

    func close() throws { try writer.close() }

    private static func bindAndExecute(_ statement: Statement, _ item: Item) throws {
        statement.setUncheckedArguments([item.id, item.name, item.category, item.price, item.flag,
                                         item.created.timeIntervalSince1970])
        try statement.execute()
    }

    private static func item(_ row: Row) -> Item {
        Item(id: row[0], name: row[1], category: row[2], price: row[3], flag: row[4],
             created: Date(timeIntervalSince1970: row[5]))
    }
}
