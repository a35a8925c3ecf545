import Foundation

/// Runs the object-level workloads against one system, in the same order, on the same data, in fresh
/// folders of the scratch directory.
struct ObjectSuiteRunner {
    let options: BenchOptions
    let dataset: ObjectDataset
    let scratch: ScratchDirectory
    /// Where progress goes (standard error), so that standard output holds only the table.
    let progress: (String) -> Void

    /// Runs every object workload against `system` and returns what they measured.
    /// - Throws: whatever the system throws; a failing system stops the run rather than leave a hole.
    func run(_ system: ObjectBenchSystem) throws -> SuiteResult<ObjectWorkload> {
        let name = system.column.title + (system.configuration.map { " [\($0)]" } ?? "")
        let tag = "objects-\(system.column)-\(system.configuration ?? "default")"
        var result = SuiteResult<ObjectWorkload>(column: system.column, configuration: system.configuration)

        // O1. Insert, each repetition into a new store; the last store serves the other workloads.
        progress("\(name): insert objects")
        var insertTimes: [Duration] = []
        var store: (any ObjectBenchStore)?
        var folder: URL?
        for repetition in 0..<options.repetitions {
            if let store, let folder { try store.close(); scratch.remove(folder) }
            let newFolder = try scratch.makeFolder("\(tag)-\(repetition)")
            let newStore = try system.create(newFolder)
            insertTimes.append(try Stopwatch.time { try newStore.insert(dataset) }.duration)
            (store, folder) = (newStore, newFolder)
        }
        guard let store, let folder else { preconditionFailure("repetitions must be at least 1") }
        result.measurements[.insert] = .time(Stopwatch.median(insertTimes))

        // O2. Fetch everything, each repetition from a cold context.
        progress("\(name): fetch all")
        (result.measurements[.fetchAll], result.checksums[.fetchAll]) = try timeRepeated { try store.fetchAllEmployees() }

        // O3–O4. Indexed fetches, timed in batches after one untimed warm-up batch.
        progress("\(name): salary == ?")
        (result.measurements[.equalityFetch], result.checksums[.equalityFetch]) =
            try SuiteRunner.timeBatches(dataset.equalityQueries[...], unit: "fetches/s") { try store.fetchEmployees(earning: $0) }
        progress("\(name): salary range, sort, limit")
        (result.measurements[.rangeFetch], result.checksums[.rangeFetch]) =
            try SuiteRunner.timeBatches(dataset.rangeQueries[...], unit: "fetches/s") { try store.fetchTopEarners($0) }

        // O5. Every department's employees through the relationship.
        progress("\(name): to-many relationships")
        (result.measurements[.toManyFaults], result.checksums[.toManyFaults]) = try timeRepeated { try store.walkDepartments() }

        // O8. Memory, before the writes below change what is stored.
        progress("\(name): memory per object")
        if let bytes = try store.bytesPerLoadedEmployee(count: dataset.employees.count) {
            result.measurements[.memoryPerObject] = .bytesPerObject(bytes)
        }

        // O6. Update every employee; each pass raises every salary by one more.
        progress("\(name): update all")
        var updateTimes: [Duration] = []
        for _ in 0..<options.repetitions {
            updateTimes.append(try Stopwatch.time { try store.raiseAllSalaries() }.duration)
        }
        result.measurements[.updateAll] = .time(Stopwatch.median(updateTimes))
        result.checksums[.updateAll] = try store.fetchAllEmployees()

        // O7. Delete everything. Destructive, so timed once; afterwards nothing may be left.
        progress("\(name): delete all")
        result.measurements[.deleteAll] = .time(try Stopwatch.time { try store.deleteAll() }.duration)
        result.checksums[.deleteAll] = try store.fetchAllEmployees() &+ store.walkDepartments()
        try store.close()
        scratch.remove(folder)
        return result
    }

    private func timeRepeated(_ body: () throws -> Int) throws -> (Measurement, Int) {
        try Self.timeRepeated(options.repetitions, body)
    }

    /// Runs `body` `repetitions` times and returns the median time and the last checksum (the
    /// repetitions read the same data, so a checksum that changes between them is an error).
    static func timeRepeated(_ repetitions: Int, _ body: () throws -> Int) throws -> (Measurement, Int) {
        var times: [Duration] = []
        var checksums = Set<Int>()
        for _ in 0..<repetitions {
            let (checksum, duration) = try Stopwatch.time(body)
            times.append(duration)
            checksums.insert(checksum)
        }
        guard checksums.count == 1, let checksum = checksums.first else {
            throw BenchError.resultsDisagree(workload: "repetitions of one system", detail: checksums.map(String.init).joined(separator: ", "))
        }
        return (.time(Stopwatch.median(times)), checksum)
    }
}
