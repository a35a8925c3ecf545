import Foundation
import Testing
@testable import Granary

/// A plain class standing in for a managed object: `#Predicate` only needs its key paths.
final class LoweringEmployee: Hashable {
    static func == (a: LoweringEmployee, b: LoweringEmployee) -> Bool { a === b }
    func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }

    var name = ""
    var nick: String?
    var age = 0
    var minAge = 0
    var small: Int8 = 0
    var big: UInt64 = 0
    var score: Float = 0
    var salary = 0.0
    var flag = false
    var born = Date(timeIntervalSinceReferenceDate: 0)
    var id = UUID()
    var data = Data()
    var price = Decimal(0)
    var url: URL?
    var manager: LoweringEmployee?
    var reports: [LoweringEmployee] = []
    var team: Set<LoweringEmployee> = []
    struct Badge { var level = 0 }
    var badge = Badge()
}

private typealias E = LoweringEmployee

private func lower(_ p: Predicate<E>) -> PredicateNode? { PredicateNode.lower(p) }

@Suite struct FetchingLoweringTests {
    @Test func logicalOperatorsFlattenIntoAndOrNot() {
        let p = #Predicate<E> { $0.age > 3 && $0.name == "a" && $0.salary < 2.5 || !$0.flag }
        #expect(lower(p) == .or([
            .and([.compare(["age"], .greater, .value(3)), .compare(["name"], .equal, .value("a")), .compare(["salary"], .less, .value(2.5))]),
            .not(.compare(["flag"], .equal, .value(true))),
        ]))
    }

    @Test func everyComparisonOperatorLowers() {
        #expect(lower(#Predicate<E> { $0.age == 1 }) == .compare(["age"], .equal, .value(1)))
        #expect(lower(#Predicate<E> { $0.age != 1 }) == .compare(["age"], .notEqual, .value(1)))
        #expect(lower(#Predicate<E> { $0.age < 1 }) == .compare(["age"], .less, .value(1)))
        #expect(lower(#Predicate<E> { $0.age <= 1 }) == .compare(["age"], .lessOrEqual, .value(1)))
        #expect(lower(#Predicate<E> { $0.age > 1 }) == .compare(["age"], .greater, .value(1)))
        #expect(lower(#Predicate<E> { $0.age >= 1 }) == .compare(["age"], .greaterOrEqual, .value(1)))
    }

    @Test func aConstantOnTheLeftSwapsTheOperator() {
        #expect(lower(#Predicate<E> { 3 < $0.age }) == .compare(["age"], .greater, .value(3)))
        #expect(lower(#Predicate<E> { 3 >= $0.age }) == .compare(["age"], .lessOrEqual, .value(3)))
    }

    @Test func twoKeyPathsCompareAsKeyPathOperand() {
        #expect(lower(#Predicate<E> { $0.age > $0.minAge }) == .compare(["age"], .greater, .keyPath(["minAge"])))
    }

    @Test func optionalChainsAndForcedUnwrapsFollowToOneRelationships() {
        #expect(lower(#Predicate<E> { $0.manager?.name == "Ada" }) == .compare(["manager", "name"], .equal, .value("Ada")))
        #expect(lower(#Predicate<E> { $0.manager?.manager?.age == 50 }) == .compare(["manager", "manager", "age"], .equal, .value(50)))
        #expect(lower(#Predicate<E> { $0.manager!.age > 3 }) == .compare(["manager", "age"], .greater, .value(3)))
    }

    @Test func nilComparisonsBecomeIsNil() {
        #expect(lower(#Predicate<E> { $0.manager == nil }) == .isNil(["manager"]))
        #expect(lower(#Predicate<E> { $0.nick != nil }) == .not(.isNil(["nick"])))
        let none: String? = nil
        #expect(lower(#Predicate<E> { $0.nick == none }) == .isNil(["nick"]))
    }

    @Test func constantsMapToStorageValues() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1234.5)
        let uuid = UUID()
        let data = Data([1, 2, 3])
        let price = try #require(Decimal(string: "12.50"))
        let url = try #require(URL(string: "https://example.com/a?b=1"))
        let small: Int8 = -5
        let big: UInt64 = 7
        let score: Float = 0.5
        let nick: String? = "Al"
        #expect(lower(#Predicate<E> { $0.born == date }) == .compare(["born"], .equal, .value(.date(date))))
        #expect(lower(#Predicate<E> { $0.id == uuid }) == .compare(["id"], .equal, .value(.uuid(uuid))))
        #expect(lower(#Predicate<E> { $0.data == data }) == .compare(["data"], .equal, .value(.bytes([1, 2, 3]))))
        #expect(lower(#Predicate<E> { $0.price > price }) == .compare(["price"], .greater, .value(.string(price.description))))
        #expect(lower(#Predicate<E> { $0.url == url }) == .compare(["url"], .equal, .value(.string("https://example.com/a?b=1"))))
        #expect(lower(#Predicate<E> { $0.small == small }) == .compare(["small"], .equal, .value(-5)))
        #expect(lower(#Predicate<E> { $0.big == big }) == .compare(["big"], .equal, .value(7)))
        #expect(lower(#Predicate<E> { $0.score < score }) == .compare(["score"], .less, .value(0.5)))
        #expect(lower(#Predicate<E> { $0.nick == nick }) == .compare(["nick"], .equal, .value("Al")))
        #expect(lower(#Predicate<E> { $0.flag == true }) == .compare(["flag"], .equal, .value(true)))
    }

    @Test func anUnsignedConstantAboveInt64MaxCannotBeLowered() {
        let huge = UInt64.max
        #expect(lower(#Predicate<E> { $0.big == huge }) == nil)
    }

    @Test func containsOnAConstantCollectionBecomesIn() {
        let names = ["a", "b"]
        let ages: Set<Int> = [7]
        #expect(lower(#Predicate<E> { names.contains($0.name) }) == .isIn(["name"], ["a", "b"]))
        #expect(lower(#Predicate<E> { ages.contains($0.age) }) == .isIn(["age"], [7]))
    }

    @Test func stringPrefixAndSubstringTestsLower() {
        #expect(lower(#Predicate<E> { $0.name.starts(with: "A") }) == .string(["name"], .beginsWith, "A", caseInsensitive: false))
        #expect(lower(#Predicate<E> { $0.name.contains("nn") }) == .string(["name"], .contains, "nn", caseInsensitive: false))
        #expect(lower(#Predicate<E> { $0.nick?.starts(with: "A") == true }) == .string(["nick"], .beginsWith, "A", caseInsensitive: false))
        #expect(lower(#Predicate<E> { $0.manager?.name.contains("x") == true }) == .string(["manager", "name"], .contains, "x", caseInsensitive: false))
    }

    @Test func toManyContainsWhereBecomesAnyAndAllSatisfyBecomesNotAnyNot() {
        #expect(lower(#Predicate<E> { $0.reports.contains { $0.age > 30 } }) == .any(["reports"], .compare(["age"], .greater, .value(30))))
        #expect(lower(#Predicate<E> { $0.team.contains { $0.manager?.name == "Ada" } })
            == .any(["team"], .compare(["manager", "name"], .equal, .value("Ada"))))
        #expect(lower(#Predicate<E> { $0.reports.allSatisfy { $0.flag } })
            == .not(.any(["reports"], .not(.compare(["flag"], .equal, .value(true))))))
    }

    @Test func countAndIsEmptyOfAToManyBecomeAtCount() {
        #expect(lower(#Predicate<E> { $0.reports.count > 3 }) == .count(["reports"], .greater, 3))
        #expect(lower(#Predicate<E> { 2 <= $0.team.count }) == .count(["team"], .greaterOrEqual, 2))
        #expect(lower(#Predicate<E> { $0.reports.isEmpty }) == .count(["reports"], .equal, 0))
    }

    @Test func rangeContainsBecomesBetweenOrBounds() {
        #expect(lower(#Predicate<E> { (1...5).contains($0.age) }) == .between(["age"], 1, 5))
        #expect(lower(#Predicate<E> { (1..<5).contains($0.age) })
            == .and([.compare(["age"], .greaterOrEqual, .value(1)), .compare(["age"], .less, .value(5))]))
        let captured = 10...20
        #expect(lower(#Predicate<E> { captured.contains($0.age) }) == .between(["age"], 10, 20))
        let doubles = 0.5..<1.5
        #expect(lower(#Predicate<E> { doubles.contains($0.salary) })
            == .and([.compare(["salary"], .greaterOrEqual, .value(0.5)), .compare(["salary"], .less, .value(1.5))]))
    }

    @Test func constantPredicatesLower() {
        #expect(lower(#Predicate<E> { _ in true }) == .true)
        #expect(lower(#Predicate<E> { _ in false }) == .false)
    }

    @Test func unsupportedShapesLowerToNil() {
        #expect(lower(#Predicate<E> { $0.name.count == 2 }) == nil)
        #expect(lower(#Predicate<E> { ($0.nick ?? "") == "A" }) == nil)
        #expect(lower(#Predicate<E> { ($0.flag ? 1 : 2) == 1 }) == nil)
        #expect(lower(#Predicate<E> { e in e.reports.contains { $0.age > e.age } }) == nil)
        #expect(lower(#Predicate<E> { $0.age + 1 > 3 }) == nil)
        // One unsupported part spoils the whole predicate.
        #expect(lower(#Predicate<E> { $0.age > 3 && $0.name.count == 2 }) == nil)
    }

    @Test func theCallerNamesKeyPaths() {
        let renamed = PredicateNode.lower(#Predicate<E> { $0.name == "x" && $0.badge.level > 1 }) { keyPath in
            if keyPath == \LoweringEmployee.name { return ["fullName"] }
            return KeyPathNames.components(of: keyPath)
        }
        #expect(renamed == .and([.compare(["fullName"], .equal, .value("x")), .compare(["badge", "level"], .greater, .value(1))]))
        #expect(PredicateNode.lower(#Predicate<E> { $0.age > 1 }) { _ in nil } == nil)
    }

    @Test func keyPathNamesReadSwiftKeyPathDescriptions() {
        #expect(KeyPathNames.components(of: \LoweringEmployee.name) == ["name"])
        #expect(KeyPathNames.components(of: \LoweringEmployee.manager?.name) == ["manager", "name"])
        #expect(KeyPathNames.components(of: \LoweringEmployee.manager?.manager?.age) == ["manager", "manager", "age"])
        #expect(KeyPathNames.components(of: \LoweringEmployee.manager!.name) == ["manager", "name"])
        #expect(KeyPathNames.components(of: \LoweringEmployee.badge.level) == ["badge", "level"])
        #expect(KeyPathNames.components(of: \LoweringEmployee.Badge.level) == ["level"])
        #expect(KeyPathNames.components(of: \[LoweringEmployee].count) == nil)
        #expect(KeyPathNames.components(of: \[Int].[0]) == nil)
        #expect(KeyPathNames.components(fromDescription: "\\Employee.manager?.name?") == ["manager", "name"])
        #expect(KeyPathNames.components(fromDescription: "\\Dictionary<String, Int>.keys") == ["keys"])
        #expect(KeyPathNames.components(fromDescription: "\\Outer.Inner.x", rootTypeName: "Outer.Inner") == ["x"])
        #expect(KeyPathNames.components(fromDescription: "\\Array<Employee>.<computed 0x00005573 (Int)>") == nil)
        #expect(KeyPathNames.components(fromDescription: "Employee.name") == nil)
    }

    @Test func sortDescriptorsBecomeSortKeys() throws {
        let byName = try #require(SortKey(SortDescriptor(\LoweringEmployee.name, order: .reverse)))
        #expect(byName == SortKey(keyPath: ["name"], ascending: false, comparison: .binary))
        let byAge = try #require(SortKey(SortDescriptor(\LoweringEmployee.age)))
        #expect(byAge == SortKey("age"))
        let lexical = try #require(SortKey(SortDescriptor(\LoweringEmployee.name, comparator: .lexical)))
        #expect(lexical.comparison == .binary)
        #expect(SortKey(SortDescriptor(\LoweringEmployee.age)) { _ in nil } == nil)
    }
}

