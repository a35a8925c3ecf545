import Foundation
import Synchronization

/// What one system, in one configuration, measured in every workload it ran, with the checksums of what
/// its reads returned. `Key` names the rows: `Workload` for the main table, `ObjectWorkload` for the
/// object level.
struct SuiteResult<Key: Hashable> {
    var column: SystemColumn
    /// The configuration's name ("queue", "pool"), or `nil` when the system has only one.
    var configuration: String?
    var measurements: [Key: Measurement] = [:]
    var checksums: [Key: Int] = [:]
}

/// Runs every workload against one system, in the same order, on the same data, each in a fresh folder
/// of the scratch directory.
struct SuiteRunner {
    let options: BenchOptions
    let dataset: Dataset
    /// The rows of the store that is reopened and measured on disk.
    let largeItems: [Item]
    /// Rows for the durable-transaction workloads: a few warm-up rows, then the timed ones.
    let durableItems: [Item]
    let scratch: ScratchDirectory
    /// Where progress goes (standard error), so that standard output holds only the table.
    let progress: (String) -> Void

    static let durableWarmUp = 10
    /// Reads are timed in this many batches; the reported figure is the median batch's time per operation.
    static let batches = 10

    init(options: BenchOptions, dataset: Dataset, scratch: ScratchDirectory, progress: @escaping (String) -> Void) {
        self.options = options
        self.dataset = dataset
        self.scratch = scratch
        self.progress = progress
        var random = SplitMix64(seed: 0x1A26E)
        largeItems = Dataset.makeItems(ids: 1...Int64(options.largeRows), categoryCount: Int64(max(1, options.largeRows / 100)),
                                       random: &random)
        durableItems = Dataset.makeItems(ids: 1...Int64(options.durableTransactions + Self.durableWarmUp),
                                         categoryCount: dataset.categoryCount, random: &random)
    }

    /// Runs all workloads that have a peer against `system` and returns what they measured.
    /// - Throws: whatever the system throws; a failing system stops the run rather than leave a hole.
    func run(_ system: BenchSystem) throws -> SuiteResult<Workload> {
        let name = system.column.title + (system.configuration.map { " [\($0)]" } ?? "")
        let tag = "\(system.column)-\(system.configuration ?? "default")"
        var result = SuiteResult<Workload>(column: system.column, configuration: system.configuration)
        let items = dataset.items[...]

        // 1. Bulk insert, each repetition into a new store; the last store serves workloads 2–6.
        progress("\(name): bulk insert")
        var insertTimes: [Duration] = []
        var store: (any BenchStore)?
        var folder: URL?
        for repetition in 0..<options.repetitions {
            if let store, let folder { try store.close(); scratch.remove(folder) }
            let newFolder = try scratch.makeFolder("\(tag)-main-\(repetition)")
            let newStore = try system.create(newFolder)
            insertTimes.append(try Stopwatch.time { try newStore.insert(items) }.duration)
            (store, folder) = (newStore, newFolder)
        }
        guard let store, let folder else { preconditionFailure("repetitions must be at least 1") }
        result.measurements[.bulkInsert] = .time(Stopwatch.median(insertTimes))
        if let bytes = try store.memoryFootprint() {
            result.measurements[.memoryPerRow] = .bytesPerRow(Double(bytes) / Double(options.rows))
        }

        // 2–4. Reads, timed in batches after one untimed warm-up batch.
        progress("\(name): point lookups")
        (result.measurements[.pointLookup], result.checksums[.pointLookup]) =
            try Self.timeBatches(dataset.lookupKeys[...], unit: "ops/s") { try store.fetch(keys: $0) }
        progress("\(name): equality queries")
        (result.measurements[.equalityQuery], result.checksums[.equalityQuery]) =
            try Self.timeBatches(dataset.categoryQueries[...], unit: "queries/s") { try store.queryCategories($0) }
        progress("\(name): range queries")
        (result.measurements[.rangeQuery], result.checksums[.rangeQuery]) =
            try Self.timeBatches(dataset.rangeQueries[...], unit: "queries/s") { try store.queryPriceRanges($0) }

        // 5. Update every row, with new values on each pass.
        progress("\(name): update all")
        var updateTimes: [Duration] = []
        for pass in 0..<options.repetitions {
            let updated = dataset.updatedItems(pass: pass)
            updateTimes.append(try Stopwatch.time { try store.update(updated[...]) }.duration)
        }
        result.measurements[.updateAll] = .time(Stopwatch.median(updateTimes))
        result.checksums[.updateAll] = try store.fetch(keys: dataset.lookupKeys[...])

        // 6. Delete every row. Destructive, so timed once.
        progress("\(name): delete all")
        let keys = dataset.items.map(\.id)
        result.measurements[.deleteAll] = .time(try Stopwatch.time { try store.delete(keys: keys[...]) }.duration)
        result.checksums[.deleteAll] = try store.fetch(keys: dataset.lookupKeys[...])
        try store.close()
        scratch.remove(folder)

        // 7. Small durable transactions, one after the other.
        progress("\(name): durable transactions")
        result.measurements[.durableTransactions] = try timeDurableInserts(system, folderName: "\(tag)-durable", threads: 1)

        // 8. The same from two threads at once: a store with group commit shares one sync among several commits.
        progress("\(name): concurrent durable transactions")
        result.measurements[.concurrentTransactions] = try timeDurableInserts(system, folderName: "\(tag)-concurrent", threads: 2)

        // 9–10. A large store: its size after a checkpoint, and the time to reopen it and answer a query.
        progress("\(name): building \(options.largeRows) rows")
        let largeFolder = try scratch.makeFolder("\(tag)-large")
        let largeStore = try system.create(largeFolder)
        for start in stride(from: 0, to: largeItems.count, by: 100_000) {
            try largeStore.insert(largeItems[start..<min(start + 100_000, largeItems.count)])
        }
        try largeStore.checkpoint()
        try largeStore.close()
        result.measurements[.storeSize] = .bytes(ScratchDirectory.size(of: largeFolder))
        progress("\(name): reopen")
        let probe = largeItems[largeItems.count / 2].id
        var reopenTimes: [Duration] = []
        var reopenChecksum = 0
        for _ in 0..<options.reopenRepetitions {
            let (reopened, duration) = try Stopwatch.time {
                let reopened = try system.open(largeFolder)
                reopenChecksum = try reopened.fetch(keys: [probe])
                return reopened
            }
            reopenTimes.append(duration)
            try reopened.close()
        }
        result.measurements[.reopen] = .time(Stopwatch.median(reopenTimes))
        result.checksums[.reopen] = reopenChecksum
        scratch.remove(largeFolder)
        return result
    }

