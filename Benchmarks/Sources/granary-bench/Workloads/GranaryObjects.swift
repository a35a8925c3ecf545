import Foundation
import Granary

/// A department of the object-level model: a name and its employees (the inverse of `Employee.department`).
final class Department: ManagedObject {
    @Managed var name: String
    @Managed var employees: Set<Employee>
}

/// An employee of the object-level model.
final class Employee: ManagedObject {
    @Managed var name: String
    @Managed var salary: Int
    @Managed var hired: Date
    @Managed var email: String
    @Managed var department: Department?
}

/// The Granary column of the object-level table: managed objects in a private-queue context, on a
/// coordinator with one durable store opened with durability `.full` (every save is on disk before
/// `save()` returns).
final class GranaryObjectStore: ObjectBenchStore {
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore

    /// `Department` 1—* `Employee`, nullify both ways, `salary` indexed.
    /// - Throws: `ModelError` if the declaration is invalid.
    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Department", as: Department.self) {
                Attribute("name", .string)
                Relationship("employees", toMany: "Employee", inverse: "department", deleteRule: .nullify)
            }
            Entity("Employee", as: Employee.self) {
                Attribute("name", .string)
                Attribute("salary", .integer64, indexed: true)
                Attribute("hired", .date)
                Attribute("email", .string)
                Relationship("department", to: "Department", inverse: "employees", deleteRule: .nullify)
            }
        }
    }

    static func system() throws -> ObjectBenchSystem {
        let model = try makeModel()
        return ObjectBenchSystem(column: .granary, configuration: nil, create: { try GranaryObjectStore(folder: $0, model: model) })
    }

    /// Opens a new durable store in `folder` and checks that the indexed fetches plan as index scans.
    /// - Throws: `ContextError` from the store, `BenchError.misconfigured` for a plan that does not use
    ///   the salary index as the workloads expect.
    init(folder: URL, model: ManagedObjectModel) throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(type: .durable, at: folder.appendingPathComponent("objects.granary"),
                                                   options: .init(durability: .full))
        let context = makeContext()
        let (equality, range) = try context.performAndWait {
            (try context.explain(Self.employees(earning: 30_000)), try context.explain(Self.topEarners(SalaryRangeQuery(lowest: 0, highest: 1))))
        }
        guard case .index = equality.access, equality.residual == nil,
              case .index = range.access, range.residual == nil, range.sortedByAccess, range.limitPushedDown
        else {
            throw BenchError.misconfigured("Granary plans O3 as \(equality) and O4 as \(range); expected index scans with the order and limit in the scan")
        }
    }

    private func makeContext() -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    static func employees(earning salary: Int) -> FetchRequest<Employee> {
        FetchRequest(predicate: #Predicate<Employee> { $0.salary == salary })
    }

    static func topEarners(_ query: SalaryRangeQuery) -> FetchRequest<Employee> {
        let (lowest, highest) = (query.lowest, query.highest)
        return FetchRequest(predicate: #Predicate<Employee> { $0.salary >= lowest && $0.salary <= highest },
                            sortBy: [SortDescriptor(\.salary, order: .reverse)], fetchLimit: SalaryRangeQuery.limit)
    }

    func insert(_ dataset: ObjectDataset) throws {
        let context = makeContext()
        try context.performAndWait {
            let departments = dataset.departments.map { record in
                let department = Department(context: context)
                department.name = record.name
                return department
            }
            for record in dataset.employees {
                let employee = Employee(context: context)
                employee.name = record.name
                employee.salary = record.salary
                employee.hired = record.hired
                employee.email = record.email
                employee.department = departments[Int(record.departmentId) - 1]
            }
            try context.save()
        }
    }

    func fetchAllEmployees() throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for employee in try context.fetch(FetchRequest<Employee>()) { checksum &+= employee.salary }
            return checksum
        }
    }

    func fetchEmployees(earning salaries: ArraySlice<Int>) throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for salary in salaries {
                for employee in try context.fetch(Self.employees(earning: salary)) {
                    checksum &+= Int(employee.hired.timeIntervalSince1970)
                }
            }
            return checksum
        }
    }

    func fetchTopEarners(_ queries: ArraySlice<SalaryRangeQuery>) throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for query in queries {
                for employee in try context.fetch(Self.topEarners(query)) { checksum &+= employee.salary }
            }
            return checksum
        }
    }

    func walkDepartments() throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for department in try context.fetch(FetchRequest<Department>()) {
                for employee in department.employees { checksum &+= Int(employee.hired.timeIntervalSince1970) }
            }
            return checksum
        }
    }

    func raiseAllSalaries() throws {
        let context = makeContext()
        try context.performAndWait {
            for employee in try context.fetch(FetchRequest<Employee>()) { employee.salary += 1 }
            try context.save()
        }
    }

    func deleteAll() throws {
        let context = makeContext()
        try context.performAndWait {
            for employee in try context.fetch(FetchRequest<Employee>()) { context.delete(employee) }
            for department in try context.fetch(FetchRequest<Department>()) { context.delete(department) }
            try context.save()
        }
    }

    /// Fetches every employee into a new context and keeps the objects (loaded: a fetch without a batch
    /// size fills them) while resident memory is read; what grew is the objects, their values and the
    /// context's registry. One untimed fetch first, so that lazily built caches do not count.
    func bytesPerLoadedEmployee(count: Int) throws -> Double? {
        _ = try fetchAllEmployees()
        let context = makeContext()
        return try context.performAndWait {
            let (employees, bytes) = try ResidentMemory.growth {
                let employees = try context.fetch(FetchRequest<Employee>())
                var checksum = 0
                for employee in employees { checksum &+= employee.salary }
                return (employees, checksum)
            }
            guard employees.0.count == count else {
                throw BenchError.resultsDisagree(workload: "memory per object", detail: "Granary loaded \(employees.0.count) of \(count) employees")
            }
            return Double(bytes) / Double(count)
        }
    }

    func close() throws { try coordinator.remove(store) }
}

extension GranaryObjectStore: ScaleBenchStore {
    func walkDepartmentsSortedByName() throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for department in try context.fetch(FetchRequest<Department>()) {
                for (k, employee) in department.employees.sorted(by: { $0.name < $1.name }).enumerated() {
                    checksum &+= (k + 1) &* Int(employee.hired.timeIntervalSince1970)
                }
            }
            return checksum
        }
    }

    func readBatchedFetch(at positions: [Int]) throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var request = FetchRequest<Employee>()
            request.fetchBatchSize = ScaleWorkload.batchSize
            let employees = try context.fetch(request)
            var checksum = 0
            for p in positions { checksum &+= (p + 1) &* employees[p].salary }
            return checksum
        }
    }

    func readFetchedResults(at positions: [Int]) throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.fetchBatchSize = ScaleWorkload.batchSize
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            try controller.performFetch()
            var checksum = 0
            for p in positions { checksum &+= (p + 1) &* controller.object(at: IndexPath(item: p, section: 0)).salary }
            return checksum
        }
    }

    func readDepartmentNames() throws -> Int {
        let context = makeContext()
        return try context.performAndWait {
            var checksum = 0
            for employee in try context.fetch(FetchRequest<Employee>()) { checksum &+= employee.department?.name.utf8.count ?? 0 }
            return checksum
        }
    }
}
