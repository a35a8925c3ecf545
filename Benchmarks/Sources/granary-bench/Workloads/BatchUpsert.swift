import Foundation
import GRDB
import Granary

/// The upsert table: a batch insert of `--objects` quakes into an entity with a uniqueness constraint on
/// `code`, half of whose codes the store already holds (Apple's "Loading and Displaying a Large Data
/// Feed" refreshing its feed), against GRDB's upsert of the same rows.
///
/// Each repetition seeds a new store with the existing half (untimed), then times the one request
/// (Granary: `BatchInsertRequest`, durable `.full`; GRDB fastest: `INSERT … ON CONFLICT(code) DO UPDATE`
/// with a cached statement; GRDB records: `record.upsert(db)`), all in one write transaction. The
/// request's dictionaries and records are built before the clock starts.
struct BatchUpsertBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    struct Quake: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "quake"
        var code: String
        var magnitude: Double
        var place: String
        var time: Date
    }

    struct Result {
        var objects: Int
        var existing: Int
        /// Per system and configuration: the median time of the request.
        var times: [(column: SystemColumn, configuration: String?, time: Duration)]
    }

    /// The request's rows: codes 0..<n, the first half already stored with other values.
    static func rows(_ n: Int, refreshed: Bool) -> [Quake] {
        (0..<n).map { i in
            Quake(code: "q\(i)", magnitude: Double(i % 90) / 10 + (refreshed ? 0.5 : 0), place: "place \(i % 1000)",
                  time: Date(timeIntervalSince1970: 1_700_000_000 + Double(i)))
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Quake") {
                Attribute("code", .string)
                Attribute("magnitude", .double)
                Attribute("place", .string)
                Attribute("time", .date)
                Unique("code")
            }
        }
    }

    static func dictionaries(_ rows: [Quake]) -> [[String: Any]] {
        rows.map { ["code": $0.code, "magnitude": $0.magnitude, "place": $0.place, "time": $0.time] }
    }

    static let createSchema = """
        CREATE TABLE quake(id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, magnitude REAL NOT NULL, place TEXT NOT NULL, time DATE NOT NULL);
        """

    func run() throws -> Result {
        let n = options.objects
        let existing = n / 2
        let seed = Self.rows(existing, refreshed: false)
        let request = Self.rows(n, refreshed: true)
        // The store must hold every code once, with the request's values: sum of magnitudes × 10.
        let expected = request.reduce(0) { $0 + Int(($1.magnitude * 10).rounded()) }
        var result = Result(objects: n, existing: existing, times: [])

        // Granary.
        let model = try Self.model()
        var times: [Duration] = []
        for repetition in 0..<options.repetitions {
            progress("upsert: Granary, run \(repetition + 1) of \(options.repetitions)")
            let folder = try scratch.makeFolder("upsert-granary-\(repetition)")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .durable, at: folder.appendingPathComponent("Quakes.granary"),
                                                           options: .init(durability: .full))
            _ = try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: Self.dictionaries(seed)))
            let objects = Self.dictionaries(request)
            let (written, duration) = try Stopwatch.time {
                try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: objects))
            }
            times.append(duration)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let (count, checksum) = try context.performAndWait {
                let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
                return (all.count, try all.reduce(0) { $0 + Int((((try $1.value(forKey: "magnitude")) as? Double ?? 0) * 10).rounded()) })
            }
            guard written.count == n, count == n, checksum == expected else {
                throw BenchError.resultsDisagree(workload: "upsert", detail: "Granary wrote \(written.count), holds \(count) quakes, checksum \(checksum); expected \(n), \(expected)")
            }
            try coordinator.remove(store)
            scratch.remove(folder)
        }
        result.times.append((.granary, nil, Stopwatch.median(times)))
        // --granary-only: profiling runs, Granary's column alone.
        if options.isGranaryOnly { return result }

        // GRDB, both idioms, both connection kinds.
        for kind in SQLiteSetup.ConnectionKind.allCases {
            for column in [SystemColumn.grdbFast, .grdbRecords] {
                var times: [Duration] = []
                for repetition in 0..<options.repetitions {
                    progress("upsert: \(column.title) [\(kind.rawValue)], run \(repetition + 1) of \(options.repetitions)")
                    let folder = try scratch.makeFolder("upsert-\(column)-\(kind.rawValue)-\(repetition)")
                    let writer = try SQLiteSetup.open(kind, cacheMiB: options.sqliteCacheMiB, in: folder)
                    try writer.write { db in
                        try db.execute(sql: Self.createSchema)
                        for quake in seed { try quake.insert(db) }
                    }
                    let duration = try Stopwatch.time {
                        try writer.write { db in
                            if column == .grdbFast {
                                let statement = try db.cachedStatement(sql: """
                                    INSERT INTO quake (code, magnitude, place, time) VALUES (?, ?, ?, ?)
                                    ON CONFLICT(code) DO UPDATE SET magnitude = excluded.magnitude, place = excluded.place, time = excluded.time
                                    """)
                                for quake in request {
                                    statement.setUncheckedArguments([quake.code, quake.magnitude, quake.place, quake.time.timeIntervalSince1970])
                                    try statement.execute()
                                }
                            } else {
                                for quake in request { try quake.upsert(db) }
                            }
                        }
                    }.duration
                    times.append(duration)
                    let (count, checksum) = try writer.read { db in
                        (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM quake") ?? 0,
                         try Int.fetchOne(db, sql: "SELECT SUM(CAST(ROUND(magnitude * 10) AS INTEGER)) FROM quake") ?? 0)
                    }
                    guard count == n, checksum == expected else {
                        throw BenchError.resultsDisagree(workload: "upsert", detail: "\(column.title) holds \(count) quakes, checksum \(checksum); expected \(n), \(expected)")
                    }
                    try writer.close()
                    scratch.remove(folder)
                }
                result.times.append((column, kind.rawValue, Stopwatch.median(times)))
            }
        }
        return result
    }

    /// The table: one row, the faster connection of each GRDB idiom, and the ratios.
    static func table(heading: String, result: Result, options: BenchOptions) -> PlainTable {
        func best(_ column: SystemColumn) -> (time: Duration, configuration: String?)? {
            result.times.filter { $0.column == column }.min { $0.time < $1.time }.map { ($0.time, $0.configuration) }
        }
        let granary = best(.granary)!.time
        func cell(_ column: SystemColumn) -> String {
            guard let b = best(column) else { return "—" }
            return Measurement.time(b.time).text + (b.configuration.map { " [\($0)]" } ?? "")
        }
        func ratio(_ column: SystemColumn) -> String {
            guard let b = best(column) else { return "—" }
            return Format.ratio(b.time.seconds / granary.seconds)
        }
        let title = "U1. batch insert \(Format.grouped(Double(result.objects))) objects into a constrained entity, \(Format.grouped(Double(result.existing))) existing"
        var notes: [String] = []
        if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
        notes += [
            "`Quake(code unique, magnitude, place, time)`. Each of \(options.repetitions) runs seeds a new store with the first \(Format.grouped(Double(result.existing))) codes (untimed), then times one request of \(Format.grouped(Double(result.objects))) quakes: the seeded codes with new values, and as many new ones. Median of the runs; every system must end with \(Format.grouped(Double(result.objects))) quakes holding the request's values (checked).",
            "Granary: `BatchInsertRequest(entityName:objects:)`, durable store with durability `.full`; existing codes update their objects. GRDB fastest: `INSERT … ON CONFLICT(code) DO UPDATE SET …`, cached statement, unchecked arguments, dates as REAL. GRDB records: Codable records, `record.upsert(db)`. One write transaction each; SQLite in WAL mode with synchronous=FULL, the faster of `DatabaseQueue` and `DatabasePool` shown.",
            "Ratios: that GRDB column's time ÷ Granary's; above 1 means Granary is faster.",
        ]
        return PlainTable(heading: heading,
                          header: ["workload", "Granary", "GRDB fastest", "GRDB records", "ratio (GRDB fastest ÷ Granary)", "ratio (GRDB records ÷ Granary)"],
                          rows: [[title, Measurement.time(granary).text, cell(.grdbFast), cell(.grdbRecords), ratio(.grdbFast), ratio(.grdbRecords)]],
                          footnotes: notes)
    }
}
