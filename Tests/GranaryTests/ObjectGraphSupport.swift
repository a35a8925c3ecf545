import Foundation
@testable import Granary

final class Company: ManagedObject {
    @Managed var name: String
    @Managed var employees: Set<Employee>
}

class Person: ManagedObject {
    @Managed var name: String
    @Managed var email: String?
}

final class Employee: Person {
    @Managed var salary: Int
    @Managed var hired: Date?
    @Managed var manager: Employee?
    @Managed var reports: Set<Employee>
    @Managed var company: Company?
    @Managed var badges: [Badge]
}

final class Badge: ManagedObject {
    @Managed var title: String
    @Managed var holder: Employee?
}

final class Contractor: Person {
    @Managed var rate: Double
}

/// Companies, people (employees and contractors), badges: relationships of every kind and delete rule.
/// With `oneSided`, employees also have a mentor (a one-sided to-one to another employee) and watch
/// badges (a one-sided to-many), read and written by key.
func makeCompanyModel(oneSided: Bool = false) throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Company", as: Company.self) {
            Attribute("name", .string)
            Relationship("employees", toMany: "Employee", inverse: "company", deleteRule: .deny)
        }
        Entity("Person", as: Person.self, abstract: true) {
            Attribute("name", .string, validation: [.length(min: 1, max: 100)])
            Attribute("email", .string, optional: true, validation: [.regex(#"[^@]+@[^@]+"#)])
            Unique("email")
            Index("byName", "name")
        }
        Entity("Employee", as: Employee.self, parent: "Person") {
            Attribute("salary", .integer64, defaultValue: 0, validation: [.range(min: 0, max: 1_000_000)])
            Attribute("hired", .date, optional: true)
            Relationship("manager", to: "Employee", inverse: "reports", deleteRule: .nullify)
            Relationship("reports", toMany: "Employee", inverse: "manager", deleteRule: .nullify)
            Relationship("company", to: "Company", inverse: "employees", deleteRule: .nullify)
            Relationship("badges", toMany: "Badge", ordered: true, inverse: "holder", deleteRule: .cascade)
            if oneSided {
                Relationship("mentor", to: "Employee")
                Relationship("watching", toMany: "Badge", deleteRule: .noAction)
            }
            Index("bySalary", "salary")
        }
        Entity("Contractor", as: Contractor.self, parent: "Person") {
            Attribute("rate", .double, defaultValue: 0)
        }
        Entity("Badge", as: Badge.self) {
            Attribute("title", .string)
            Relationship("holder", to: "Employee", inverse: "badges", deleteRule: .nullify)
        }
    }
}

func scratchURL(_ label: String = #function) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("granary-objects")
        .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8)).granary")
}

/// A coordinator with one store and a private-queue context on it.
func makeStack(_ type: PersistentStore.StoreType = .inMemory, at url: URL? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
    try coordinator.addPersistentStore(type: type, at: url ?? (type == .durable ? scratchURL() : nil))
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}
