import Foundation
import GRDB

/// GRDB's fastest idiom at the object level: hand-written SQL, cached statements, unchecked arguments,
/// values read from the cursor by column index into the same `EmployeeRecord` structs, dates as REAL
/// seconds. Updates and deletes read only the columns they need (`id, salary`; `id`) and write row by
/// row by key, as the records peer and an object store do; updates write the changed column only.
final class GRDBObjectsFastStore: ObjectBenchStore {
    let writer: any DatabaseWriter

    init(writer: any DatabaseWriter) { self.writer = writer }

    static func system(_ kind: SQLiteSetup.ConnectionKind, cacheMiB: Int?) -> ObjectBenchSystem {
        ObjectBenchSystem(column: .grdbFast, configuration: kind.rawValue, create: {
            GRDBObjectsFastStore(writer: try SQLiteSetup.createObjects(kind, cacheMiB: cacheMiB, in: $0))
        })
    }

    static let columns = "id, name, salary, hired, email, departmentId"

    func insert(_ dataset: ObjectDataset) throws {
        try writer.write { db in
            let department = try db.cachedStatement(sql: "INSERT INTO department (id, name) VALUES (?, ?)")
            for record in dataset.departments {
                department.setUncheckedArguments([record.id, record.name])
                try department.execute()
            }
            let employee = try db.cachedStatement(sql: "INSERT INTO employee (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
            for record in dataset.employees {
                employee.setUncheckedArguments([record.id, record.name, record.salary, record.hired.timeIntervalSince1970,
                                                record.email, record.departmentId])
                try employee.execute()
            }
        }
    }

    func fetchAllEmployees() throws -> Int {
        try writer.read { db in
            var checksum = 0
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(Self.columns) FROM employee"))
            while let row = try rows.next() { checksum &+= Self.employee(row).salary }
            return checksum
        }
    }

    func fetchEmployees(earning salaries: ArraySlice<Int>) throws -> Int {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.columns) FROM employee WHERE salary = ?")
            var checksum = 0
            for salary in salaries {
                statement.setUncheckedArguments([salary])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { checksum &+= Self.employee(row).hiredSeconds }
            }
            return checksum
        }
    }

    func fetchTopEarners(_ queries: ArraySlice<SalaryRangeQuery>) throws -> Int {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: SQLiteSetup.topEarnersSQL)
            var checksum = 0
            for query in queries {
                statement.setUncheckedArguments([query.lowest, query.highest])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { checksum &+= Self.employee(row).salary }
            }
            return checksum
        }
    }

    func walkDepartments() throws -> Int {
        try writer.read { db in
            var departments: [DepartmentRecord] = []
            let departmentRows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, name FROM department"))
            while let row = try departmentRows.next() { departments.append(DepartmentRecord(id: row[0], name: row[1])) }
            let statement = try db.cachedStatement(sql: "SELECT \(Self.columns) FROM employee WHERE departmentId = ?")
            var checksum = 0
            for department in departments {
                statement.setUncheckedArguments([department.id])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { checksum &+= Self.employee(row).hiredSeconds }
            }
            return checksum
        }
    }

    func raiseAllSalaries() throws {
        try writer.write { db in
            var salaries: [(id: Int64, salary: Int)] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, salary FROM employee"))
            while let row = try rows.next() { salaries.append((row[0], row[1])) }
            let update = try db.cachedStatement(sql: "UPDATE employee SET salary = ? WHERE id = ?")
            for (id, salary) in salaries {
                update.setUncheckedArguments([salary + 1, id])
                try update.execute()
            }
        }
    }

    func deleteAll() throws {
        try writer.write { db in
            for table in ["employee", "department"] {
                let keys = try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM \(table)"))
                let delete = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE id = ?")
                for key in keys {
                    delete.setUncheckedArguments([key])
                    try delete.execute()
                }
            }
        }
    }

    /// Not measured: the records would be the same structs as the records peer's.
    func bytesPerLoadedEmployee(count: Int) throws -> Double? { nil }

    func close() throws { try writer.close() }

    private static func employee(_ row: Row) -> EmployeeRecord {
        EmployeeRecord(id: row[0], name: row[1], salary: row[2], hired: Date(timeIntervalSince1970: row[3]), email: row[4],
                       departmentId: row[5])
    }
}
