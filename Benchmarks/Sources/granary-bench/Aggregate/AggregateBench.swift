import Foundation
import GRDB
import Granary
import GranaryStorage

/// G1–G5: aggregate and grouped fetches over `--large-rows` sales (1,000,000), computed in the store,
/// against the same SQL through GRDB.
///
/// Every sale has a `category` (one of 100 strings, not indexed), an `amount` (an integer, indexed), a
/// `price` (a double) and a `day` (0–364, indexed). Granary answers through its public API
/// (`aggregate(_:for:as:)` and `fetchDictionaries(_:)` with expressions, `propertiesToGroupBy`,
/// `havingPredicate`, `returnsDistinctResults`); GRDB runs the SQL a Core Data SQLite store would, with
/// a cached statement, in a `DatabaseQueue` and a `DatabasePool` (the faster is shown). Each workload runs
/// once untimed, then `runs` times (G5 `extremeRuns`); the median. Both systems must return the same
/// figures.
struct AggregateBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    static let categories = 100
    /// Groups with more than this many sales are kept by G2: about half of them, at 1,000,000 sales.
    var havingThreshold: Int { options.largeRows / Self.categories }
    /// G4's days: a month of the year's.
    static let days = (100, 130)

    enum Workload: Int, CaseIterable {
        case sum, groupedCount, distinct, sumOfRange, maximum

        var title: String {
            switch self {
            case .sum: "G1. sum of one attribute over every row"
            case .groupedCount: "G2. count per category (~100 groups), having count > N"
            case .distinct: "G3. distinct values of one attribute (~100)"
            case .sumOfRange: "G4. sum over a range of an indexed attribute (~8.5% of rows)"
            case .maximum: "G5. maximum of an indexed attribute"
            }
        }

        func sql(threshold: Int) -> String {
            switch self {
            case .sum: "SELECT SUM(amount) FROM sale"
            case .groupedCount: "SELECT category, COUNT(*) FROM sale GROUP BY category HAVING COUNT(*) > \(threshold)"
            case .distinct: "SELECT DISTINCT category FROM sale"
            case .sumOfRange: "SELECT SUM(amount) FROM sale WHERE day BETWEEN \(AggregateBench.days.0) AND \(AggregateBench.days.1)"
            case .maximum: "SELECT MAX(amount) FROM sale"
            }
        }
    }

    struct Result {
        var rows: Int
        var threshold: Int
        var runs: Int
        var extremeRuns: Int
        /// Per workload: Granary's median, and each GRDB configuration's.
        var granary: [Workload: Duration] = [:]
        var grdb: [Workload: [(configuration: String, time: Duration)]] = [:]
        var loadBefore = ""
        var loadAfter = ""
        /// The first answer each workload got, and from which system: every later one must match it.
        var answers: [Workload: (system: String, answer: String)] = [:]
    }

    static let model: ManagedObjectModel = {
        // A literal model fails only through a mistake in this file.
        try! ManagedObjectModel(version: "aggregate-bench") {
            Entity("Sale") {
                Attribute("category", .string)
                Attribute("amount", .integer64, indexed: true)
                Attribute("price", .double)
                Attribute("day", .integer32, indexed: true)
            }
        }
    }()

    static let createSchema = """
        CREATE TABLE sale(id INTEGER PRIMARY KEY, category TEXT NOT NULL, amount INTEGER NOT NULL, price REAL NOT NULL, day INTEGER NOT NULL);
        CREATE INDEX sale_amount ON sale(amount);
        CREATE INDEX sale_day ON sale(day);
        """

    /// The values of sale `i` (from 0), the same for both systems.
    struct Sale {
        var category: String
        var amount: Int64
        var price: Double
        var day: Int64
    }

    static func sales(_ count: Int, _ body: (Int, Sale) throws -> Void) rethrows {
        var generator = SplitMix64(seed: 0xA66_2E6A7E)
        for i in 0..<count {
            let g = generator.next()
            try body(i, Sale(category: "category \(g % UInt64(categories))", amount: Int64(1 + (g >> 8) % 10_000),
                             price: Double((g >> 24) % 100_000) / 100, day: Int64((g >> 40) % 365)))
        }
    }

    var runs: Int { options.isQuick ? 1 : 7 }
    /// G5 takes microseconds: it runs this many times, so that its median is not a cold cache's.
    var extremeRuns: Int { options.isQuick ? 1 : 1_001 }

    func run() throws -> Result {
        var result = Result(rows: options.largeRows, threshold: havingThreshold, runs: runs, extremeRuns: extremeRuns)
        result.loadBefore = Self.loadAverage()
        try runGranary(into: &result)
        if !options.isGranaryOnly {
            for kind in SQLiteSetup.ConnectionKind.allCases { try runGRDB(kind, into: &result) }
        }
        result.loadAfter = Self.loadAverage()
        return result
    }

    /// The median of `runs` timings after one untimed run, and the figure every run must agree on.
    func measure(_ workload: Workload, _ body: () throws -> String) throws -> (Duration, String) {
        let expected = try body()
        var times: [Duration] = []
        for _ in 0..<(workload == .maximum ? extremeRuns : runs) {
            let (answer, time) = try Stopwatch.time(body)
            guard answer == expected else {
                throw BenchError.resultsDisagree(workload: workload.title, detail: "one run gave \(answer), another \(expected)")
            }
            times.append(time)
        }
        return (Stopwatch.median(times), expected)
    }

    // MARK: Granary

    private func runGranary(into result: inout Result) throws {
        let folder = try scratch.makeFolder("aggregate-granary")
        let url = folder.appendingPathComponent("Sales.granary")
        progress("aggregate: writing \(options.largeRows) sales into Granary")
        try writeGranaryStore(at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let threshold = havingThreshold
        try context.performAndWait {
            let all = FetchRequest<ManagedObject>(entityName: "Sale")
            for workload in Workload.allCases {
                progress("aggregate: Granary, \(workload.title)")
                let (time, answer) = try measure(workload) {
                    switch workload {
                    case .sum:
                        return "\(try context.aggregate(.sum("amount"), for: all, as: Int64.self) ?? 0)"
                    case .groupedCount:
                        var request = all
                        request.propertiesToFetch = ["category", .expression(ExpressionDescription(name: "count", expression: .count()))]
                        request.propertiesToGroupBy = ["category"]
                        request.havingPredicate = try PredicateParser.parseHaving("count > %d", arguments: [threshold])
                        let rows = try context.fetchDictionaries(request)
                        return Self.groupsChecksum(rows.map { ($0["category"] as? String ?? "", $0["count"] as? Int64 ?? -1) })
                    case .distinct:
                        var request = all
                        request.propertiesToFetch = ["category"]
                        request.returnsDistinctResults = true
                        return Self.distinctChecksum(try context.fetchDictionaries(request).map { $0["category"] as? String ?? "" })
                    case .sumOfRange:
                        var request = all
                        request.filter = try PredicateParser.parse("day BETWEEN {%d, %d}", arguments: [Self.days.0, Self.days.1])
                        return "\(try context.aggregate(.sum("amount"), for: request, as: Int64.self) ?? 0)"
                    case .maximum:
                        return "\(try context.aggregate(.max("amount"), for: all, as: Int64.self) ?? 0)"
                    }
                }
                result.granary[workload] = time
                try Self.agree(workload, "Granary", answer, in: &result)
            }
        }
        scratch.remove(folder)
    }

    /// Writes the sales straight into the engine, in the rows the model maps them to (as the migration
    /// bench does): the bench measures reading them, and an object-by-object import would only make the
    /// setup longer.
    private func writeGranaryStore(at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.remove(try coordinator.addPersistentStore(type: .durable, at: url))
        let mapping = StorageMapping(model: Self.model)
        guard let sale = mapping.entity(named: "Sale") else { throw BenchError.misconfigured("no Sale mapping") }
        let columns = ["category", "amount", "price", "day"].map { sale.column(forProperty: $0)! }
        let engine = try Engine.open(.directory(url), options: .init(durability: .off))
        var pending: [(Int, Sale)] = []
        func flush() throws {
            try engine.write { tx in
                for (i, s) in pending {
                    var row = Row([Value](repeating: .null, count: sale.tableSchema.columns.count))
                    row[StorageMapping.entityColumn] = .int(sale.entityCode)
                    row[StorageMapping.versionColumn] = .int(1)
                    row[columns[0]] = .string(s.category)
                    row[columns[1]] = .int(s.amount)
                    row[columns[2]] = .double(s.price)
                    row[columns[3]] = .int(s.day)
                    try tx.insert(row, into: sale.tableName, key: Int64(i + 1))
                }
            }
            pending.removeAll(keepingCapacity: true)
        }
        try Self.sales(options.largeRows) { i, s in
            pending.append((i, s))
            if pending.count == 100_000 { try flush() }
        }
        try flush()
        try engine.checkpoint()
        try engine.close()
    }

    // MARK: GRDB

    private func runGRDB(_ kind: SQLiteSetup.ConnectionKind, into result: inout Result) throws {
        let folder = try scratch.makeFolder("aggregate-grdb-\(kind.rawValue)")
        progress("aggregate: writing \(options.largeRows) sales into SQLite [\(kind.rawValue)]")
        let writer = try SQLiteSetup.open(kind, cacheMiB: options.sqliteCacheMiB, in: folder)
        try writer.write { db in
            try db.execute(sql: Self.createSchema)
            let insert = try db.cachedStatement(sql: "INSERT INTO sale(id, category, amount, price, day) VALUES (?, ?, ?, ?, ?)")
            try Self.sales(options.largeRows) { i, s in
                insert.setUncheckedArguments([i + 1, s.category, s.amount, s.price, s.day])
                try insert.execute()
            }
        }
        try writer.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
        for workload in Workload.allCases {
            progress("aggregate: GRDB [\(kind.rawValue)], \(workload.title)")
            let sql = workload.sql(threshold: havingThreshold)
            let (time, answer) = try writer.read { db in
                try measure(workload) {
                    let statement = try db.cachedStatement(sql: sql)
                    switch workload {
                    case .sum, .sumOfRange, .maximum:
                        return "\(try Int64.fetchOne(statement) ?? 0)"
                    case .groupedCount:
                        var groups: [(String, Int64)] = []
                        let rows = try Row.fetchCursor(statement)
                        while let row = try rows.next() { groups.append((row[0], row[1])) }
                        return Self.groupsChecksum(groups)
                    case .distinct:
                        return Self.distinctChecksum(try String.fetchAll(statement))
                    }
                }
            }
            result.grdb[workload, default: []].append((kind.rawValue, time))
            try Self.agree(workload, "GRDB [\(kind.rawValue)]", answer, in: &result)
        }
        try writer.close()
        scratch.remove(folder)
    }

    // MARK: Checks

    /// The groups as one string, order aside.
    static func groupsChecksum(_ groups: [(String, Int64)]) -> String {
        groups.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
    }

    static func distinctChecksum(_ values: [String]) -> String {
        values.sorted().joined(separator: ",")
    }

    /// Records the first answer to a workload, or checks a later one against it.
    /// - Throws: `BenchError.resultsDisagree` naming both systems' answers.
    static func agree(_ workload: Workload, _ system: String, _ answer: String, in result: inout Result) throws {
        guard let first = result.answers[workload] else {
            result.answers[workload] = (system, answer)
            return
        }
        if first.answer != answer {
            throw BenchError.resultsDisagree(workload: workload.title, detail: "\(first.system): \(first.answer.prefix(200)); \(system): \(answer.prefix(200))")
        }
    }

    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
