import Foundation
import GRDB

/// `DepartmentRecord` as a GRDB record, with its employees as a has-many association (GRDB finds the
/// foreign key in the schema).
extension DepartmentRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "department"
    static let employees = hasMany(EmployeeRecord.self)
}

/// `EmployeeRecord` as a GRDB record; its dates go through Codable as GRDB's default text.
extension EmployeeRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "employee"
}

/// GRDB as most apps use it, at the object level: Codable records, the query interface and an
/// association for the to-many side.
final class GRDBObjectRecordsStore: ObjectBenchStore {
    let writer: any DatabaseWriter

    init(writer: any DatabaseWriter) { self.writer = writer }

    static func system(_ kind: SQLiteSetup.ConnectionKind, cacheMiB: Int?) -> ObjectBenchSystem {
        ObjectBenchSystem(column: .grdbRecords, configuration: kind.rawValue, create: {
            GRDBObjectRecordsStore(writer: try SQLiteSetup.createObjects(kind, cacheMiB: cacheMiB, in: $0))
        })
    }

    private static let salary = GRDB.Column("salary")

    func insert(_ dataset: ObjectDataset) throws {
        try writer.write { db in
            for department in dataset.departments { try department.insert(db) }
            for employee in dataset.employees { try employee.insert(db) }
        }
    }

    func fetchAllEmployees() throws -> Int {
        try writer.read { db in
            try EmployeeRecord.fetchAll(db).reduce(0) { $0 &+ $1.salary }
        }
    }

    func fetchEmployees(earning salaries: ArraySlice<Int>) throws -> Int {
        try writer.read { db in
            var checksum = 0
            for salary in salaries {
                for employee in try EmployeeRecord.filter(Self.salary == salary).fetchAll(db) { checksum &+= employee.hiredSeconds }
            }
            return checksum
        }
    }

    func fetchTopEarners(_ queries: ArraySlice<SalaryRangeQuery>) throws -> Int {
        try writer.read { db in
            var checksum = 0
            for query in queries {
                let employees = try EmployeeRecord
                    .filter((query.lowest...query.highest).contains(Self.salary))
                    .order(Self.salary.desc)
                    .limit(SalaryRangeQuery.limit)
                    .fetchAll(db)
                for employee in employees { checksum &+= employee.salary }
            }
            return checksum
        }
    }

    func walkDepartments() throws -> Int {
        try writer.read { db in
            var checksum = 0
            for department in try DepartmentRecord.fetchAll(db) {
                for employee in try department.request(for: DepartmentRecord.employees).fetchAll(db) {
                    checksum &+= employee.hiredSeconds
                }
            }
            return checksum
        }
    }

    func raiseAllSalaries() throws {
        try writer.write { db in
            for var employee in try EmployeeRecord.fetchAll(db) {
                employee.salary += 1
                try employee.update(db)
            }
        }
    }

    func deleteAll() throws {
        try writer.write { db in
            for employee in try EmployeeRecord.fetchAll(db) { try employee.delete(db) }
            for department in try DepartmentRecord.fetchAll(db) { try department.delete(db) }
        }
    }

    /// Fetches every employee as a record and keeps the array while resident memory is read. One untimed
    /// fetch first, so that the reader connection's page cache is already full.
    func bytesPerLoadedEmployee(count: Int) throws -> Double? {
        _ = try fetchAllEmployees()
        let (employees, bytes) = try ResidentMemory.growth { try writer.read { db in try EmployeeRecord.fetchAll(db) } }
        guard employees.count == count else {
            throw BenchError.resultsDisagree(workload: "memory per object", detail: "GRDB loaded \(employees.count) of \(count) employees")
        }
        return Double(bytes) / Double(count)
    }

    func close() throws { try writer.close() }
}

/// GRDB has no batched fetch: the like-for-like peer of a batched fetch read in random order is the
/// whole fetch read in that order.
extension GRDBObjectRecordsStore: ScaleBenchStore {
    func walkDepartmentsSortedByName() throws -> Int {
        try writer.read { db in
            var checksum = 0
            for department in try DepartmentRecord.fetchAll(db) {
                let employees = try department.request(for: DepartmentRecord.employees).fetchAll(db).sorted { $0.name < $1.name }
                for (k, employee) in employees.enumerated() { checksum &+= (k + 1) &* employee.hiredSeconds }
            }
            return checksum
        }
    }

    func readBatchedFetch(at positions: [Int]) throws -> Int {
        try writer.read { db in
            let employees = try EmployeeRecord.order(GRDB.Column("id")).fetchAll(db)
            var checksum = 0
            for p in positions { checksum &+= (p + 1) &* employees[p].salary }
            return checksum
        }
    }

    func readFetchedResults(at positions: [Int]) throws -> Int {
        try writer.read { db in
            let employees = try EmployeeRecord.order(Self.salary).fetchAll(db)
            var checksum = 0
            for p in positions { checksum &+= (p + 1) &* employees[p].salary }
            return checksum
        }
    }

    /// The departments are few: an app would fetch them once and look each one up by id.
    func readDepartmentNames() throws -> Int {
        try writer.read { db in
            let departments = Dictionary(uniqueKeysWithValues: try DepartmentRecord.fetchAll(db).map { ($0.id, $0) })
            var checksum = 0
            for employee in try EmployeeRecord.fetchAll(db) { checksum &+= departments[employee.departmentId]?.name.utf8.count ?? 0 }
            return checksum
        }
    }
}
