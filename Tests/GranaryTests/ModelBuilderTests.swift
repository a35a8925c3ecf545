import Foundation
import Testing
@testable import Granary

@Suite struct ModelBuilderTests {
    typealias Person = ModelFixtures.Person
    typealias Employee = ModelFixtures.Employee

    @Test func declarativeModelHasItsEntitiesInDeclaredOrder() throws {
        let model = try ModelFixtures.company()
        #expect(model.entities.map(\.name) == ["Person", "Employee", "Project"])
        #expect(Set(model.entitiesByName.keys) == ["Person", "Employee", "Project"])
        #expect(model.versionIdentifier == "1")
        let person = try #require(model.entity(named: "Person"))
        #expect(person.isAbstract)
        #expect(!model.entitiesByName["Employee"]!.isAbstract)
    }

    @Test func entitiesRememberTheirClass() throws {
        let model = try ModelFixtures.company()
        let employee = try #require(model.entitiesByName["Employee"])
        #expect(employee.classIdentifier == ObjectIdentifier(Employee.self))
        #expect(employee.className == String(reflecting: Employee.self))
        #expect(employee.className?.hasSuffix("ModelFixtures.Employee") == true)
        #expect(employee.objectType == Employee.self)
        #expect(model.entitiesByName["Project"]?.classIdentifier == nil)
        #expect(model.entitiesByName["Project"]?.className == nil)
        #expect(model.entity(for: Employee.self) == employee)
        #expect(model.entity(for: ModelFixtures.Project.self) == nil)
    }

    @Test func attributesKeepWhatTheDeclarationSays() throws {
        let employee = try #require(ModelFixtures.company().entitiesByName["Employee"])
        let salary = try #require(employee.attributesByName["salary"])
        #expect(salary.type == .decimal)
        #expect(salary.isOptional)
        #expect(!salary.isTransient && !salary.isIndexed)
        #expect(salary.validationRules.map(\.description) == ["range(0...1000000)"])
        #expect(salary.entityName == "Employee")
        let name = try #require(employee.attributesByName["name"])
        #expect(!name.isOptional)
        #expect(name.defaultValue as? String == "")
        #expect(name.entityName == "Person")
    }

    @Test func relationshipsKeepWhatTheDeclarationSays() throws {
        let employee = try #require(ModelFixtures.company().entitiesByName["Employee"])
        let manager = try #require(employee.relationshipsByName["manager"])
        #expect(!manager.isToMany && manager.isOptional)
        #expect(manager.destinationEntityName == "Employee" && manager.inverseName == "reports")
        #expect(manager.minCount == 0 && manager.maxCount == 1)
        let projects = try #require(employee.relationshipsByName["projects"])
        #expect(projects.isToMany && projects.isOrdered)
        #expect(projects.minCount == 0 && projects.maxCount == 10)
        #expect(projects.deleteRule == .nullify)
        let reports = try #require(employee.relationshipsByName["reports"])
        #expect(reports.isToMany && !reports.isOrdered && reports.maxCount == nil)
        let cascading = Relationship("items", toMany: "Item", inverse: "order", deleteRule: .cascade)
        #expect(cascading.relationship.deleteRule == .cascade)
    }

