import Foundation
import Granary

/// The migration table: a store of `Item`s written with version 1 of a model, opened with version 2,
/// which renames `name` to `title` and adds `rating` with a default (the lightweight change the issue
/// names). There is no peer: SQLite's `ALTER TABLE … RENAME COLUMN` and `ADD COLUMN … DEFAULT` change
/// only its schema record, not rows, so a comparison would not measure the same work.
struct MigrationBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    struct Result {
        var objects: Int
        /// `addPersistentStore` with version 2: open, recovery, migration, table check.
        var openAndMigrate: [Duration]
        /// From the first progress report to the last: mapping, writing and switching.
        var migration: [Duration]
        /// `addPersistentStore` of the same store with version 1 (no migration), for reference.
        var openOnly: [Duration]
        /// Peak resident memory while opening and migrating, above what the process held before.
        var peakGrowth: [Int]
        var storeBytesBefore: Int
        var storeBytesAfter: Int
    }

    static func models() throws -> (ManagedObjectModel, ManagedObjectModel) {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("qty", .integer32, indexed: true)
                Attribute("price", .double)
                Attribute("created", .date)
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Item") {
                Attribute("title", .string, renamingIdentifier: "name")
                Attribute("qty", .integer32, indexed: true)
                Attribute("price", .double)
                Attribute("created", .date)
                Attribute("rating", .integer16, defaultValue: 3)
            }
        }
        return (v1, v2)
    }

    func run() throws -> Result {
        let (v1, v2) = try Self.models()
        let objects = options.largeRows
        let template = try scratch.makeFolder("migration-template").appendingPathComponent("Items.granary")
        progress("migration: writing \(objects) objects with version 1")
        try writeStore(objects, model: v1, at: template)
        var result = Result(objects: objects, openAndMigrate: [], migration: [], openOnly: [], peakGrowth: [],
                            storeBytesBefore: ScratchDirectory.size(of: template), storeBytesAfter: 0)
        for run in 0..<options.repetitions {
            let copy = try scratch.makeFolder("migration-\(run)").appendingPathComponent("Items.granary")
            try FileManager.default.copyItem(at: template, to: copy)
            progress("migration: run \(run + 1) of \(options.repetitions)")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: v2)
            let clock = MigrationClock()
            var storeOptions = PersistentStore.Options()
            storeOptions.migration.progress = { clock.note($0) }
            PeakMemory.reset()
            let baseline = ResidentMemory.current()
            let (store, duration) = try Stopwatch.time {
                try coordinator.addPersistentStore(type: .durable, at: copy, options: storeOptions)
            }
            result.peakGrowth.append(PeakMemory.current() - baseline)
            guard let report = store.migrationReport, report.rowsWritten == objects else {
                throw BenchError.misconfigured("the store was not migrated: \(String(describing: store.migrationReport))")
            }
            try check(coordinator)
            try coordinator.remove(store)
            result.openAndMigrate.append(duration)
            result.migration.append(clock.span)
            result.storeBytesAfter = ScratchDirectory.size(of: copy)
            scratch.remove(copy.deletingLastPathComponent())

            let reference = PersistentStoreCoordinator(managedObjectModel: v1)
            let (plain, openDuration) = try Stopwatch.time { try reference.addPersistentStore(type: .durable, at: template) }
            try reference.remove(plain)
            result.openOnly.append(openDuration)
        }
        scratch.remove(template.deletingLastPathComponent())
        return result
    }

    /// A store with `count` items: created through a coordinator (so it records version 1), filled
    /// through the engine in large transactions (filling it through contexts would take minutes and is
    /// not what is measured), then checkpointed so the migration starts from a snapshot.
    private func writeStore(_ count: Int, model: ManagedObjectModel, at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.remove(try coordinator.addPersistentStore(type: .durable, at: url))
        let mapping = StorageMapping(model: model)
        guard let item = mapping.entity(named: "Item") else { throw BenchError.misconfigured("no Item mapping") }
        let columns = ["name", "qty", "price", "created"].map { item.column(forProperty: $0)! }
        let engine = try Engine.open(.directory(url), options: .init(durability: .off))
        var generator = SplitMix64(seed: 0x316_6A7E)
        let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
        var next = 0
        while next < count {
            let end = min(count, next + 100_000)
            try engine.write { tx in
                for i in next..<end {
                    var row = Row([Value](repeating: .null, count: item.tableSchema.columns.count))
                    row[StorageMapping.entityColumn] = .int(item.entityCode)
                    row[StorageMapping.versionColumn] = .int(1)
                    row[columns[0]] = .string("item \(i) \(generator.next() % 10_000)")
                    row[columns[1]] = .int(Int64(generator.next() % 1_000))
                    row[columns[2]] = .double(Double(generator.next() % 100_000) / 100)
                    row[columns[3]] = .date(epoch.addingTimeInterval(Double(i)))
                    try tx.insert(row, into: item.tableName, key: Int64(i + 1))
                }
            }
            next = end
        }
        try engine.checkpoint()
        try engine.close()
    }

    /// The migrated store answers as version 2 should: renamed values, the default, the index.
    private func check(_ coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Item")
            request.filter = try PredicateParser.parse("qty == 7")
            let found = try context.fetch(request)
            guard let first = found.first, try context.explain(request).explain.contains("Item_qty"),
                  (try first.value(forKey: "title") as? String)?.hasPrefix("item ") == true,
                  try first.value(forKey: "rating") as? Int16 == 3
            else { throw BenchError.misconfigured("the migrated store does not read as version 2") }
        }
    }
}

/// Times a migration from its progress reports: the first report to the last.
final class MigrationClock: @unchecked Sendable {
    // @unchecked: `first` and `last` are guarded by `lock`.
    private let lock = NSLock()
    private var first: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    func note(_ progress: MigrationProgress) {
        let now = ContinuousClock.now
        lock.withLock {
            if first == nil { first = now }
            last = now
        }
    }

    var span: Duration {
        lock.withLock {
            guard let first, let last else { return .zero }
            return last - first
        }
    }
}

/// The process's peak resident memory (VmHWM), which Linux lets a process reset through
/// `/proc/self/clear_refs`, so one phase's peak can be read on its own.
enum PeakMemory {
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    static func current() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}

/// The migration table's rows.
struct MigrationTable {
    var heading: String
    var result: MigrationBench.Result
    var footnotes: [String] = []

    func render(markdown: Bool) -> String {
        let migrate = Stopwatch.median(result.openAndMigrate)
        let goal = migrate < .seconds(3) ? "met" : "missed"
        let rows = [
            ["M1. open \(Format.grouped(Double(result.objects))) objects with version 2 (migrate)", Measurement.time(migrate).text, "under 3 s: \(goal)"],
            ["M2. the migration alone (map, write, switch)", Measurement.time(Stopwatch.median(result.migration)).text, ""],
            ["M3. open with version 1 (no migration), for reference", Measurement.time(Stopwatch.median(result.openOnly)).text, ""],
            ["M4. peak memory above the process's before M1", "\(Format.decimal(Double(result.peakGrowth.max() ?? 0) / 1_048_576, digits: 0)) MiB", ""],
            ["M5. store on disk before / after", "\(Format.decimal(Double(result.storeBytesBefore) / 1_000_000, digits: 1)) MB / \(Format.decimal(Double(result.storeBytesAfter) / 1_000_000, digits: 1)) MB", ""],
        ]
        return PlainTable(heading: heading, header: ["workload", "Granary", "goal"], rows: rows, footnotes: footnotes).render(markdown: markdown)
    }
}
