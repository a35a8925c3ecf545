import Foundation
import Testing
@testable import Granary

/// Classes and models shared by the model tests. The classes stand in for managed object subclasses,
/// which the model accepts as any class.
enum ModelFixtures {
    final class Person {}
    final class Employee {}
    final class Project {}

    /// A transformable value for conversion tests.
    struct Point: Codable, Sendable, Hashable {
        var x: Double
        var y: Double
        var label: String
    }

    /// The company model from the model layer's brief.
    static func company() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Person", as: Person.self, abstract: true) {
                Attribute("name", .string, defaultValue: "")
                Attribute("born", .date, optional: true)
            }
            Entity("Employee", as: Employee.self, parent: "Person") {
                Attribute("salary", .decimal, optional: true, validation: [.range(min: 0, max: 1_000_000)])
                Attribute("email", .string, optional: true, validation: [.regex(#"^[^@]+@[^@]+$"#)])
                Relationship("manager", to: "Employee", inverse: "reports", deleteRule: .nullify)
                Relationship("reports", toMany: "Employee", inverse: "manager", deleteRule: .nullify)
                Relationship("projects", toMany: "Project", ordered: true, inverse: "members", minCount: 0, maxCount: 10)
                Unique("email")
                Index("bySalary", "salary")
                Index("byNameAndBorn", .ascending("name"), .descending("born"))
            }
            Entity("Project") { Attribute("title", .string) ; Relationship("members", toMany: "Employee", inverse: "projects") }
            Configuration("Cloud", entities: "Person", "Employee")
        }
    }

    /// The error a model build throws, or nil when it succeeds.
    static func error(_ build: () throws -> ManagedObjectModel) -> ModelError? {
        do {
            _ = try build()
            return nil
        } catch let error as ModelError {
            return error
        } catch {
            Issue.record("expected a ModelError, got \(error)")
            return nil
        }
    }

    /// A model of one entity with the given attribute, for checks that concern a single attribute.
    static func model(with attribute: Attribute, entity: String = "Thing") throws(ModelError) -> ManagedObjectModel {
        try ManagedObjectModel { Entity(entity) { attribute } }
    }

    /// The attribute as a model resolves it (named after its entity, default in canonical form).
    static func resolved(_ attribute: Attribute, entity: String = "Thing") throws -> AttributeDescription {
        let model = try model(with: attribute, entity: entity)
        return try #require(model.entitiesByName[entity]?.attributesByName[attribute.attribute.name])
    }
}