    /// Times `body` over `batches` slices of `inputs` after one untimed call on the first slice, and
    /// returns the rate of the median batch and the sum of the timed batches' checksums.
    static func timeBatches<Input>(
        _ inputs: ArraySlice<Input>, unit: String, _ body: (ArraySlice<Input>) throws -> Int
    ) throws -> (Measurement, Int) {
        let size = max(1, inputs.count / Self.batches)
        _ = try body(inputs.prefix(size))
        var perOperation: [Duration] = []
        var checksum = 0
        for start in stride(from: inputs.startIndex, to: inputs.endIndex, by: size) {
            let batch = inputs[start..<min(start + size, inputs.endIndex)]
            let (sum, duration) = try Stopwatch.time { try body(batch) }
            checksum &+= sum
            perOperation.append(duration / batch.count)
        }
        return (.rate(perOperation: Stopwatch.median(perOperation), unit: unit), checksum)
    }

    /// Commits `durableTransactions` single-row transactions into a new store, in batches; each batch is
    /// split over `threads` threads that start together. Returns the total rate of the median batch, so
    /// that a burst of disk traffic from another process spoils one batch rather than the figure.
    private func timeDurableInserts(_ system: BenchSystem, folderName: String, threads: Int) throws -> Measurement {
        let folder = try scratch.makeFolder(folderName)
        defer { scratch.remove(folder) }
        let store = try system.create(folder)
        for item in durableItems.prefix(Self.durableWarmUp) { try store.insertDurably(item) }
        let timed = Array(durableItems.dropFirst(Self.durableWarmUp))
        let size = max(threads, timed.count / Self.batches)
        var perTransaction: [Duration] = []
        for start in stride(from: 0, to: timed.count, by: size) {
            let batch = timed[start..<min(start + size, timed.count)]
            let failure = Mutex<(any Error)?>(nil)
            let (_, duration) = Stopwatch.time {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    do {
                        for index in stride(from: batch.startIndex + thread, to: batch.endIndex, by: threads) {
                            try store.insertDurably(batch[index])
                        }
                    } catch {
                        failure.withLock { $0 = $0 ?? error }
                    }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            perTransaction.append(duration / batch.count)
        }
        try store.close()
        return .rate(perOperation: Stopwatch.median(perTransaction), unit: "tx/s")
    }
}
