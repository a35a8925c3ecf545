import Foundation

/// A department as every system of the object-level table sees it.
///
/// Codable so that the GRDB records peer persists it with no hand-written mapping.
struct DepartmentRecord: Codable, Sendable, Equatable {
    var id: Int64
    var name: String
}

/// An employee as every system of the object-level table sees it; `departmentId` is the to-one
/// relationship as a foreign key.
struct EmployeeRecord: Codable, Sendable, Equatable {
    var id: Int64
    var name: String
    var salary: Int
    var hired: Date
    var email: String
    var departmentId: Int64

    /// Whole seconds: what the read workloads sum, so that systems storing dates differently (REAL
    /// seconds, text with milliseconds, Granary's dates) agree.
    var hiredSeconds: Int { Int(hired.timeIntervalSince1970) }
}

/// A fetch of object workload O4: `salary BETWEEN ? AND ? ORDER BY salary DESC LIMIT 20`.
struct SalaryRangeQuery: Sendable {
    var lowest: Int
    var highest: Int
    static let limit = 20
}

/// The departments and employees of the object-level table, and the salaries its fetches ask for,
/// generated from a fixed seed so that every system (and every run) sees the same data.
struct ObjectDataset: Sendable {
    let departments: [DepartmentRecord]
    let employees: [EmployeeRecord]
    /// The distinct salaries: about 100 employees share each, whatever the employee count.
    let salaryLevels: [Int]
    let equalityQueries: [Int]
    let rangeQueries: [SalaryRangeQuery]
    /// The salary levels each range query covers: 5% of them.
    let rangeWidth: Int

    init(employees count: Int, queries: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        departments = (1...Int64(min(100, count))).map { DepartmentRecord(id: $0, name: "Department \($0)") }
        let levels = (0..<max(1, count / 100)).map { 30_000 + 100 * $0 }
        salaryLevels = levels
        let start = Date(timeIntervalSince1970: 1_420_070_400)  // 2015-01-01T00:00:00Z
        employees = (1...Int64(count)).map { [departments] id in
            EmployeeRecord(
                id: id, name: "Employee \(id)", salary: levels[Int(random.next(below: UInt64(levels.count)))],
                hired: start.addingTimeInterval(Double(random.next(below: 10 * 365 * 86_400))),
                email: "employee\(id)@example.com",
                departmentId: Int64(random.next(below: UInt64(departments.count))) + 1)
        }
        equalityQueries = (0..<queries).map { _ in levels[Int(random.next(below: UInt64(levels.count)))] }
        // A band of 5% of the salary levels (about 5,000 employees of 100,000): far more than the limit,
        // so the order and the limit both matter.
        let width = max(1, levels.count / 20)
        rangeWidth = width
        rangeQueries = (0..<queries).map { _ in
            let low = Int(random.next(below: UInt64(levels.count - width + 1)))
            return SalaryRangeQuery(lowest: levels[low], highest: levels[low + width - 1])
        }
    }
}
