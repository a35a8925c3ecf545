import Foundation
import GRDB

/// Opening SQLite the way both GRDB peers use it: WAL, synchronous=FULL, the `item` table and indexes.
enum SQLiteSetup {
    enum ConnectionKind: String, CaseIterable, Sendable {
        case queue, pool
    }

    static let createSchema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, category INTEGER, price REAL, flag BOOLEAN, created DATE);
        CREATE INDEX byCategory ON item(category);
        CREATE INDEX byCategoryPrice ON item(category, price);
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

    /// Opens a new database in `folder` and creates the `item` table and its indexes.
    /// - Throws: `DatabaseError` from SQLite.
    static func create(_ kind: ConnectionKind, cacheMiB: Int?, in folder: URL) throws -> any DatabaseWriter {
        let writer = try open(kind, cacheMiB: cacheMiB, in: folder)
        try writer.write { db in try db.execute(sql: createSchema) }
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
