import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Synchronization

/// A1–A2: what GranaryConnect costs. A1: the overhead of running work as actions (proxy, lane,
/// statistics, notifications) against the same closures on a plain task group; A2: merging a server's
/// feed into a store by unique key, time and resident memory, at two sizes to show how memory grows.
struct ConnectBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    struct Result {
        var actions: Int
        /// A1: 10,000 empty generic actions, through the connect and on a task group.
        var genericConnect: Duration, genericTaskGroup: Duration
        /// A1: entity actions with an empty context (one lane), and the same closures on a task group.
        var entityConnect: Duration, entityTaskGroup: Duration
        var merges: [Merge]
    }

    struct Merge {
        var storeSize: Int
        var feed: Int, changed: Int, added: Int, gone: Int
        var time: Duration
        /// Growth of resident memory during the merge (sampled every millisecond) over the resident
        /// memory before it.
        var peakGrowth: Int
        var report: FeedMergeReport
        /// The store's own listing merged again, nothing changed: time and memory growth.
        var unchangedTime: Duration
        var unchangedGrowth: Int
        /// The A2 feed again on a fresh copy of the store, generated lazily in key order and merged with
        /// `merge(sortedByKey:)`; and the store's own listing the same way.
        var sortedTime: Duration
        var sortedGrowth: Int
        var sortedUnchangedGrowth: Int
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Customer") {
                Attribute("uuid", .string, preservesValueInHistoryOnDeletion: true)
                Attribute("name", .string, defaultValue: "")
                Attribute("score", .integer64, defaultValue: 0)
                Attribute("email", .string, defaultValue: "")
                Unique("uuid")
            }
        }
    }

    final class EmptyAction: GenericAction {
        func execute() throws {}
        func cancel() {}
    }

    final class EmptyEntityAction: EntityAction {
        typealias ManagedObjectType = ManagedObject
        static var entityName: String? { "Customer" }
        func execute(context: ActionContext) throws {}
        func cancel() {}
    }

    /// Merges a feed generated as it is read, in key order, with `merge(sortedByKey:)`.
    final class SortedMergeAction: EntityAction, @unchecked Sendable {
        typealias ManagedObjectType = ManagedObject
        static var entityName: String? { "Customer" }
        let range: Range<Int>
        let name: @Sendable (Int) -> String
        let skip: @Sendable (Int) -> Bool
        var report = FeedMergeReport()
        init(range: Range<Int>, skip: @escaping @Sendable (Int) -> Bool = { _ in false }, name: @escaping @Sendable (Int) -> String) {
            self.range = range
            self.skip = skip
            self.name = name
        }
        func execute(context: ActionContext) throws {
            let skip = self.skip, name = self.name
            let feed: LazyMapSequence<LazyFilterSequence<Range<Int>>, [String: Any]> = range.lazy.filter { !skip($0) }.map { i in
                ["uuid": String(format: "c%07d", i), "name": name(i), "score": i, "email": "customer\(i)@example.com"]
            }
            report = try context.merge(sortedByKey: feed)
        }
        func cancel() {}
    }

    /// Merges a feed held by the bench (made once, only read) on the action's context.
    final class MergeAction: EntityAction, @unchecked Sendable {
        typealias ManagedObjectType = ManagedObject
        static var entityName: String? { "Customer" }
        let feed: [[String: Any]]
        var report = FeedMergeReport()
        init(feed: [[String: Any]]) { self.feed = feed }
        func execute(context: ActionContext) throws { report = try context.merge(feed) }
        func cancel() {}
    }

    func run() async throws -> Result {
        let actions = options.isQuick ? 1_000 : 10_000
        let model = try Self.model()
        let a1 = try scratch.makeFolder("connect-a1")
        defer { scratch.remove(a1) }
        let connect = GenericConnect<DirectStrategy>(name: "Bench", managedObjectModel: model,
                                                     options: ConnectOptions(stack: StackOptions(storeDirectory: a1)))
        try connect.start()

        progress("connect A1: \(actions) generic actions")
        var genericConnect: [Duration] = [], genericGroup: [Duration] = [], entityConnect: [Duration] = [], entityGroup: [Duration] = []
        let counter = Counter()
        for _ in 0..<options.repetitions {
            let start = ContinuousClock.now
            for _ in 0..<actions { connect.execute(EmptyAction()) }
            await connect.waitUntilIdle()
            genericConnect.append(ContinuousClock.now - start)

            let groupStart = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<actions { group.addTask { try? EmptyAction().execute(); counter.increment() } }
            }
            genericGroup.append(ContinuousClock.now - groupStart)

            let entityStart = ContinuousClock.now
            for _ in 0..<actions { _ = try connect.execute(EmptyEntityAction()) }
            await connect.waitUntilIdle()
            entityConnect.append(ContinuousClock.now - entityStart)

            // The peer of an entity action: a new background context and the same empty body, on a task group.
            let entityGroupStart = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<actions {
                    group.addTask {
                        let context = connect.newBackgroundContext()
                        context.performAndWait { counter.increment() }
                    }
                }
            }
            entityGroup.append(ContinuousClock.now - entityGroupStart)
        }
        try connect.close()

        var merges: [Merge] = []
        for size in options.isQuick ? [2_000, 4_000] : [40_000, 160_000] {
            merges.append(try await merge(size: size, model: model))
        }
        return Result(actions: actions, genericConnect: Stopwatch.median(genericConnect), genericTaskGroup: Stopwatch.median(genericGroup),
                      entityConnect: Stopwatch.median(entityConnect), entityTaskGroup: Stopwatch.median(entityGroup), merges: merges)
    }

    /// A2 at one size: a store of `size` customers filled by a first merge (untimed), then a feed with
    /// 10% of the names changed, 1% new customers and 1% gone, merged in one action.
    private func merge(size: Int, model: ManagedObjectModel) async throws -> Merge {
        progress("connect A2: a feed of \(size) customers")
        let folder = try scratch.makeFolder("connect-a2-\(size)")
        let connect = GenericConnect<DirectStrategy>(name: "Bench", managedObjectModel: model,
                                                     options: ConnectOptions(stack: StackOptions(storeDirectory: folder)))
        try connect.start()
        defer {
            try? connect.close()
            scratch.remove(folder)
        }
        func record(_ i: Int, name: String) -> [String: Any] {
            ["uuid": String(format: "c%07d", i), "name": name, "score": i, "email": "customer\(i)@example.com"]
        }
        let first = MergeAction(feed: (0..<size).map { record($0, name: "name \($0)") })
        _ = try await connect.run(first)
        guard first.report.inserted == size else { throw BenchError.resultsDisagree(workload: "A2", detail: "the first merge inserted \(first.report.inserted) of \(size)") }

        // The same listing again: nothing to change, nothing saved.
        let (unchangedTime, unchangedGrowth, unchangedReport) = try await measured(connect, MergeAction(feed: first.feed.shuffled()))
        guard unchangedReport.unchanged == size, !unchangedReport.saved else {
            throw BenchError.resultsDisagree(workload: "A2", detail: "merging the same listing again reported \(unchangedReport)")
        }

        let gone = size / 100, added = size / 100, changed = size / 10
        var feed = (gone..<size).map { i in record(i, name: i % 10 == 0 ? "renamed \(i)" : "name \(i)") }
        feed += (size..<(size + added)).map { record($0, name: "new \($0)") }
        feed.shuffle()
        let (time, growth, report) = try await measured(connect, MergeAction(feed: feed))
        let expectedChanged = (gone..<size).filter { $0 % 10 == 0 }.count
        guard report.inserted == added, report.deleted == gone, report.updated == expectedChanged else {
            throw BenchError.resultsDisagree(workload: "A2", detail: "the merge reported \(report), expected \(added) inserted, \(expectedChanged) updated, \(gone) deleted")
        }
        // The same two merges with the sorted walk, on a second store filled the same way.
        let sortedFolder = try scratch.makeFolder("connect-a2s-\(size)")
        let sortedConnect = GenericConnect<DirectStrategy>(name: "Bench", managedObjectModel: model,
                                                           options: ConnectOptions(stack: StackOptions(storeDirectory: sortedFolder)))
        try sortedConnect.start()
        defer {
            try? sortedConnect.close()
            scratch.remove(sortedFolder)
        }
        _ = try await sortedConnect.run(SortedMergeAction(range: 0..<size) { "name \($0)" })
        let sortedUnchanged = SortedMergeAction(range: 0..<size) { "name \($0)" }
        let (_, sortedUnchangedGrowth, sortedUnchangedReport) = try await measured(sortedConnect, sortedUnchanged) { sortedUnchanged.report }
        let sortedAction = SortedMergeAction(range: 0..<(size + added), skip: { $0 < gone }) { i in
            i >= size ? "new \(i)" : i % 10 == 0 ? "renamed \(i)" : "name \(i)"
        }
        let (sortedTime, sortedGrowth, sortedReport) = try await measured(sortedConnect, sortedAction) { sortedAction.report }
        guard sortedUnchangedReport.unchanged == size, sortedReport.inserted == report.inserted, sortedReport.updated == report.updated,
              sortedReport.deleted == report.deleted else {
            throw BenchError.resultsDisagree(workload: "A2", detail: "the sorted walk reported \(sortedReport) (unchanged listing: \(sortedUnchangedReport)), the unsorted merge \(report)")
        }

        return Merge(storeSize: size, feed: feed.count, changed: changed, added: added, gone: gone, time: time,
                     peakGrowth: growth, report: report, unchangedTime: unchangedTime, unchangedGrowth: unchangedGrowth,
                     sortedTime: sortedTime, sortedGrowth: sortedGrowth, sortedUnchangedGrowth: sortedUnchangedGrowth)
    }

    /// Runs `action` and returns its time, the growth of resident memory while it ran (sampled every
    /// millisecond, over the resident memory before it) and its report.
    private func measured(_ connect: GenericConnect<DirectStrategy>, _ action: MergeAction) async throws -> (Duration, Int, FeedMergeReport) {
        try await measured(connect, action) { action.report }
    }

    private func measured<A: EntityAction>(_ connect: GenericConnect<DirectStrategy>, _ action: A,
                                           report: () -> FeedMergeReport) async throws -> (Duration, Int, FeedMergeReport) {
        let sampling = Atomic<Bool>(true)
        let peak = Atomic<Int>(0)
        // Memory freed by earlier steps goes back to the kernel first, so that reusing it does not hide growth.
        ResidentMemory.trim()
        let before = ResidentMemory.current()
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                let now = ResidentMemory.current()
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                usleep(1_000)
            }
        }
        sampler.start()
        let start = ContinuousClock.now
        let proxy = try await connect.run(action)
        let time = ContinuousClock.now - start
        sampling.store(false, ordering: .relaxed)
        if let error = proxy.error { throw error }
        return (time, max(0, peak.load(ordering: .relaxed) - before), report())
    }

    /// A counter the task-group bodies bump, so that they do something the optimizer keeps.
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func increment() { value.add(1, ordering: .relaxed) }
    }

    /// Runs the async bench from the synchronous main program.
    func runBlocking() throws -> Result { try granary_bench.runBlocking(run) }
}