    @Test func uniquenessConstraintsAndIndexesAreKept() throws {
        let employee = try #require(ModelFixtures.company().entitiesByName["Employee"])
        #expect(employee.uniquenessConstraints == [["email"]])
        #expect(employee.indexes == [
            FetchIndexDescription(name: "bySalary", elements: [.ascending("salary")]),
            FetchIndexDescription(name: "byNameAndBorn", elements: [.ascending("name"), .descending("born")]),
        ])
        let tupleForm = FetchIndexDescription(name: "byNameAndBorn", elements: [(property: "name", ascending: true), (property: "born", ascending: false)])
        #expect(tupleForm == employee.indexes[1])
    }

    @Test func inheritedPropertiesComeFirstInDeclaredOrder() throws {
        let model = try ModelFixtures.company()
        let employee = try #require(model.entitiesByName["Employee"])
        #expect(employee.properties.map(\.name) == ["name", "born", "salary", "email", "manager", "reports", "projects"])
        #expect(employee.declaredProperties.map(\.name) == ["salary", "email", "manager", "reports", "projects"])
        #expect(employee.attributes.map(\.name) == ["name", "born", "salary", "email"])
        #expect(employee.relationships.map(\.name) == ["manager", "reports", "projects"])
        #expect(Set(employee.propertiesByName.keys) == Set(employee.properties.map(\.name)))
        #expect(employee.propertiesByName["born"]?.entityName == "Person")
        #expect(model.entitiesByName["Person"]?.properties.map(\.name) == ["name", "born"])
    }

    @Test func hierarchyIsResolvedBothWays() throws {
        let model = try ManagedObjectModel {
            Entity("Manager", parent: "Employee")
            Entity("Person", abstract: true) { Attribute("name", .string) }
            Entity("Employee", parent: "Person")
            Entity("Customer", parent: "Person")
            Entity("Other")
        }
        let e = model.entitiesByName
        let person = try #require(e["Person"])
        #expect(person.superentity == nil)
        #expect(person.subentities.map(\.name) == ["Customer", "Employee"])
        #expect(person.allSubentities.map(\.name) == ["Customer", "Employee", "Manager"])
        let manager = try #require(e["Manager"])
        #expect(manager.superentity?.name == "Employee")
        #expect(manager.superentity?.superentity == person)
        #expect(manager.rootEntity == person)
        #expect(person.rootEntity == person)
        #expect(manager.isKind(of: person) && manager.isKind(of: e["Employee"]!) && manager.isKind(of: manager))
        #expect(!person.isKind(of: manager))
        #expect(!manager.isKind(of: e["Customer"]!))
        #expect(!manager.isKind(of: e["Other"]!))
        #expect(manager.properties.map(\.name) == ["name"])
    }

    @Test func resultBuildersAcceptConditionsAndLoops() throws {
        let withAudit = true
        let model = try ManagedObjectModel {
            for name in ["A", "B"] {
                Entity(name) {
                    Attribute("id", .uuid)
                    if withAudit {
                        Attribute("createdAt", .date)
                    } else {
                        Attribute("unused", .date)
                    }
                    for i in 1...2 { Attribute("slot\(i)", .integer16, optional: true) }
                }
            }
            if withAudit { Configuration("Audit", entities: "A") }
        }
        #expect(model.entities.map(\.name) == ["A", "B"])
        #expect(model.entitiesByName["B"]?.properties.map(\.name) == ["id", "createdAt", "slot1", "slot2"])
        #expect(model.configurations == ["Audit": ["A"]])
    }

    @Test func defaultValuesAreStoredInTheTypesCanonicalForm() throws {
        let rate = try ModelFixtures.resolved(Attribute("rate", .double, defaultValue: 1))
        #expect(rate.defaultValue as? Double == 1.0)
        let small = try ModelFixtures.resolved(Attribute("small", .integer16, defaultValue: 3))
        #expect(small.defaultValue as? Int16 == 3)
        let price = try ModelFixtures.resolved(Attribute("price", .decimal, defaultValue: 0.1))
        #expect(price.defaultValue as? Decimal == Decimal(string: "0.1"))
        // The declaration itself keeps what was written.
        #expect(Attribute("rate", .double, defaultValue: 1).attribute.defaultValue as? Int == 1)
    }

    @Test func programmaticFormBuildsTheSameModel() throws {
        let person = EntityDescription(
            name: "Person", objectType: Person.self, isAbstract: true,
            properties: [
                .attribute(AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: "")),
                .attribute(AttributeDescription(name: "born", type: .date)),
            ])
        let employee = EntityDescription(
            name: "Employee", objectType: Employee.self, superentityName: "Person",
            properties: [
                .attribute(AttributeDescription(name: "salary", type: .decimal, validationRules: [.range(min: 0, max: 1_000_000)])),
                .attribute(AttributeDescription(name: "email", type: .string)),
                .relationship(RelationshipDescription(name: "manager", destinationEntityName: "Employee", inverseName: "reports")),
                .relationship(
                    RelationshipDescription(name: "reports", destinationEntityName: "Employee", inverseName: "manager", isToMany: true)),
                .relationship(
                    RelationshipDescription(
                        name: "projects", destinationEntityName: "Project", inverseName: "members", isToMany: true,
                        isOrdered: true, maxCount: 10)),
            ],
            uniquenessConstraints: [["email"]],
            indexes: [
                FetchIndexDescription(name: "bySalary", elements: [.ascending("salary")]),
                FetchIndexDescription(name: "byNameAndBorn", elements: [.ascending("name"), .descending("born")]),
            ])
        let project = EntityDescription(
            name: "Project",
            properties: [
                .attribute(AttributeDescription(name: "title", type: .string, isOptional: false)),
                .relationship(
                    RelationshipDescription(name: "members", destinationEntityName: "Employee", inverseName: "projects", isToMany: true)),
            ])
        // Entities may come in any order; the model resolves names.
        let model = try ManagedObjectModel(
            entities: [project, employee, person], configurations: ["Cloud": ["Person", "Employee"]], versionIdentifier: "1")
        let declared = try ModelFixtures.company()
        #expect(model.versionHash == declared.versionHash)
        #expect(model.entityVersionHashes == declared.entityVersionHashes)
        #expect(model.entitiesByName["Employee"]?.properties.map(\.name) == ["name", "born", "salary", "email", "manager", "reports", "projects"])
    }

    @Test func attributeDescriptionsAreOptionalByDefaultLikeCoreData() {
        #expect(AttributeDescription(name: "a", type: .string).isOptional)
        #expect(!Attribute("a", .string).attribute.isOptional)
        #expect(RelationshipDescription(name: "r", destinationEntityName: "E", inverseName: "i").isOptional)
    }

    @Test func standaloneEntitiesKnowOnlyTheirOwnProperties() throws {
        let entity = EntityDescription(
            name: "Employee", superentityName: "Person",
            properties: [.attribute(AttributeDescription(name: "salary", type: .decimal))])
        #expect(entity.superentity == nil)
        #expect(entity.subentities.isEmpty && entity.allSubentities.isEmpty)
        #expect(entity.rootEntity == entity)
        #expect(entity.properties.map(\.name) == ["salary"])
        #expect(entity.attributesByName["salary"]?.entityName == "Employee")
        // Putting it in a model gives a resolved description, a different value from the standalone one.
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Person"), entity])
        #expect(model.entitiesByName["Employee"] != entity)
        #expect(model.entitiesByName["Employee"]?.superentity?.name == "Person")
    }

    @Test func equalEntitiesAreTheSameDeclarationInTheSameModel() throws {
        let first = try ModelFixtures.company()
        let second = try ModelFixtures.company()
        let employee = try #require(first.entitiesByName["Employee"])
        #expect(employee == first.entities[1])
        #expect(employee.superentity == first.entitiesByName["Person"])
        #expect(first.entitiesByName["Person"]?.subentities.first == employee)
        #expect(employee != second.entitiesByName["Employee"])
        #expect(Set([employee, first.entities[1], first.entities[0]]).count == 2)
    }

    @Test func relationshipsResolveThroughTheModel() throws {
        let model = try ModelFixtures.company()
        let projects = try #require(model.entitiesByName["Employee"]?.relationshipsByName["projects"])
        #expect(model.destinationEntity(of: projects)?.name == "Project")
        let inverse = try #require(model.inverseRelationship(of: projects))
        #expect(inverse.name == "members" && inverse.entityName == "Project")
        #expect(model.inverseRelationship(of: inverse)?.name == "projects")
    }

    @Test func modelsMerge() throws {
        let people = try ManagedObjectModel {
            Entity("Person") { Attribute("name", .string) }
            Configuration("People", entities: "Person")
        }
        let pets = try ManagedObjectModel {
            Entity("Pet") { Relationship("friends", toMany: "Pet", inverse: "friends") }
        }
        let merged = try ManagedObjectModel(merging: [people, pets], versionIdentifier: "merged")
        #expect(merged.entities.map(\.name) == ["Person", "Pet"])
        #expect(merged.configurations == ["People": ["Person"]])
        #expect(merged.versionIdentifier == "merged")
        #expect(merged.entityVersionHashes["Pet"] == pets.entityVersionHashes["Pet"])
        #expect(ModelFixtures.error { try ManagedObjectModel(merging: [people, people]) } == .duplicateConfiguration("People"))
        #expect(ModelFixtures.error { try ManagedObjectModel(merging: [pets, pets]) } == .duplicateEntity("Pet"))
    }

    @Test func modelsAreSharedAcrossTasks() async throws {
        let model = try ModelFixtures.company()
        let hashes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { model.entitiesByName["Employee"]!.superentity!.name + model.versionHash }
            }
            var results: Set<String> = []
            for await hash in group { results.insert(hash) }
            return results
        }
        #expect(hashes == ["Person" + model.versionHash])
    }

    @Test func descriptionsReadWell() throws {
        let model = try ModelFixtures.company()
        let text = model.entitiesByName["Employee"]!.description
        #expect(text.hasPrefix("entity Employee : Person"))
        #expect(text.contains("relationship Employee.projects ->> (ordered) Project (inverse members)"))
        #expect(text.contains("attribute Person.born: date?"))
    }
}
