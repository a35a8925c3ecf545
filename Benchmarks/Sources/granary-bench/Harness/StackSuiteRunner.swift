import Foundation
import Granary
import GranaryStack
import Synchronization

/// What one layout did in the stacks table.
struct StackResult {
    var layout: StackLayout
    /// Objects imported (the seed excluded) and the time until they were all in the store and merged.
    var imported: Int
    var importDuration: Duration
    /// Per main-context fetch: from the frame it was due in until it returned (waiting for the main
    /// queue included).
    var latencies: [Duration]
    /// Per main-context fetch: the fetch alone.
    var fetchDurations: [Duration]

    static let frame = Duration.milliseconds(16)

    var importRate: Double { Double(imported) / importDuration.seconds }
    var overFrame: Int { latencies.filter { $0 > Self.frame }.count }

    /// The value below which `fraction` of the latencies fall (nearest rank).
    func latency(percentile fraction: Double) -> Duration {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .zero }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}

/// Runs the import-while-fetching workload for each layout: a background thread imports objects in
/// chunks, each through a new import context that saves, while the main thread, like a user
/// interface, runs the main queue and fetches the 20 visible objects in the view context every 16 ms.
///
/// Must run on the main thread: the view contexts are main-queue contexts, and the main thread serves
/// their queue between frames, as an app's run loop does.
struct StackSuiteRunner {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    func run(_ layout: StackLayout, model: ManagedObjectModel) throws -> StackResult {
        precondition(Thread.isMainThread, "the stacks workload serves the main queue, so it runs on the main thread")
        let folder = try scratch.makeFolder("stacks-\(layout.rawValue)")
        defer { scratch.remove(folder) }
        let stack = try layout.makeStack(in: folder, model: model)
        let view = stack.viewContext

        progress("\(layout.title): seed \(options.stackSeed) objects")
        var generator = SplitMix64(seed: 0x57AC_CAFE)
        let seedContext = layout.importContext(of: stack)
        var seedGenerator = generator
        try seedContext.performAndWait { try StackImport.insert(options.stackSeed, from: 0, into: seedContext, generator: &seedGenerator) }
        generator = seedGenerator
        serveMainQueue(until: flush(stack))
        let plan = try view.performAndWait { try view.explain(StackImport.visible) }
        guard case .index = plan.access, plan.limitPushedDown else {
            throw BenchError.misconfigured("the visible-objects fetch does not use the rank index with its limit: \(plan.explain)")
        }

        progress("\(layout.title): import \(options.stackObjects) objects in chunks of \(options.stackChunk) while fetching every 16 ms")
        let outcome = ImportOutcome()
        let chunks = (options.stackObjects + options.stackChunk - 1) / options.stackChunk
        let seed = options.stackSeed
        let chunkSize = options.stackChunk
        let total = options.stackObjects
        let importGenerator = generator
        let importer = Thread {
            var generator = importGenerator
            let clock = ContinuousClock()
            let start = clock.now
            do {
                for chunk in 0..<chunks {
                    let context = layout.importContext(of: stack)
                    let first = seed + chunk * chunkSize
                    let count = min(chunkSize, total - chunk * chunkSize)
                    var local = generator
                    try context.performAndWait { try StackImport.insert(count, from: first, into: context, generator: &local) }
                    generator = local
                }
                // Imported means in the store and merged: wait for what the stack does on its own.
                let flushed = DispatchSemaphore(value: 0)
                let failure = Shared<(any Error)?>(nil)
                Task {
                    do { try await stack.flush() } catch { failure.value = error }
                    flushed.signal()
                }
                flushed.wait()
                if let error = failure.value { throw error }
                outcome.finish(.success(clock.now - start))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        importer.stackSize = 8 << 20
        importer.start()

        // The main thread: serve the main queue, and fetch the visible objects once per frame.
        let clock = ContinuousClock()
        var latencies: [Duration] = []
        var fetchDurations: [Duration] = []
        var due = clock.now + StackResult.frame
        while !outcome.isDone {
            serveMainQueue(until: due)
            let start = clock.now
            let titles = try view.performAndWait { try view.fetch(StackImport.visible).reduce(0) { $0 + $1.title.utf8.count } }
            let end = clock.now
            precondition(titles > 0, "the visible list is empty")
            latencies.append(end - due)
            fetchDurations.append(end - start)
            // The next frame after this one ended: a fetch that overran skips frames, as a UI does.
            let behind = Int(((end - due).seconds / StackResult.frame.seconds).rounded(.down))
            due = due + StackResult.frame * (behind + 1)
        }
        let duration = try outcome.result()

        let stored = try stack.newBackgroundContext().performAndWaitCount()
        guard stored == seed + total else {
            throw BenchError.misconfigured("\(layout.title) stored \(stored) objects, expected \(seed + total)")
        }
        try stack.detach(persistentStores: stack.persistentStores)
        return StackResult(layout: layout, imported: total, importDuration: duration, latencies: latencies, fetchDurations: fetchDurations)
    }

    /// Starts `stack.flush()` and returns a check of whether it is done.
    private func flush(_ stack: any PersistentStack) -> () -> Bool {
        let done = Shared(false)
        Task {
            try? await stack.flush()
            done.value = true
        }
        return { done.value }
    }

    /// Runs the main queue (through the main run loop) until `isDone` says so.
    private func serveMainQueue(until isDone: () -> Bool) {
        while !isDone() { RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.001)) }
    }

    /// Runs the main queue until `deadline`.
    private func serveMainQueue(until deadline: ContinuousClock.Instant) {
        let clock = ContinuousClock()
        while clock.now < deadline {
            RunLoop.main.run(until: Date(timeIntervalSinceNow: min(0.002, (deadline - clock.now).seconds)))
        }
    }
}

/// A value shared between threads.
private final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// The import thread's result, read by the main thread.
private final class ImportOutcome: Sendable {
    private let state = Mutex<Result<Duration, any Error>?>(nil)

    var isDone: Bool { state.withLock { $0 != nil } }

    func finish(_ result: Result<Duration, any Error>) { state.withLock { $0 = result } }

    /// - Throws: the import's error.
    func result() throws -> Duration {
        guard let result = state.withLock({ $0 }) else { preconditionFailure("the import has not finished") }
        return try result.get()
    }
}

private extension ManagedObjectContext {
    /// How many items the store holds, read in this context.
    func performAndWaitCount() throws -> Int {
        try performAndWait { try count(for: FetchRequest<ImportedItem>()) }
    }
}
