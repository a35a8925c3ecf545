import Foundation
import Testing
@testable import Granary

/// Each `ModelError` case: the model that provokes it, the exact error, and a message naming the culprits.
@Suite struct ModelErrorTests {
    private func expectError(
        _ expected: ModelError, mentions words: [String], sourceLocation: SourceLocation = #_sourceLocation,
        _ build: () throws -> ManagedObjectModel
    ) {
        let error = ModelFixtures.error(build)
        #expect(error == expected, sourceLocation: sourceLocation)
        let message = error?.description ?? ""
        for word in words {
            #expect(message.contains(word), "message \"\(message)\" lacks \(word)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Names

    @Test func initializersThrowTypedModelErrors() {
        do {
            _ = try ManagedObjectModel(entities: [EntityDescription(name: "A"), EntityDescription(name: "A")])
            Issue.record("expected an error")
        } catch {
            let typed: ModelError = error  // compiles only because the initializer throws(ModelError)
            #expect(typed == .duplicateEntity("A"))
        }
    }

    @Test func duplicateEntity() {
        expectError(.duplicateEntity("A"), mentions: ["'A'", "more than once"]) {
            try ManagedObjectModel { Entity("A"); Entity("B"); Entity("A") }
        }
    }

    @Test func invalidNames() {
        expectError(.invalidName("", entity: nil, reason: "a name cannot be empty"), mentions: ["empty"]) {
            try ManagedObjectModel { Entity("") }
        }
        expectError(
            .invalidName("_entity", entity: "A", reason: "names starting with '_' are reserved for storage columns"),
            mentions: ["'_entity'", "'A'", "reserved"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("_entity", .integer64) } }
        }
        expectError(.invalidName("a.b", entity: "A", reason: "'.' separates the components of a key path"), mentions: ["'a.b'"]) {
            try ManagedObjectModel { Entity("A") { Attribute("a.b", .string) } }
        }
        expectError(
            .invalidName("two words", entity: nil, reason: "names cannot contain whitespace or control characters"),
            mentions: ["'two words'", "whitespace"]
        ) {
            try ManagedObjectModel { Entity("two words") }
        }
        expectError(
            .invalidName("", entity: "A", reason: "a name cannot be empty"), mentions: ["'A'"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("x", .string); Index("", "x") } }
        }
    }

    @Test func duplicateProperty() {
        expectError(.duplicateProperty(entity: "A", property: "x"), mentions: ["'A'", "'x'"]) {
            try ManagedObjectModel {
                Entity("A") {
                    Attribute("x", .string)
                    Relationship("x", to: "A", inverse: "x")
                }
            }
        }
    }

    // MARK: Inheritance

    @Test func propertyShadowingASuperentitysProperty() {
        expectError(.shadowedProperty(entity: "Manager", property: "name", superentity: "Person"), mentions: ["'Manager'", "'name'", "'Person'"]) {
            try ManagedObjectModel {
                Entity("Person") { Attribute("name", .string) }
                Entity("Employee", parent: "Person")
                Entity("Manager", parent: "Employee") { Attribute("name", .string) }
            }
        }
    }

    @Test func unknownSuperentity() {
        expectError(.unknownSuperentity(entity: "Employee", superentity: "Persn"), mentions: ["'Employee'", "'Persn'"]) {
            try ManagedObjectModel { Entity("Person"); Entity("Employee", parent: "Persn") }
        }
    }

    @Test func inheritanceCycles() {
        expectError(.inheritanceCycle(["A", "B", "C"]), mentions: ["A -> B -> C -> A"]) {
            try ManagedObjectModel {
                Entity("A", parent: "B")
                Entity("B", parent: "C")
                Entity("C", parent: "A")
            }
        }
        expectError(.inheritanceCycle(["Self"]), mentions: ["Self -> Self"]) {
            try ManagedObjectModel { Entity("Self", parent: "Self") }
        }
        // An entity leading into a loop it is not part of: the loop is reported from its members.
        expectError(.inheritanceCycle(["B", "C"]), mentions: ["B -> C -> B"]) {
            try ManagedObjectModel {
                Entity("A", parent: "B")
                Entity("B", parent: "C")
                Entity("C", parent: "B")
            }
        }
    }

    // MARK: Relationships

    @Test func unknownDestination() {
        expectError(.unknownDestination(entity: "A", relationship: "b", destination: "B"), mentions: ["'A.b'", "'B'"]) {
            try ManagedObjectModel { Entity("A") { Relationship("b", to: "B", inverse: "a") } }
        }
    }

