import Foundation
import Synchronization
import Testing
@testable import Granary

@Suite struct ModelValidationTests {
    private func attribute(_ declaration: Attribute) throws -> AttributeDescription {
        try ModelFixtures.resolved(declaration, entity: "Item")
    }

    @Test func requiredAttributesRejectNilAndOptionalOnesAcceptIt() throws {
        let required = try attribute(Attribute("name", .string))
        #expect(required.validate(nil) == [ValidationError(entityName: "Item", propertyName: "name", reason: .missing)])
        #expect(required.validate("x").isEmpty)
        let optional = try attribute(Attribute("nickname", .string, optional: true, validation: [.length(min: 2, max: nil)]))
        #expect(optional.validate(nil).isEmpty)
        #expect(optional.validate(Optional<String>.none as Any).isEmpty)
    }

    @Test func valuesOfTheWrongTypeAreReportedOnceWithoutRunningRules() throws {
        let age = try attribute(Attribute("age", .integer16, validation: [.range(min: 0, max: 10)]))
        let errors = age.validate(70000)
        #expect(errors.count == 1)
        guard case .invalidValue(let message)? = errors.first?.reason else {
            Issue.record("expected invalidValue, got \(errors)")
            return
        }
        #expect(message.contains("70000") && message.contains("Item.age"))
        #expect(age.validate("ten").count == 1)
    }

