import Foundation
import GRDB

/// Opening SQLite the way both GRDB peers use it: WAL, synchronous=FULL, and the tables: `item` for the
/// main table, `department` and `employee` for the object level.
enum SQLiteSetup {
    enum ConnectionKind: String, CaseIterable, Sendable {
        case queue, pool
    }

    static let createSchema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, category INTEGER, price REAL, flag BOOLEAN, created DATE);
        CREATE INDEX byCategory ON item(category);
        CREATE INDEX byCategoryPrice ON item(category, price);
        """

    /// The object level: a foreign key from employee to department (GRDB enables foreign keys, so SQLite
    /// checks it), an index on it for the to-many side, and the salary index.
    static let createObjectSchema = """
        CREATE TABLE department(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, salary INTEGER NOT NULL, hired DATE NOT NULL,
                              email TEXT NOT NULL, departmentId INTEGER NOT NULL REFERENCES department(id));
        CREATE INDEX employee_departmentId ON employee(departmentId);
        CREATE INDEX employee_salary ON employee(salary);
        """

    /// The query of object workload O4, for the fastest peer and for the plan check.
    static let topEarnersSQL = """
        SELECT id, name, salary, hired, email, departmentId FROM employee WHERE salary BETWEEN ? AND ?
        ORDER BY salary DESC LIMIT \(SalaryRangeQuery.limit)
        """

    static func path(in folder: URL) -> String { folder.appendingPathComponent("bench.sqlite").path }

    /// Opens (creating when absent) the database in `folder` in WAL mode with synchronous=FULL.
    ///
    /// GRDB sets synchronous=NORMAL itself when it switches a connection to WAL, after any
    /// `prepareDatabase` hook has run, so FULL is set here on the writer once GRDB is done, and checked.
    /// - Throws: `DatabaseError` from SQLite, or `BenchError.misconfigured` if the pragmas did not take.
    /// `cacheMiB` sets SQLite's page cache for every connection; `nil` keeps SQLite's default (2 MiB).
    static func open(_ kind: ConnectionKind, cacheMiB: Int?, in folder: URL) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.journalMode = .wal
        if let cacheMiB {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(cacheMiB * 1024)") }
        }
        let path = path(in: folder)
        let writer: any DatabaseWriter = switch kind {
        case .queue: try DatabaseQueue(path: path, configuration: configuration)
        case .pool: try DatabasePool(path: path, configuration: configuration)
        }
        let (journal, synchronous) = try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            return (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        guard journal == "wal", synchronous == 2 else {
            throw BenchError.misconfigured("SQLite at \(path) has journal_mode=\(journal ?? "?"), synchronous=\(synchronous ?? -1); expected wal and 2 (FULL)")
        }
        return writer
    }

    /// Opens a new database in `folder` and creates `schema` (by default the `item` table and its indexes).
    /// - Throws: `DatabaseError` from SQLite.
    static func create(_ kind: ConnectionKind, cacheMiB: Int?, in folder: URL, schema: String = createSchema) throws -> any DatabaseWriter {
        let writer = try open(kind, cacheMiB: cacheMiB, in: folder)
        try writer.write { db in try db.execute(sql: schema) }
        return writer
    }

    /// Opens a new database for the object level and checks that SQLite answers O4 from the salary index
    /// in order, with no sort step.
    /// - Throws: `DatabaseError` from SQLite, `BenchError.misconfigured` for another plan.
    static func createObjects(_ kind: ConnectionKind, cacheMiB: Int?, in folder: URL) throws -> any DatabaseWriter {
        let writer = try create(kind, cacheMiB: cacheMiB, in: folder, schema: createObjectSchema)
        let plan = try writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + topEarnersSQL, arguments: [0, 1]).map { $0["detail"] as String? ?? "" }
        }.joined(separator: "; ")
        guard plan.contains("employee_salary"), !plan.contains("TEMP B-TREE") else {
            throw BenchError.misconfigured("SQLite plans O4 as \(plan); expected the salary index with no sort step")
        }
        return writer
    }

    /// Truncating checkpoint: the WAL's pages move into the database file and the WAL shrinks to nothing.
    /// - Throws: `DatabaseError` from SQLite.
    static func checkpoint(_ writer: any DatabaseWriter) throws {
        _ = try writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    /// The version of the SQLite library GRDB is linked against (the system's libsqlite3 on Linux).
    /// - Throws: `DatabaseError` from SQLite.
    static func libraryVersion() throws -> String {
        try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "unknown" }
    }
}
