import Foundation
import Testing

@testable import Granary

/// A loaded object that only its context's registry holds is forgotten, as a weakly held registry
/// would lose it, unless a relationship resolves to it while its row is unchanged: then it is handed
/// back as it is. Forgetting it anyway made every read of an employee's department load the department
/// again, with all its employees (issue 16: quadratic over a walk of a large fetch).
@Suite struct UnheldObjectTests {
    static let employeeCount = 1_000

    /// A saved company with `employeeCount` employees.
    static func makeCompany() throws -> PersistentStoreCoordinator {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Big"
            for i in 0..<employeeCount {
                let e = Employee(context: context)
                e.name = "E\(i)"
                e.company = company
            }
            try context.save()
        }
        return coordinator
    }

    @Test func readingEachEmployeesCompanyLoadsTheCompanyOnce() throws {
        let coordinator = try Self.makeCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let employees = try context.fetch(FetchRequest<Employee>())
            let before = context.faultStatistics
            // Nothing holds the company between reads.
            for e in employees { #expect(e.company?.name == "Big") }
            #expect(context.faultStatistics.loads - before.loads == 1)
        }
    }

    @Test func aCompanyChangedInTheStoreIsLoadedAfresh() throws {
        let coordinator = try Self.makeCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let employees = try context.performAndWait {
            let employees = try context.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]))
            #expect(employees[0].company?.name == "Big")
            return employees
        }
        try other.performAndWait {
            let company = try #require(try other.fetch(FetchRequest<Company>()).first)
            company.name = "Renamed"
            try other.save()
        }
        try context.performAndWait {
            let before = context.faultStatistics
            #expect(employees[1].company?.name == "Renamed")
            #expect(context.faultStatistics.loads - before.loads == 1)
            // An object someone holds keeps its values until refreshed, as ever.
            let held = try #require(employees[2].company)
            #expect(held.name == "Renamed")
            try other.performAndWait {
                let company = try #require(try other.fetch(FetchRequest<Company>()).first)
                company.name = "Again"
                try other.save()
            }
            #expect(held.name == "Renamed")
            #expect(employees[3].company === held)
        }
    }

    @Test func aCompanyDeletedFromTheStoreIsForgotten() throws {
        let coordinator = try Self.makeCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let companyID = try context.performAndWait {
            let company = try #require(try context.fetch(FetchRequest<Company>()).first)
            #expect(company.name == "Big")
            return company.objectID
        }
        try other.performAndWait {
            // The company's delete rule denies while it has employees: take them first.
            for e in try other.fetch(FetchRequest<Employee>()) { other.delete(e) }
            other.delete(other.object(with: companyID))
            try other.save()
        }
        context.performAndWait {
            #expect(context.registeredOrFault(companyID)?.isFault == true)
        }
    }
}