    @Test func numericRangesAreInclusive() throws {
        let salary = try attribute(Attribute("salary", .decimal, validation: [.range(min: 0, max: 1_000_000)]))
        #expect(salary.validate(Decimal(0)).isEmpty)
        #expect(salary.validate(Decimal(1_000_000)).isEmpty)
        #expect(
            salary.validate(Decimal(string: "-0.01")!)
                == [ValidationError(entityName: "Item", propertyName: "salary", reason: .belowMinimum(value: "-0.01", minimum: "0"))])
        #expect(
            salary.validate(Decimal(string: "1000000.01")!).map(\.reason)
                == [.aboveMaximum(value: "1000000.01", maximum: "1000000")])

        let ratio = try attribute(Attribute("ratio", .double, validation: [.range(min: 0.5, max: 1.5)]))
        #expect(ratio.validate(0.5).isEmpty && ratio.validate(1).isEmpty)
        #expect(ratio.validate(0.49).map(\.reason) == [.belowMinimum(value: "0.49", minimum: "0.5")])
        #expect(ratio.validate(Float(2)).count == 1)

        let level = try attribute(Attribute("level", .integer16, validation: [.range(min: nil, max: 3)]))
        #expect(level.validate(Int.min + 1).count == 1)  // out of Int16: invalid value, not a range error
        #expect(level.validate(-30000).isEmpty)
        #expect(level.validate(4).map(\.reason) == [.aboveMaximum(value: "4", maximum: "3")])

        let exact = try attribute(Attribute("exact", .decimal, validation: [.range(min: .decimal(Decimal(string: "0.1")!), max: nil)]))
        #expect(exact.validate(Decimal(string: "0.1")!).isEmpty)
        #expect(exact.validate(Decimal(string: "0.09999")!).count == 1)
    }

    @Test func dateRangesCompareDates() throws {
        let start = Date(timeIntervalSinceReferenceDate: 0)
        let end = Date(timeIntervalSinceReferenceDate: 86_400)
        let when = try attribute(Attribute("when", .date, validation: [.range(min: .date(start), max: .date(end))]))
        #expect(when.validate(start).isEmpty && when.validate(end).isEmpty)
        #expect(when.validate(start.addingTimeInterval(-1)).count == 1)
        guard case .aboveMaximum(_, let maximum)? = when.validate(end.addingTimeInterval(1)).first?.reason else {
            Issue.record("expected aboveMaximum")
            return
        }
        #expect(maximum == "2001-01-02T00:00:00Z")
    }

    @Test func lengthsCountCharactersForStringsAndBytesForData() throws {
        let code = try attribute(Attribute("code", .string, validation: [.length(min: 2, max: 5)]))
        #expect(code.validate("héllo").isEmpty)  // 5 characters, 6 UTF-8 bytes
        #expect(code.validate("a").map(\.reason) == [.tooShort(length: 1, minimum: 2)])
        #expect(code.validate("abcdef").map(\.reason) == [.tooLong(length: 6, maximum: 5)])
        let blob = try attribute(Attribute("blob", .binaryData, validation: [.length(min: nil, max: 3)]))
        #expect(blob.validate([UInt8](repeating: 0, count: 3)).isEmpty)
        #expect(blob.validate(Data(count: 4)).map(\.reason) == [.tooLong(length: 4, maximum: 3)])
    }

    @Test func regularExpressionsMustMatchTheWholeString() throws {
        let slug = try attribute(Attribute("slug", .string, validation: [.regex("[a-z]+")]))
        #expect(slug.validate("abc").isEmpty)
        #expect(slug.validate("abc1").map(\.reason) == [.patternMismatch(pattern: "[a-z]+")])
        #expect(slug.validate("1abc").count == 1)
        // The whole string may match a longer alternative than the first one that matches a prefix.
        let choice = try attribute(Attribute("choice", .string, validation: [.regex("a|ab")]))
        #expect(choice.validate("ab").isEmpty)
        let email = try ModelFixtures.company().entitiesByName["Employee"]!.attributesByName["email"]!
        #expect(email.validate("a@b").isEmpty)
        #expect(email.validate("a@b@c").map(\.reason) == [.patternMismatch(pattern: #"^[^@]+@[^@]+$"#)])
    }

    @Test func customRulesSeeTheCanonicalValueAndNil() throws {
        let seen = Mutex<[String]>([])
        let even = ValidationRule.custom("even") { value in
            seen.withLock { $0.append(value.map { "\(type(of: $0))" } ?? "nil") }
            guard let n = value as? Int16 else { return value == nil ? nil : "not an Int16" }
            return n % 2 == 0 ? nil : "\(n) is odd"
        }
        let count = try attribute(Attribute("count", .integer16, optional: true, validation: [even]))
        #expect(count.validate(4).isEmpty)
        #expect(count.validate(3).map(\.reason) == [.custom(rule: "even", message: "3 is odd")])
        #expect(count.validate(nil).isEmpty)
        #expect(seen.withLock { $0 } == ["Int16", "Int16", "nil"])
    }

    @Test func everyFailingRuleIsReported() throws {
        let code = try attribute(
            Attribute(
                "code", .string,
                validation: [.length(min: 3, max: nil), .regex("[0-9]+"), .custom("never", { _ in "no" })]))
        #expect(code.validate("x").map(\.reason) == [
            .tooShort(length: 1, minimum: 3), .patternMismatch(pattern: "[0-9]+"), .custom(rule: "never", message: "no"),
        ])
    }

    @Test func relationshipCountsAreValidated() throws {
        let employee = try #require(ModelFixtures.company().entitiesByName["Employee"])
        let projects = try #require(employee.relationshipsByName["projects"])
        #expect(projects.validate(count: 0).isEmpty)
        #expect(projects.validate(count: 10).isEmpty)
        #expect(
            projects.validate(count: 11)
                == [ValidationError(entityName: "Employee", propertyName: "projects", reason: .tooMany(count: 11, maximum: 10))])

        let team = RelationshipDescription(
            name: "members", destinationEntityName: "P", inverseName: "team", isToMany: true, isOptional: false,
            minCount: 2, maxCount: 4)
        // Apple: NSRelationshipDescription, "Cardinality" — the counts are enforced when the value is not
        // nil, and a to-many value is an empty set, never nil: too few, not missing.
        #expect(team.validate(count: 0).map(\.reason) == [.tooFew(count: 0, minimum: 2)])
        #expect(team.validate(count: 1).map(\.reason) == [.tooFew(count: 1, minimum: 2)])
        let squad = RelationshipDescription(name: "members", destinationEntityName: "P", inverseName: "squad", isToMany: true, isOptional: false)
        #expect(squad.validate(count: 0).isEmpty)
        #expect(team.validate(count: 3).isEmpty)

        let owner = RelationshipDescription(name: "owner", destinationEntityName: "P", inverseName: "things", isOptional: false)
        #expect(owner.validate(count: 0).map(\.reason) == [.missing])
        #expect(owner.validate(count: 1).isEmpty)
    }

    @Test func validationErrorMessagesNameEntityAndProperty() throws {
        let salary = try #require(ModelFixtures.company().entitiesByName["Employee"]?.attributesByName["salary"])
        let error = try #require(salary.validate(Decimal(-5)).first)
        #expect(error.description == "'Employee.salary' is -5, below the minimum 0")
        // Inherited attributes report the entity that declares them.
        let name = try #require(ModelFixtures.company().entitiesByName["Employee"]?.attributesByName["name"])
        #expect(name.validate(nil).first?.description == "'Person.name' is required but has no value")
    }
}