/// Lowered predicates evaluated on rows select the same objects as Foundation evaluating the original
/// predicate on the objects (for predicates whose optionals Foundation and SQL treat alike).
@Suite struct FetchingLoweringAgreementTests {
    static let schema = FetchSchema(entityName: "LoweringEmployee", fields: [
        "name": FieldInfo(column: 0, kind: .string), "nick": FieldInfo(column: 1, kind: .string),
        "age": FieldInfo(column: 2, kind: .integer), "salary": FieldInfo(column: 3, kind: .double),
        "flag": FieldInfo(column: 4, kind: .bool),
        "manager": FieldInfo(column: 5, kind: .toOne(destination: "LoweringEmployee")),
        "reports": FieldInfo(column: 6, kind: .toMany(destination: "LoweringEmployee")),
    ])

    @Test func loweredPredicatesSelectWhatFoundationSelects() throws {
        let names = ["Ada", "Bob", "carl", "Dan", "Alma"]
        let people = names.enumerated().map { i, name in
            let e = LoweringEmployee()
            e.name = name
            e.age = [50, 30, 41, 20, 35][i]
            e.salary = [9000, 3000, 4500.5, 100, 6000][i]
            e.flag = i % 2 == 0
            e.nick = i == 2 ? "cc" : nil
            return e
        }
        people[1].manager = people[0]
        people[2].manager = people[0]
        people[3].manager = people[1]
        people[0].reports = [people[1], people[2]]
        people[1].reports = [people[3]]
        let table = TableID(rawValue: 1)
        func key(_ e: LoweringEmployee) -> Int64 { Int64(people.firstIndex { $0 === e }!) }
        let rows = people.map { e in
            Row([.string(e.name), e.nick.map(Value.string) ?? .null, .int(Int64(e.age)), .double(e.salary), .bool(e.flag),
                 e.manager.map { .reference(RowReference(table: table, key: key($0))) } ?? .null,
                 .references(e.reports.map { RowReference(table: table, key: key($0)) })])
        }
        let evaluator = RowEvaluator(schema: Self.schema) { _, ref in (rows[Int(ref.key)], Self.schema) }
        let bounds = ["Bob", "carl"]
        let predicates: [Predicate<LoweringEmployee>] = [
            #Predicate { $0.age > 30 && $0.name.starts(with: "A") },
            #Predicate { $0.manager?.name == "Ada" },
            #Predicate { $0.manager?.manager?.age == 50 },
            #Predicate { $0.reports.contains { $0.age > 40 } },
            #Predicate { $0.reports.count >= 1 || $0.flag },
            #Predicate { (20...41).contains($0.age) },
            #Predicate { !bounds.contains($0.name) },
            #Predicate { $0.salary < 5000.0 && $0.nick == nil },
            #Predicate { $0.name.contains("a") },
            #Predicate { $0.nick?.starts(with: "c") == true },
            #Predicate { $0.reports.allSatisfy { $0.flag } },
            #Predicate { $0.reports.isEmpty },
        ]
        for predicate in predicates {
            let node = try #require(PredicateNode.lower(predicate))
            let viaRows = try rows.indices.filter { try evaluator.matches(node, row: rows[$0]) }
            let viaFoundation = try people.indices.filter { try predicate.evaluate(people[$0]) }
            #expect(viaRows == viaFoundation, "\(node)")
        }
    }
}
