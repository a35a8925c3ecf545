import Foundation

/// The rows of the scale table: object-level workloads run at two sizes, to show whether their cost
/// grows in proportion to the objects they touch. Issue 16 found one that did not (O5 took 144 ms at
/// 100,000 employees and did not finish in 20 minutes at 1,000,000), which a table at one size cannot show.
enum ScaleWorkload: Int, CaseIterable, Sendable {
    case insert, fetchAll, toMany, toManySorted, memoryPerObject, batchedRandom, fetchedResultsRandom, toOne

    /// Objects per batch in the batched fetch and the fetched-results controller (`fetchBatchSize`).
    static let batchSize = 50

    func title(departments: Int) -> String {
        let departments = Format.grouped(Double(departments))
        switch self {
        case .insert: return "O1. insert employees + \(departments) departments, one save (timed once)"
        case .fetchAll: return "O2. fetch all employees, read salary"
        case .toMany: return "O5. \(departments) departments → employees (to-many), read hired"
        case .toManySorted: return "O5s. same, each department's employees sorted by name first"
        case .memoryPerObject: return "O8. memory per loaded employee (RSS growth)"
        case .batchedRandom: return "O9. batched fetch (batch size \(Self.batchSize)), every employee once in random order, read salary"
        case .fetchedResultsRandom: return "O10. fetched-results controller by salary (batch size \(Self.batchSize)), every row once in random order"
        case .toOne: return "O11. fetch all employees, read each one's department's name (to-one)"
        }
    }
}

/// A store of the object-level table that also runs the scale table's own workloads. Every call starts
/// from nothing cached, as the object-level workloads do; each returns a checksum that depends on the
/// order it visited what it read, so that systems disagreeing on an order are caught.
protocol ScaleBenchStore: ObjectBenchStore {
    /// Loads every department, then each one's employees through the relationship, sorted by name in
    /// Swift, reading each employee's hiring date.
    func walkDepartmentsSortedByName() throws -> Int
    /// Fetches every employee in key order (Granary: with a batch size, so that objects load as they
    /// are touched) and reads the salary of the one at each of `positions`.
    func readBatchedFetch(at positions: [Int]) throws -> Int
    /// Fetches every employee ordered by salary (Granary: through a fetched-results controller with a
    /// batch size) and reads the salary of the one at each of `positions`.
    func readFetchedResults(at positions: [Int]) throws -> Int
    /// Loads every employee and reads the name of its department; returns the sum of the names' lengths.
    func readDepartmentNames() throws -> Int
}
