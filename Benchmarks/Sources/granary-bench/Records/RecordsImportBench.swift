import Foundation
import GRDB
import Granary
import GranaryRecords
import RecordsFeed
import GranaryStack

/// J1–J3: importing JSON from a web service by unique ID, in one call and one durable save.
///
/// Each repetition makes a new store holding the 1,000 parents (untimed), then times three imports of
/// `--objects` items from `Data`: J1 into the empty store, J2 the same array again (every object
/// exists), J3 an array whose first half exists and second half is new, with changed values. Granary:
/// `FeedItem.parse(jsonData:in: manager)` on a `StoreManager` (its serial writer, one save, returning
/// once the main context has merged). GRDB: `JSONDecoder` into Codable records, then `record.upsert(db)`
/// for each in one write transaction.
struct RecordsImportBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    enum Step: Int, CaseIterable {
        case empty, again, half

        var title: String {
            switch self {
            case .empty: "J1. import into an empty store"
            case .again: "J2. the same array again (all exist)"
            case .half: "J3. half existing, half new"
            }
        }
    }

    struct Result {
        var objects: Int
        /// Per system and configuration, per step: the median time.
        var times: [(column: SystemColumn, configuration: String?, step: Step, time: Duration)]
        var jsonBytes: Int
        /// K1: the median batch's time per fetch by ID, with a key-path predicate and with `#Predicate`.
        var keyPathFetch: Duration = .zero
        var macroFetch: Duration = .zero
        var fetches = 0
    }

    /// K1: fetches of one item by ID, written with a key path and with `#Predicate`, in alternating
    /// batches on one context (so that the machine's mood weighs on both alike); each fetch's object is
    /// read, and both must find the same items.
    func keyPathQueries(_ manager: StoreManager, ids: [Int64]) throws -> (keyPath: Duration, macro: Duration) {
        let context = manager.newBackgroundContext()
        return try context.performAndWait {
            var keyPathTimes: [Duration] = []
            var macroTimes: [Duration] = []
            var sums = (keyPath: 0, macro: 0)
            let batches = 11
            let perBatch = max(1, ids.count / batches)
            for batch in 0..<batches {
                let slice = ids[(batch * perBatch) % ids.count..<min(ids.count, (batch * perBatch) % ids.count + perBatch)]
                let k = try Stopwatch.time {
                    for id in slice {
                        let request = try FetchRequest<FeedItem>(\FeedItem.serverID == id, in: context)
                        sums.keyPath &+= Int(try context.fetch(request).first?.quantity ?? -1)
                    }
                }.duration
                let m = try Stopwatch.time {
                    for id in slice {
                        let request = FetchRequest<FeedItem>(predicate: #Predicate<FeedItem> { $0.serverID == id })
                        sums.macro &+= Int(try context.fetch(request).first?.quantity ?? -1)
                    }
                }.duration
                // The first batch warms both up and is not counted.
                if batch > 0 {
                    keyPathTimes.append(k / slice.count)
                    macroTimes.append(m / slice.count)
                }
            }
            guard sums.keyPath == sums.macro else {
                throw BenchError.resultsDisagree(workload: "K1", detail: "key path \(sums.keyPath), #Predicate \(sums.macro)")
            }
            return (Stopwatch.median(keyPathTimes), Stopwatch.median(macroTimes))
        }
    }

    func run() throws -> Result {
        let n = options.objects
        progress("records: generating \(n) items as JSON")
        let first = try RecordsModel.json(0..<n, edition: 0)
        let second = try RecordsModel.json(n / 2..<(n / 2 + n), edition: 1)
        let parents = try RecordsModel.parentsJSON()
        var editions: [Int: Int] = [:]
        for id in 0..<n { editions[id] = 0 }
        for id in n / 2..<(n / 2 + n) { editions[id] = 1 }
        let expected = RecordsModel.expected(editions)
        let payloads: [Step: Data] = [.empty: first, .again: first, .half: second]
        var result = Result(objects: n, times: [], jsonBytes: first.count)

        // Granary.
        var granaryTimes: [Step: [Duration]] = [:]
        for repetition in 0..<options.repetitions {
            progress("records: Granary, run \(repetition + 1) of \(options.repetitions)")
            let folder = try scratch.makeFolder("records-granary-\(repetition)")
            let manager = try StoreManager(name: "Feed", model: RecordsModel.model, location: .directory(folder))
            try MainLoop.run { try await FeedParent.parse(jsonData: parents, in: manager) }
            for step in Step.allCases {
                let data = payloads[step]!
                let clock = ContinuousClock()
                let start = clock.now
                let ids = try MainLoop.run { try await FeedItem.parse(jsonData: data, in: manager) }
                granaryTimes[step, default: []].append(clock.now - start)
                guard ids.count == n else {
                    throw BenchError.resultsDisagree(workload: step.title, detail: "Granary returned \(ids.count) IDs for \(n) elements")
                }
            }
            let context = manager.newBackgroundContext()
            let (count, checksum) = try context.performAndWait {
                let all = try context.fetch(FeedItem.fetchRequest())
                return (all.count, all.reduce(0) { $0 + Int($1.quantity) + Int($1.parent?.serverID ?? -1_000_000) })
            }
            guard count == expected.count, checksum == expected.checksum else {
                throw BenchError.resultsDisagree(workload: "records import",
                                                 detail: "Granary holds \(count) items, checksum \(checksum); expected \(expected.count), \(expected.checksum)")
            }
            if repetition == 0 {
                let lookups = (0..<min(n, 11_000)).map { Int64(($0 &* 7_919) % (n / 2 + n)) }
                (result.keyPathFetch, result.macroFetch) = try keyPathQueries(manager, ids: lookups)
                result.fetches = lookups.count
            }
            scratch.remove(folder)
        }
        for step in Step.allCases { result.times.append((.granary, nil, step, Stopwatch.median(granaryTimes[step]!))) }
        if options.isGranaryOnly { return result }

        // GRDB: JSONDecoder into Codable records, upsert each in one transaction.
        for kind in SQLiteSetup.ConnectionKind.allCases {
            var times: [Step: [Duration]] = [:]
            for repetition in 0..<options.repetitions {
                progress("records: GRDB records [\(kind.rawValue)], run \(repetition + 1) of \(options.repetitions)")
                let folder = try scratch.makeFolder("records-grdb-\(kind.rawValue)-\(repetition)")
                let writer = try SQLiteSetup.open(kind, cacheMiB: options.sqliteCacheMiB, in: folder)
                try writer.write { db in
                    try db.execute(sql: RecordsModel.createSchema)
                    for parent in try JSONDecoder().decode([RecordsModel.Parent].self, from: parents) { try parent.insert(db) }
                }
                for step in Step.allCases {
                    let data = payloads[step]!
                    let duration = try Stopwatch.time {
                        let records = try RecordsModel.decoder.decode([RecordsModel.Item].self, from: data)
                        try writer.write { db in
                            for record in records { try record.upsert(db) }
                        }
                    }.duration
                    times[step, default: []].append(duration)
                }
                let (count, checksum) = try writer.read { db in
                    (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM feedItem") ?? 0,
                     try Int.fetchOne(db, sql: "SELECT SUM(quantity + parent) FROM feedItem") ?? 0)
                }
                guard count == expected.count, checksum == expected.checksum else {
                    throw BenchError.resultsDisagree(workload: "records import",
                                                     detail: "GRDB [\(kind.rawValue)] holds \(count) items, checksum \(checksum); expected \(expected.count), \(expected.checksum)")
                }
                try writer.close()
                scratch.remove(folder)
            }
            for step in Step.allCases { result.times.append((.grdbRecords, kind.rawValue, step, Stopwatch.median(times[step]!))) }
        }
        return result
    }
}
