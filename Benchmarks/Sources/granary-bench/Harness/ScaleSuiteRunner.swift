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

    /// Runs every scale workload against `system` on `size`'s data and returns what they measured.
    /// - Throws: whatever the system throws; `BenchError.misconfigured` for a system that does not run
    ///   the scale workloads.
    func run(_ system: ObjectBenchSystem, _ size: Size) throws -> SuiteResult<ScaleWorkload> {
        let count = size.dataset.employees.count
        let name = system.column.title + (system.configuration.map { " [\($0)]" } ?? "") + " at \(Format.grouped(Double(count)))"
        var result = SuiteResult<ScaleWorkload>(column: system.column, configuration: system.configuration)
        let folder = try scratch.makeFolder("scale-\(system.column)-\(system.configuration ?? "default")-\(count)")
        defer { scratch.remove(folder) }
        guard let store = try system.create(folder) as? any ScaleBenchStore else {
            throw BenchError.misconfigured("\(system.column.title) does not run the scale workloads")
        }
        progress("\(name): insert")
        result.measurements[.insert] = .time(try Stopwatch.time { try store.insert(size.dataset) }.duration)

        progress("\(name): fetch all")
        (result.measurements[.fetchAll], result.checksums[.fetchAll]) = try timeRepeated { try store.fetchAllEmployees() }
        progress("\(name): to-many relationships")
        (result.measurements[.toMany], result.checksums[.toMany]) = try timeRepeated { try store.walkDepartments() }
        progress("\(name): to-many relationships, sorted")
        (result.measurements[.toManySorted], result.checksums[.toManySorted]) = try timeRepeated { try store.walkDepartmentsSortedByName() }
        progress("\(name): batched fetch in random order")
        (result.measurements[.batchedRandom], result.checksums[.batchedRandom]) = try timeRepeated { try store.readBatchedFetch(at: size.positions) }
        progress("\(name): fetched results in random order")
        (result.measurements[.fetchedResultsRandom], result.checksums[.fetchedResultsRandom]) =
            try timeRepeated { try store.readFetchedResults(at: size.positions) }
        progress("\(name): memory per object")
        if let bytes = try store.bytesPerLoadedEmployee(count: count) {
            result.measurements[.memoryPerObject] = .bytesPerObject(bytes)
        }
        try store.close()
        return result
    }

    private func timeRepeated(_ body: () throws -> Int) throws -> (Measurement, Int) {
        try ObjectSuiteRunner.timeRepeated(options.repetitions, body)
    }
}
