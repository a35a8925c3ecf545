import Foundation

/// The rows of the object-level table, in order: managed objects in a context against GRDB records.
enum ObjectWorkload: Int, CaseIterable, Sendable {
    case insert = 1, fetchAll, equalityFetch, rangeFetch, toManyFaults, updateAll, deleteAll, memoryPerObject

    func title(_ options: BenchOptions, departments: Int) -> String {
        let employees = Format.grouped(Double(options.objects))
        let departments = Format.grouped(Double(departments))
        switch self {
        case .insert: return "O1. insert \(employees) employees + \(departments) departments, one save"
        case .fetchAll: return "O2. fetch all \(employees) employees, read salary"
        case .equalityFetch: return "O3. salary == ? (~100 objects)"
        case .rangeFetch: return "O4. salary BETWEEN, ORDER BY salary DESC LIMIT 20"
        case .toManyFaults: return "O5. \(departments) departments → employees (to-many), read hired"
        case .updateAll: return "O6. fetch, raise salary of \(employees) employees, one save"
        case .deleteAll: return "O7. fetch, delete \(employees) employees + \(departments) departments, one save"
        case .memoryPerObject: return "O8. memory per loaded employee (RSS growth)"
        }
    }
}

/// One open store of a system in the object-level table.
///
/// Every workload is a method that does the work and nothing else; the harness times each call from
/// outside. Each call that reads starts from nothing cached (a new context for Granary; GRDB records are
/// values, so nothing survives a call anyway), except that the fetches of O3 and O4 share one context per
/// batch, as an app's screen would. Reads return a checksum of what they touched, which the harness
/// compares across systems.
protocol ObjectBenchStore: AnyObject {
    /// Inserts every department and employee of `dataset` (each employee linked to its department) and
    /// saves once.
    func insert(_ dataset: ObjectDataset) throws
    /// Loads every employee and reads its salary; returns the sum of salaries.
    func fetchAllEmployees() throws -> Int
    /// Fetches the employees earning each salary; returns the sum of their hiring dates in seconds.
    func fetchEmployees(earning salaries: ArraySlice<Int>) throws -> Int
    /// Runs each range query with its order and limit; returns the sum of the salaries returned (the
    /// employees that tie at the limit may differ between systems, their salaries do not).
    func fetchTopEarners(_ queries: ArraySlice<SalaryRangeQuery>) throws -> Int
    /// Loads every department, then each one's employees through the relationship, reading each
    /// employee's hiring date; returns the sum of those dates in seconds.
    func walkDepartments() throws -> Int
    /// Loads every employee, raises each salary by 1 and saves once.
    func raiseAllSalaries() throws
    /// Loads every employee and department, deletes them all and saves once.
    func deleteAll() throws
    /// Resident memory per employee held loaded (see `ResidentMemory`), or `nil` when not measured.
    func bytesPerLoadedEmployee(count: Int) throws -> Double?
    func close() throws
}

/// How to make the stores of one system, in one configuration, for the object-level table.
struct ObjectBenchSystem: Sendable {
    var column: SystemColumn
    /// The configuration's name as shown in the table ("queue", "pool"), or `nil` when there is only one.
    var configuration: String?
    /// Creates a new store with the department and employee tables in an empty folder.
    var create: @Sendable (URL) throws -> any ObjectBenchStore
}
