import ArgumentParser
import Foundation
import GranaryStorage

/// Tables Granary keeps for itself in a store (its persistent history, `_granary_history`), which hold no
/// entity's objects: listings leave them out unless asked. Entity tables cannot start with `_`.
let internalTablePrefix = "_granary_"

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show tables, row counts, indexes, file sizes and checkpoint state.")
    @OptionGroup var store: StoreArgument
    @Flag(name: .customLong("internal"), help: "Also list Granary's internal tables (persistent history).") var includesInternal = false

    func run() throws {
        try reportingFailures {
            let engine = try store.open(readOnly: true)
            let info = engine.info()
            let metadata = engine.metadata
            print("store       \(store.path)")
            print("uuid        \(metadata.storeUUID.uuidString)")
            if let version = metadata.schemaVersion { print("schema      \(version)") }
            print("last commit \(info.lsn)")
            print("snapshot    \(info.snapshotFile ?? "none") (\(formatBytes(info.snapshotBytes)))")
            print("log         \(info.logSegments.count) segment(s), \(formatBytes(info.logBytes))")
            if let lsn = info.lastCheckpointLSN { print("checkpoint  at commit \(lsn)") } else { print("checkpoint  never") }
            if let tail = engine.recoveryReport.truncatedTail {
                print("note        the log ends in \(tail.discardedBytes) bytes of an unfinished commit (\(tail.reason)); the next writer cuts them off")
            }
            for (key, value) in metadata.userInfo.sorted(by: { $0.key < $1.key }) {
                // The model record is long JSON; its size says enough here.
                let shown = value.count > 100 ? "\(value.prefix(60))… (\(value.utf8.count) bytes)" : value
                print("meta        \(key) = \(shown)")
            }
            print("")
            let hidden = includesInternal ? [] : info.tables.filter { $0.name.hasPrefix(internalTablePrefix) }
            for table in info.tables where includesInternal || !table.name.hasPrefix(internalTablePrefix) {
                print("table \(table.name): \(table.rows) rows, \(formatBytes(Int64(table.memoryBytes))) in memory")
                for index in table.indexes { print("  index \(index.name): \(index.entries) entries") }
            }
            if !hidden.isEmpty { print("(\(hidden.count) internal table(s) not listed: --internal lists them)") }
        }
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every checksum and every index against its table; exit status 0 only if the store is sound.")
    @OptionGroup var store: StoreArgument

    func run() throws {
        var sound = false
        try reportingFailures {
            let engine = try store.open(readOnly: true)
            let report = engine.verify()
            print("checked \(report.filesChecked.count) files, \(report.tablesChecked) tables, \(report.rowsChecked) rows, \(report.indexEntriesChecked) index entries")
            for problem in report.problems { print("problem: \(problem)") }
            print(report.isSound ? "the store is sound" : "the store has \(report.problems.count) problem(s)")
            sound = report.isSound
        }
        if !sound { throw ExitCode.failure }
    }
}

struct Checkpoint: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a compressed snapshot and drop the log it covers.")
    @OptionGroup var store: StoreArgument

    func run() throws {
        try reportingFailures {
            let engine = try store.open(readOnly: false)
            let before = engine.info()
            let start = ContinuousClock.now
            try engine.checkpoint()
            let elapsed = ContinuousClock.now - start
            let after = engine.info()
            try engine.close()
            print("checkpoint at commit \(after.lsn) in \(elapsed.formatted(.units(allowed: [.milliseconds])))")
            print("log \(formatBytes(before.logBytes)) -> \(formatBytes(after.logBytes)); snapshot \(formatBytes(after.snapshotBytes))")
        }
    }
}

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print rows as JSON lines: {\"table\", \"key\", \"values\"}.")
    @OptionGroup var store: StoreArgument
    @Option(name: .shortAndLong, help: "Only this table.") var table: String?
    @Flag(name: .customLong("internal"), help: "Also dump Granary's internal tables (persistent history).") var includesInternal = false

    func run() throws {
        try reportingFailures {
            let engine = try store.open(readOnly: true)
            let snapshot = engine.read()
            let tables = table.map { [$0] } ?? snapshot.tableNames.filter { includesInternal || !$0.hasPrefix(internalTablePrefix) }
            for name in tables {
                let schema: TableSchema
                do { schema = try snapshot.schema(of: name) } catch { throw Failure("no table named '\(name)' in \(store.path)") }
                try snapshot.forEachRow(in: name) { key, row in
                    var values: [String: Any] = [:]
                    for (i, column) in schema.columns.enumerated() { values[column.name] = json(row[i], snapshot) }
                    let line: [String: Any] = ["table": name, "key": key, "values": values]
                    let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
                    FileHandle.standardOutput.write(data + Data("\n".utf8))
                    return true
                }
            }
        }
    }

    func json(_ value: Value, _ snapshot: Snapshot) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return i
        case .double(let d): return d.isFinite ? d : String(d)
        case .string(let s): return s
        case .bytes(let b): return ["base64": Data(b).base64EncodedString()]
        case .date(let d): return d.formatted(.iso8601)
        case .uuid(let u): return u.uuidString
        case .reference(let r): return reference(r, snapshot)
        case .references(let rs): return rs.map { reference($0, snapshot) }
        }
    }

    func reference(_ r: RowReference, _ snapshot: Snapshot) -> Any {
        ["table": snapshot.tableName(for: r.table) ?? "\(r.table)", "key": r.key] as [String: Any]
    }
}
