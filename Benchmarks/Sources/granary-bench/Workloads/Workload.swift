import Foundation

/// The rows of the table, in order.
enum Workload: Int, CaseIterable, Sendable {
    case bulkInsert = 1, pointLookup, equalityQuery, rangeQuery, updateAll, deleteAll
    case durableTransactions, concurrentTransactions, reopen, storeSize, syncLimit
    /// The same sync loop over a preallocated file: the ceiling once a log is reused rather than grown.
    case syncLimitOverwrite
    case memoryPerRow
    /// The size of one row in Granary's row encoding: the floor for `memoryPerRow`.
    case encodedRowSize

    /// Whether GRDB runs this workload too; the limit and the memory rows describe Granary alone.
    var hasPeer: Bool {
        switch self {
        case .syncLimit, .syncLimitOverwrite, .memoryPerRow, .encodedRowSize: return false
        default: return true
        }
    }

    func title(_ options: BenchOptions) -> String {
        let rows = Format.grouped(Double(options.rows))
        let large = Format.grouped(Double(options.largeRows))
        let transactions = Format.grouped(Double(options.durableTransactions))
        switch self {
        case .bulkInsert: return "1. bulk insert \(rows) rows, one tx"
        case .pointLookup: return "2. point lookup by key"
        case .equalityQuery: return "3. category = ? (~100 rows)"
        case .rangeQuery: return "4. category = ? AND price BETWEEN, ORDER BY price LIMIT 20"
        case .updateAll: return "5. update \(rows) rows, one tx"
        case .deleteAll: return "6. delete \(rows) rows, one tx"
        case .durableTransactions: return "7. \(transactions) durable single-insert tx"
        case .concurrentTransactions: return "8. same, 2 threads at once (total)"
        case .reopen: return "9. reopen at \(large) rows + first query"
        case .storeSize: return "10. size on disk, \(large) rows"
        case .syncLimit: return "11. limit: append 100 B + fdatasync"
        case .syncLimitOverwrite: return "11b. same, overwriting a preallocated file"
        case .memoryPerRow: return "12. memory per row (in-memory table)"
        case .encodedRowSize: return "12b. encoded row (Granary row format)"
        }
    }
}

/// One open store of a system under test.
///
/// Every workload is a method that does the work and nothing else; the harness times each call from
/// outside, so all systems are timed the same way. Methods that read return the sum of `Item.checksum`
/// over what they found, which the harness compares across systems: a system that skipped work, or
/// returned other rows, is caught rather than reported as fast.
protocol BenchStore: AnyObject, Sendable {
    /// Inserts `items` in one transaction.
    func insert(_ items: ArraySlice<Item>) throws
    /// Reads the row of each key, all in one read transaction.
    func fetch(keys: ArraySlice<Int64>) throws -> Int
    /// Runs `category = ?` for each category, reading every matching row.
    func queryCategories(_ categories: ArraySlice<Int64>) throws -> Int
    /// Runs each range query with its sort and limit; the checksum is over prices only, because rows that
    /// tie on price at the limit may differ between systems.
    func queryPriceRanges(_ queries: ArraySlice<PriceRangeQuery>) throws -> Int
    /// Replaces every column of each row with the values in `items`, in one transaction.
    func update(_ items: ArraySlice<Item>) throws
    /// Deletes the rows with these keys, one by one, in one transaction.
    func delete(keys: ArraySlice<Int64>) throws
    /// Inserts one row in its own durable transaction; may be called from several threads at once.
    func insertDurably(_ item: Item) throws
    /// Bytes the system holds in memory for the `item` table, or `nil` when it cannot tell.
    func memoryFootprint() throws -> Int?
    /// Folds the log into the main file(s), so that the size on disk is the steady-state size.
    func checkpoint() throws
    func close() throws
}

/// How to make and reopen the stores of one system in one configuration.
///
/// GRDB has two configurations (a `DatabaseQueue` and a `DatabasePool`); the harness runs both and shows
/// the faster one in each row, naming it.
struct BenchSystem: Sendable {
    var column: SystemColumn
    /// The configuration's name as shown in the table ("queue", "pool"), or `nil` when there is only one.
    var configuration: String?
    /// Creates a new store with the `item` table and its indexes in an empty folder.
    var create: @Sendable (URL) throws -> any BenchStore
    /// Opens the store that `create` made in the folder and that was closed since.
    var open: @Sendable (URL) throws -> any BenchStore
}
