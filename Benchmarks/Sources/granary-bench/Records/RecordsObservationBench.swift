import Foundation
import GRDB
import Granary
import GranaryRecords
import RecordsFeed
import GranaryStack
import Synchronization

/// R1: how soon a list on screen hears of a background save.
///
/// A store of `observed` items is shown whole, sorted by ID, on the main queue: Granary through a
/// `Results<FeedItem>` on the store manager's main context, GRDB through a `ValueObservation` of the same
/// query scheduled on the main queue. A background thread then makes `saves` saves, each changing one
/// item's score, and waits for the main queue to hear of each before the next: the span runs from the
/// start of the save (durable commit included) to the change closure.
struct RecordsObservationBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void
    var observed: Int { options.isQuick ? 1_000 : 10_000 }
    var saves: Int { options.isQuick ? 50 : 1_000 }

    struct Spans: Sendable {
        /// From the start of the save to the change closure, per save.
        var fromStart: [Duration] = []
    }

    struct Result {
        var observed: Int
        var saves: Int
        var spans: [(column: SystemColumn, configuration: String?, spans: Spans)]
    }

    /// What the main queue last heard (a number that grows with each save it saw) and when; the saving
    /// thread waits until the number reaches what its save makes it.
    final class Heard: Sendable {
        private let state = Mutex<(count: Int, value: Double, at: ContinuousClock.Instant?)>((0, -1, nil))
        private let semaphore = DispatchSemaphore(value: 0)
        func signal(_ value: Double) {
            state.withLock { $0 = ($0.count + 1, value, ContinuousClock.now) }
            semaphore.signal()
        }
        /// Waits for a value of at least `value`; returns when it was heard.
        func wait(for value: Double) -> ContinuousClock.Instant {
            while true {
                semaphore.wait()
                if let at = state.withLock({ $0.value >= value ? $0.at : nil }) { return at }
            }
        }
        var count: Int { state.withLock { $0.count } }
    }

    func run() throws -> Result {
        var result = Result(observed: observed, saves: saves, spans: [])
        let data = try RecordsModel.json(0..<observed, edition: 0)
        let parents = try RecordsModel.parentsJSON()
        let ids = (0..<saves).map { ($0 &* 7_919) % observed }

        // Granary: Results on the manager's main context, saves from a background context.
        do {
            progress("records: R1 Granary, \(saves) saves")
            let folder = try scratch.makeFolder("observe-granary")
            let manager = try StoreManager(name: "Feed", model: RecordsModel.model, location: .directory(folder))
            try MainLoop.run { try await FeedParent.parse(jsonData: parents, in: manager) }
            try MainLoop.run { try await FeedItem.parse(jsonData: data, in: manager) }
            let heard = Heard()
            let results = try Results<FeedItem>(context: manager.mainContext)
            guard results.numberOfObjectsInFirstSection == observed else {
                throw BenchError.resultsDisagree(workload: "R1", detail: "Granary's Results holds \(results.numberOfObjectsInFirstSection) items")
            }
            let updates = Mutex(0)
            _ = results.registerForChanges { changes in
                let total = updates.withLock { $0 += changes.filter { $0.type == .update }.count; return $0 }
                heard.signal(Double(total))
            }
            let background = manager.newBackgroundContext()
            let spans = try MainLoop.serve {
                try background.performAndWait {
                    let items = try background.fetch(FeedItem.fetchRequest())
                    let byID = Dictionary(uniqueKeysWithValues: items.map { (Int($0.serverID), $0) })
                    var spans = Spans()
                    let clock = ContinuousClock()
                    for (k, id) in ids.enumerated() {
                        byID[id]!.score += 1
                        let start = clock.now
                        try background.save()
                        let at = heard.wait(for: Double(k + 1))
                        spans.fromStart.append(at - start)
                    }
                    return spans
                }
            }
            guard heard.count == saves, updates.withLock({ $0 }) == saves else {
                throw BenchError.resultsDisagree(workload: "R1", detail: "Granary heard \(heard.count) batches with \(updates.withLock { $0 }) updates for \(saves) saves")
            }
            withExtendedLifetime(results) {}
            result.spans.append((.granary, nil, spans))
            scratch.remove(folder)
        }
        if options.isGranaryOnly { return result }

        // GRDB: ValueObservation of the same query on the main queue, saves from a background thread.
        for kind in SQLiteSetup.ConnectionKind.allCases {
            progress("records: R1 GRDB [\(kind.rawValue)], \(saves) saves")
            let folder = try scratch.makeFolder("observe-grdb-\(kind.rawValue)")
            let writer = try SQLiteSetup.open(kind, cacheMiB: options.sqliteCacheMiB, in: folder)
            try writer.write { db in
                try db.execute(sql: RecordsModel.createSchema)
                for parent in try JSONDecoder().decode([RecordsModel.Parent].self, from: parents) { try parent.insert(db) }
                for item in try RecordsModel.decoder.decode([RecordsModel.Item].self, from: data) { try item.insert(db) }
            }
            let heard = Heard()
            let counts = Mutex<[Int]>([])
            let initialSum = try writer.read { db in try Double.fetchOne(db, sql: "SELECT SUM(score) FROM feedItem") ?? 0 }
            let observation = ValueObservation.tracking { db in try RecordsModel.Item.order(Column("id")).fetchAll(db) }
            let cancellable = observation.start(in: writer, scheduling: .async(onQueue: .main),
                                                onError: { error in report("R1 GRDB observation failed: \(error)") },
                                                onChange: { items in
                                                    counts.withLock { $0.append(items.count) }
                                                    heard.signal(items.reduce(0) { $0 + $1.score } - initialSum)
                                                })
            let spans = try MainLoop.serve {
                _ = heard.wait(for: 0)  // the initial value
                var spans = Spans()
                let clock = ContinuousClock()
                for (k, id) in ids.enumerated() {
                    let start = clock.now
                    try writer.write { db in
                        try db.execute(sql: "UPDATE feedItem SET score = score + 1 WHERE id = ?", arguments: [id])
                    }
                    let at = heard.wait(for: Double(k + 1) - 0.25)
                    spans.fromStart.append(at - start)
                }
                return spans
            }
            cancellable.cancel()
            // A pool may deliver a value more than once (GRDB documents it); every save must be heard.
            guard heard.count >= saves + 1, counts.withLock({ $0.allSatisfy { $0 == observed } }) else {
                throw BenchError.resultsDisagree(workload: "R1", detail: "GRDB [\(kind.rawValue)] heard \(heard.count) values for \(saves) saves")
            }
            result.spans.append((.grdbRecords, kind.rawValue, spans))
            try writer.close()
            scratch.remove(folder)
        }
        return result
    }
}