    @Test func missingInverse() {
        expectError(.missingInverse(entity: "A", relationship: "b", destination: "B", inverse: "a"), mentions: ["'A.b'", "'a'", "'B'"]) {
            try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a") }
                Entity("B")
            }
        }
    }

    @Test func inverseThatIsAnAttribute() {
        expectError(
            .inverseMismatch(entity: "A", relationship: "b", inverse: "a", reason: "'B.a' is an attribute"),
            mentions: ["'A.b'", "'B.a' is an attribute"]
        ) {
            try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a") }
                Entity("B") { Attribute("a", .string) }
            }
        }
    }

    @Test func inverseNamingAnotherRelationship() {
        expectError(
            .inverseMismatch(entity: "A", relationship: "b", inverse: "a", reason: "'B.a' names 'other' as its inverse"),
            mentions: ["'A.b'", "'other'"]
        ) {
            try ManagedObjectModel {
                Entity("A") {
                    Relationship("b", to: "B", inverse: "a")
                    Relationship("other", to: "B", inverse: "a")
                }
                Entity("B") { Relationship("a", to: "A", inverse: "other") }
            }
        }
    }

    @Test func inversePointingElsewhere() {
        expectError(
            .inverseMismatch(
                entity: "A", relationship: "c", inverse: "a", reason: "'C.a' points to 'B', which 'A' is not a kind of"),
            mentions: ["'A.c'", "'C.a'", "'B'"]
        ) {
            try ManagedObjectModel {
                Entity("A") { Relationship("c", to: "C", inverse: "a") }
                Entity("B") { Relationship("c", to: "C", inverse: "a") }
                Entity("C") { Relationship("a", to: "B", inverse: "c") }
            }
        }
    }

    @Test func inversesMayPointAtASuperentity() throws {
        // Employee.projects -> Project; Project.members -> Person, which Employee is a kind of.
        let model = try ManagedObjectModel {
            Entity("Person") { Relationship("projects", toMany: "Project", inverse: "members") }
            Entity("Employee", parent: "Person")
            Entity("Project") { Relationship("members", toMany: "Person", inverse: "projects") }
        }
        #expect(model.entitiesByName["Employee"]?.relationshipsByName["projects"]?.entityName == "Person")
        expectError(
            .inverseMismatch(
                entity: "Person", relationship: "projects", inverse: "members",
                reason: "'Project.members' points to 'Employee', which 'Person' is not a kind of"),
            mentions: ["'Person.projects'"]
        ) {
            try ManagedObjectModel {
                Entity("Person") { Relationship("projects", toMany: "Project", inverse: "members") }
                Entity("Employee", parent: "Person")
                Entity("Project") { Relationship("members", toMany: "Employee", inverse: "projects") }
            }
        }
    }

    @Test func invalidRelationshipCountsAndOrdering() {
        let orderedToOne = RelationshipDescription(name: "b", destinationEntityName: "A", inverseName: "b", isOrdered: true)
        expectError(
            .invalidRelationship(entity: "A", relationship: "b", reason: "only a to-many relationship can be ordered"),
            mentions: ["'A.b'", "ordered"]
        ) {
            try ManagedObjectModel(entities: [EntityDescription(name: "A", properties: [.relationship(orderedToOne)])])
        }
        expectError(.invalidRelationship(entity: "A", relationship: "bs", reason: "minCount -1 is negative"), mentions: ["'A.bs'"]) {
            try ManagedObjectModel { Entity("A") { Relationship("bs", toMany: "A", inverse: "bs", minCount: -1) } }
        }
        expectError(.invalidRelationship(entity: "A", relationship: "bs", reason: "maxCount 2 is below 3"), mentions: ["maxCount 2"]) {
            try ManagedObjectModel { Entity("A") { Relationship("bs", toMany: "A", inverse: "bs", minCount: 3, maxCount: 2) } }
        }
        expectError(.invalidRelationship(entity: "A", relationship: "bs", reason: "maxCount 0 is below 1"), mentions: ["maxCount 0"]) {
            try ManagedObjectModel { Entity("A") { Relationship("bs", toMany: "A", inverse: "bs", maxCount: 0) } }
        }
    }

    // MARK: Uniqueness constraints and indexes

    @Test func uniquenessConstraintNamingUnknownProperty() {
        expectError(
            .unknownProperty(entity: "A", property: "nope", usage: .uniquenessConstraint(["x", "nope"])),
            mentions: ["uniqueness constraint (x, nope)", "'A'", "'nope'"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("x", .string); Unique("x", "nope") } }
        }
    }

    @Test func indexNamingUnknownProperty() {
        expectError(.unknownProperty(entity: "A", property: "nope", usage: .index("byNope")), mentions: ["index 'byNope'", "'nope'"]) {
            try ManagedObjectModel { Entity("A") { Index("byNope", "nope") } }
        }
    }

    @Test func uniquenessConstraintOrIndexNamingToManyRelationship() {
        expectError(
            .unindexableProperty(
                entity: "A", property: "bs", usage: .uniquenessConstraint(["bs"]),
                reason: "a to-many relationship has no single value to index"),
            mentions: ["'A'", "'bs'", "to-many"]
        ) {
            try ManagedObjectModel { Entity("A") { Relationship("bs", toMany: "A", inverse: "bs"); Unique("bs") } }
        }
        expectError(
            .unindexableProperty(
                entity: "A", property: "bs", usage: .index("byBs"), reason: "a to-many relationship has no single value to index"),
            mentions: ["index 'byBs'", "to-many"]
        ) {
            try ManagedObjectModel { Entity("A") { Relationship("bs", toMany: "A", inverse: "bs"); Index("byBs", "bs") } }
        }
    }

    @Test func uniquenessConstraintOrIndexNamingTransientAttribute() {
        expectError(
            .unindexableProperty(entity: "A", property: "t", usage: .index("byT"), reason: "transient properties are not stored"),
            mentions: ["'t'", "transient"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("t", .string, optional: true, transient: true); Index("byT", "t") } }
        }
    }

    @Test func toOneRelationshipsMayBeUniqueAndIndexed() throws {
        let model = try ManagedObjectModel {
            Entity("Passport") { Relationship("holder", to: "Person", inverse: "passport"); Unique("holder"); Index("byHolder", "holder") }
            Entity("Person") { Relationship("passport", to: "Passport", inverse: "holder") }
        }
        #expect(model.entitiesByName["Passport"]?.uniquenessConstraints == [["holder"]])
    }

    @Test func emptyOrRepetitiveIndexes() {
        expectError(.invalidIndex(entity: "A", usage: .uniquenessConstraint([]), reason: "it names no properties"), mentions: ["'A'"]) {
            try ManagedObjectModel(entities: [EntityDescription(name: "A", uniquenessConstraints: [[]])])
        }
        expectError(.invalidIndex(entity: "A", usage: .index("byX"), reason: "it names 'x' twice"), mentions: ["index 'byX'", "twice"]) {
            try ManagedObjectModel { Entity("A") { Attribute("x", .string); Index("byX", "x", "x") } }
        }
    }

    @Test func subEntityUniquenessConstraintOnOnlyInheritedProperties() {
        expectError(
            .inheritedUniquenessConstraint(entity: "Employee", properties: ["name"], superentity: "Person"),
            mentions: ["'Employee'", "(name)", "'Person'"]
        ) {
            try ManagedObjectModel {
                Entity("Person") { Attribute("name", .string) }
                Entity("Employee", parent: "Person") { Unique("name") }
            }
        }
    }

    @Test func indexNamesClashingInOneHierarchy() {
        expectError(.duplicateIndex(entity: "A", index: "A_x"), mentions: ["'A'", "'A_x'"]) {
            try ManagedObjectModel { Entity("A") { Attribute("x", .string, indexed: true); Index("x", "x") } }
        }
        expectError(.duplicateIndex(entity: "A", index: "A_unique_a_b"), mentions: ["'A_unique_a_b'"]) {
            try ManagedObjectModel {
                Entity("A") {
                    Attribute("a", .string); Attribute("b", .string); Attribute("a_b", .string)
                    Unique("a", "b"); Unique("a_b")
                }
            }
        }
    }

    // MARK: Attributes

    @Test func transientAttributesThatCannotWork() {
        expectError(
            .transientConflict(entity: "A", attribute: "t", reason: "it has no column to index"), mentions: ["'A.t'", "index"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("t", .string, optional: true, transient: true, indexed: true) } }
        }
        let error = ModelFixtures.error { try ManagedObjectModel { Entity("A") { Attribute("t", .string, transient: true) } } }
        guard case .transientConflict("A", "t", let reason)? = error else {
            Issue.record("expected transientConflict, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("default value"))
        // Required and transient is fine with a default, and optional transient attributes need none.
        #expect(ModelFixtures.error { try ManagedObjectModel { Entity("A") { Attribute("t", .string, defaultValue: "", transient: true) } } } == nil)
        #expect(ModelFixtures.error { try ManagedObjectModel { Entity("A") { Attribute("t", .string, optional: true, transient: true) } } } == nil)
    }

    @Test func defaultValueOfTheWrongType() {
        expectError(
            .invalidDefaultValue(
                entity: "A", attribute: "n",
                reason: ValueConversionError.typeMismatch(attribute: "A.n", type: .integer32, valueType: "String").description),
            mentions: ["'A.n'", "String"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("n", .integer32, defaultValue: "zero") } }
        }
        expectError(
            .invalidDefaultValue(
                entity: "A", attribute: "n",
                reason: ValueConversionError.outOfRange(attribute: "A.n", type: .integer16, value: "70000").description),
            mentions: ["70000"]
        ) {
            try ManagedObjectModel { Entity("A") { Attribute("n", .integer16, defaultValue: 70000) } }
        }
    }

    @Test func invalidRegularExpression() {
        let error = ModelFixtures.error {
            try ManagedObjectModel { Entity("A") { Attribute("s", .string, validation: [.regex("([a-z")]) } }
        }
        guard case .invalidRegex("A", "s", "([a-z", _)? = error else {
            Issue.record("expected invalidRegex, got \(String(describing: error))")
            return
        }
        #expect(error?.description.hasPrefix("attribute 'A.s' has an invalid regular expression ([a-z") == true)
    }

    @Test func validationRulesThatDoNotFitTheType() {
        func rule(_ type: AttributeType, _ rule: ValidationRule) -> ModelError? {
            ModelFixtures.error { try ManagedObjectModel { Entity("A") { Attribute("v", type, validation: [rule]) } } }
        }
        #expect(rule(.integer32, .regex("[0-9]+")) == .inapplicableValidationRule(
            entity: "A", attribute: "v", rule: "regex([0-9]+)", reason: "regular expressions apply to strings, not integer32"))
        #expect(rule(.string, .range(min: 0, max: 1)) == .inapplicableValidationRule(
            entity: "A", attribute: "v", rule: "range(0...1)", reason: "ranges apply to numbers and dates, not string"))
        #expect(rule(.integer32, .length(min: 1, max: 2)) == .inapplicableValidationRule(
            entity: "A", attribute: "v", rule: "length(1...2)", reason: "lengths apply to strings and binary data, not integer32"))
        #expect(rule(.double, .range(min: .date(Date()), max: nil))?.description.contains("needs numeric bounds") == true)
        #expect(rule(.date, .range(min: 0, max: nil))?.description.contains("needs date bounds") == true)
        #expect(rule(.double, .range(min: 2, max: 1))?.description.contains("minimum is above the maximum") == true)
        #expect(rule(.string, .length(min: 3, max: 2))?.description.contains("minimum is above the maximum") == true)
        #expect(rule(.string, .length(min: -1, max: nil))?.description.contains("negative") == true)
        #expect(rule(.double, .range(min: 1, max: 1)) == nil)
        #expect(rule(.binaryData, .length(min: 1, max: 2)) == nil)
        #expect(rule(.uuid, .custom("any", { _ in nil })) == nil)
        #expect(rule(.string, .regex("[0-9]+"))?.description == nil)
    }

    /// Transformers are looked up when a value is stored or read, so a model whose transformer is not
    /// registered (yet) loads, and only its values fail.
    @Test func unregisteredTransformableTypesLoadAndFailWhenUsed() throws {
        let model = try ManagedObjectModel { Entity("A") { Attribute("p", .transformable(valueTypeName: "Missing.Type")) } }
        let attribute = try #require(model.entity(named: "A")?.attributesByName["p"])
        #expect(throws: ValueConversionError.unregisteredTransformableType(attribute: "A.p", typeName: "Missing.Type")) {
            try attribute.storageValue(for: 1)
        }
    }

    // MARK: Configurations

    @Test func configurationNamingUnknownEntity() {
        expectError(.unknownConfigurationEntity(configuration: "Cloud", entity: "Ghost"), mentions: ["'Cloud'", "'Ghost'"]) {
            try ManagedObjectModel { Entity("A"); Configuration("Cloud", entities: "A", "Ghost") }
        }
        expectError(.unknownConfigurationEntity(configuration: "Local", entity: "B"), mentions: ["'Local'", "'B'"]) {
            try ManagedObjectModel(entities: [EntityDescription(name: "A")], configurations: ["Local": ["B"]])
        }
    }

    @Test func configurationDeclaredTwice() {
        expectError(.duplicateConfiguration("Cloud"), mentions: ["'Cloud'"]) {
            try ManagedObjectModel { Entity("A"); Configuration("Cloud", entities: "A"); Configuration("Cloud", entities: []) }
        }
    }
}
