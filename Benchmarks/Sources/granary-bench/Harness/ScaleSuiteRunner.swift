import Foundation

/// Runs the scale table's workloads against one system at one size: a new store filled with the
/// dataset (timed once: the object table's O1 takes the median of several stores), then each read.
struct ScaleSuiteRunner {
    let options: BenchOptions
    let scratch: ScratchDirectory
    /// Where progress goes (standard error), so that standard output holds only the table.
    let progress: (String) -> Void

    /// The employees of one size, with the random order O9 and O10 visit them in (every position once).
    struct Size {
        let dataset: ObjectDataset
        let positions: [Int]

        init(employees: Int) {
            dataset = ObjectDataset(employees: employees, queries: 1, seed: 0x0B7EC7)
            var random = SplitMix64(seed: 0x5CA1E)
            var positions = Array(0..<employees)
            for i in stride(from: employees - 1, to: 0, by: -1) { positions.swapAt(i, Int(random.next(below: UInt64(i + 1)))) }
            self.positions = positions
        }
    }

    /// A timed read of the scale table, with the words its progress line uses.
    private typealias Read = (workload: ScaleWorkload, label: String, body: @Sendable (any ScaleBenchStore, Size) throws -> Int)

    private static let reads: [Read] = [
        (.fetchAll, "fetch all", { store, _ in try store.fetchAllEmployees() }),
        (.toMany, "to-many relationships", { store, _ in try store.walkDepartments() }),
        (.toManySorted, "to-many relationships, sorted", { store, _ in try store.walkDepartmentsSortedByName() }),
        (.batchedRandom, "batched fetch in random order", { store, size in try store.readBatchedFetch(at: size.positions) }),
        (.fetchedResultsRandom, "fetched results in random order", { store, size in try store.readFetchedResults(at: size.positions) }),
        (.toOne, "to-one relationships", { store, _ in try store.readDepartmentNames() }),
    ]

    /// Runs every scale workload against `system` at each size and returns what they measured, one
    /// result per size. Each size has its own store, all open at once, and each repetition of a read
    /// runs at every size in turn: the figures of both sizes then come from the same minutes, so that
    /// other work on the shared machine weighs on both and the growth between them stays meaningful.
    /// - Throws: whatever the system throws; `BenchError.misconfigured` for a system that does not run
    ///   the scale workloads, `.resultsDisagree` for repetitions that read different checksums.
    func run(_ system: ObjectBenchSystem, sizes: [Size]) throws -> [SuiteResult<ScaleWorkload>] {
        let name = system.column.title + (system.configuration.map { " [\($0)]" } ?? "")
        var results = sizes.map { _ in SuiteResult<ScaleWorkload>(column: system.column, configuration: system.configuration) }
        var stores: [any ScaleBenchStore] = []
        var folders: [URL] = []
        defer { for folder in folders { scratch.remove(folder) } }
        for (k, size) in sizes.enumerated() {
            let count = size.dataset.employees.count
            let folder = try scratch.makeFolder("scale-\(system.column)-\(system.configuration ?? "default")-\(count)")
            folders.append(folder)
            guard let store = try system.create(folder) as? any ScaleBenchStore else {
                throw BenchError.misconfigured("\(system.column.title) does not run the scale workloads")
            }
            progress("\(name): insert \(count)")
            results[k].measurements[.insert] = .time(try Stopwatch.time { try store.insert(size.dataset) }.duration)
            stores.append(store)
        }
        for read in Self.reads {
            progress("\(name): \(read.label)")
            var times = sizes.map { _ in [Duration]() }
            var checksums = sizes.map { _ in Set<Int>() }
            for _ in 0..<options.repetitions {
                for k in sizes.indices {
                    let (checksum, duration) = try Stopwatch.time { try read.body(stores[k], sizes[k]) }
                    times[k].append(duration)
                    checksums[k].insert(checksum)
                }
            }
            for k in sizes.indices {
                guard checksums[k].count == 1, let checksum = checksums[k].first else {
                    throw BenchError.resultsDisagree(workload: "repetitions of \(name), \(read.label)",
                                                     detail: checksums[k].map(String.init).joined(separator: ", "))
                }
                results[k].measurements[read.workload] = .time(Stopwatch.median(times[k]))
                results[k].checksums[read.workload] = checksum
            }
        }
        for (k, size) in sizes.enumerated() {
            progress("\(name): memory per object at \(size.dataset.employees.count)")
            if let bytes = try stores[k].bytesPerLoadedEmployee(count: size.dataset.employees.count) {
                results[k].measurements[.memoryPerObject] = .bytesPerObject(bytes)
            }
        }
        for store in stores { try store.close() }
        return results
    }
}
