import Foundation
import Testing
@testable import Granary

/// A tiny Employee table in memory: rows by key, with manager (to-one) and reports (to-many) references.
struct EvaluatorFixture {
    static let table = TableID(rawValue: 1)
    static let schema = FetchSchema(entityName: "Employee", fields: [
        "name": FieldInfo(column: 0, kind: .string),
        "age": FieldInfo(column: 1, kind: .integer),
        "salary": FieldInfo(column: 2, kind: .double),
        "flag": FieldInfo(column: 3, kind: .bool),
        "price": FieldInfo(column: 4, kind: .decimal),
        "born": FieldInfo(column: 5, kind: .date),
        "id": FieldInfo(column: 6, kind: .uuid),
        "blob": FieldInfo(column: 7, kind: .binary),
        "site": FieldInfo(column: 8, kind: .uri),
        "manager": FieldInfo(column: 9, kind: .toOne(destination: "Employee")),
        "reports": FieldInfo(column: 10, kind: .toMany(destination: "Employee")),
        "nick": FieldInfo(column: 11, kind: .string),
    ])

    static func ref(_ key: Int64) -> RowReference { RowReference(table: table, key: key) }

    var rows: [Int64: Row] = [:]

    static func row(name: String, age: Value = .null, salary: Value = .null, flag: Value = .null, price: Value = .null,
                    manager: Int64? = nil, reports: [Int64] = [], nick: Value = .null) -> Row {
        Row([.string(name), age, salary, flag, price, .date(Date(timeIntervalSinceReferenceDate: 0)), .uuid(UUID()),
             .bytes([1]), .string("https://x"), manager.map { .reference(ref($0)) } ?? .null, .references(reports.map(ref)), nick])
    }

    init() {
        rows[1] = Self.row(name: "Ada", age: 50, salary: 9000.5, flag: true, price: "10.50", reports: [2, 3])
        rows[2] = Self.row(name: "Bob", age: 30, salary: 3000, flag: false, price: "9.75", manager: 1, reports: [4])
        rows[3] = Self.row(name: "Émile", age: 41, salary: .null, price: "100", manager: 1, nick: "em")
        rows[4] = Self.row(name: "carl", manager: 2)
        rows[5] = Self.row(name: "Dan", age: 20, manager: 99)  // dangling manager
    }

    var evaluator: RowEvaluator {
        let rows = self.rows
        return RowEvaluator(schema: Self.schema) { destination, ref in
            #expect(destination == "Employee")
            return rows[ref.key].map { ($0, Self.schema) }
        }
    }

    func keys(_ node: PredicateNode) throws -> [Int64] {
        let e = evaluator
        return try rows.keys.sorted().filter { try e.matches(node, row: rows[$0]!) }
    }
}

@Suite struct FetchingEvaluatorTests {
    let f = EvaluatorFixture()

    func keys(_ s: String, _ args: [Any?] = []) throws -> [Int64] { try f.keys(try PredicateParser.parse(s, arguments: args)) }

    @Test func comparisonsOnIntegersDoublesAndBooleans() throws {
        #expect(try keys("age > 30") == [1, 3])
        #expect(try keys("age >= 30") == [1, 2, 3])
        #expect(try keys("age < 41") == [2, 5])
        #expect(try keys("age <= 41 AND age != 20") == [2, 3])
        #expect(try keys("age == 30.0") == [2])
        #expect(try keys("age > 40.5") == [1, 3])
        #expect(try keys("salary > 3000") == [1])
        #expect(try keys("salary == 3000") == [2])
        #expect(try keys("flag == YES") == [1])
        #expect(try keys("flag == 0") == [2])
    }

    @Test func nullComparesFalseExceptWithNil() throws {
        // carl (4) has no age: he matches neither side of any comparison.
        #expect(try keys("age > 0") == [1, 2, 3, 5])
        #expect(try keys("NOT (age > 0)") == [4])
        #expect(try keys("age != 30") == [1, 3, 5])
        #expect(try keys("age == nil") == [4])
        #expect(try keys("age != nil") == [1, 2, 3, 5])
        #expect(try keys("salary < 100000") == [1, 2])
        #expect(try keys("nick IN {nil, 'x'}") == [1, 2, 4, 5])
    }

    @Test func inAndBetween() throws {
        #expect(try keys("age IN {20, 50, 77}") == [1, 5])
        #expect(try keys("name IN %@", [["Bob", "carl"]]) == [2, 4])
        #expect(try keys("age BETWEEN {30, 41}") == [2, 3])
        #expect(try keys("age BETWEEN {41, 30}") == [])
    }

    @Test func stringOperatorsWithAndWithoutCaseAndDiacritics() throws {
        #expect(try keys("name BEGINSWITH 'C'") == [])
        #expect(try keys("name BEGINSWITH[c] 'C'") == [4])
        #expect(try keys("name ENDSWITH 'n'") == [5])
        #expect(try keys("name CONTAINS 'o'") == [2])
        #expect(try keys("name CONTAINS[c] 'A'") == [1, 4, 5])
        #expect(try keys("name BEGINSWITH 'E'") == [])
        #expect(try keys("name BEGINSWITH[d] 'E'") == [3])
        #expect(try keys("name ==[cd] 'emile'") == [3])
        #expect(try keys("name == 'emile'") == [])
        #expect(try keys("name LIKE '?o*'") == [2])
        #expect(try keys("name LIKE[c] '*A*'") == [1, 4, 5])
        #expect(try keys("name LIKE 'A*a'") == [1])
        #expect(try keys("name MATCHES '[A-D][a-z]+'") == [1, 2, 5])
        #expect(try keys("name MATCHES[c] 'c.*'") == [4])
        #expect(try keys("name MATCHES 'o'") == [])  // must match the whole string
        #expect(try keys("nick BEGINSWITH ''") == [3])  // a null string has no prefix
        #expect(throws: Granary.PredicateParseError.self) { try keys("name MATCHES '('") }
    }

    @Test func likePatternsHandleEscapesAndBacktracking() {
        #expect(LikePattern("a*b*c").matches("axxbyyc"))
        #expect(!LikePattern("a*b*c").matches("axxbyy"))
        #expect(LikePattern("*").matches(""))
        #expect(LikePattern("a\\*").matches("a*"))
        #expect(!LikePattern("a\\*").matches("ab"))
        #expect(LikePattern("??").matches("éz"))
        #expect(LikePattern(LikePattern.escaping("1?*\\")).matches("1?*\\"))
    }

    @Test func decimalsCompareNumerically() throws {
        // As strings "9.75" > "10.50" > "100"; as decimals 9.75 < 10.50 < 100.
        #expect(try keys("price > 10") == [1, 3])
        #expect(try keys("price < '10.5'") == [2])
        #expect(try keys("price == 10.5") == [1])
        #expect(try keys("price BETWEEN {9.75, 10.5}") == [1, 2])
        let e = f.evaluator
        #expect(try e.compare(f.rows[2]!, f.rows[3]!, by: [SortKey("price")]) == .orderedAscending)
    }

    @Test func toOneKeyPathsFollowReferences() throws {
        #expect(try keys("manager.name == 'Ada'") == [2, 3])
        #expect(try keys("manager.manager.name == 'Ada'") == [4])
        #expect(try keys("manager == nil") == [1])
        #expect(try keys("manager.name == nil") == [1, 5])  // no manager, or a dangling one
        #expect(try keys("manager.age > age") == [2, 3])
    }

    @Test func anyAndCountResolveToManyMembers() throws {
        #expect(try keys("ANY reports.age > 40") == [1])
        #expect(try keys("ANY reports.name BEGINSWITH[c] 'c'") == [2])
        #expect(try keys("ALL reports.age > 25") == [1, 3, 4, 5])  // carl has no age; true without reports
        #expect(try keys("reports.@count == 2") == [1])
        #expect(try keys("reports.@count >= 1") == [1, 2])
        #expect(try keys("SUBQUERY(reports, $r, ANY $r.reports.name == 'carl').@count > 0") == [1])
        #expect(try keys("manager.reports.@count == 2") == [2, 3])
    }

    @Test func keyPathErrorsNameTheKeyAndEntity() {
        #expect(throws: Granary.PredicateParseError.unknownKey(keyPath: "wage", entity: "Employee")) { try keys("wage > 3") }
        #expect(throws: Granary.PredicateParseError.self) { try keys("reports.age > 3") }
        #expect(throws: Granary.PredicateParseError.self) { try keys("reports == nil") }
        #expect(throws: Granary.PredicateParseError.self) { try keys("name.@count > 1") }
        #expect(throws: Granary.PredicateParseError.self) { try keys("age.x == 1") }
    }

    @Test func sortingPutsNullsFirstAscendingAndLastDescending() throws {
        let e = f.evaluator
        func order(_ keys: [SortKey]) throws -> [Int64] {
            try f.rows.keys.sorted().sorted { try e.compare(f.rows[$0]!, f.rows[$1]!, by: keys) == .orderedAscending }
        }
        #expect(try order([SortKey("age")]) == [4, 5, 2, 3, 1])
        #expect(try order([SortKey("age", ascending: false)]) == [1, 3, 2, 5, 4])
        #expect(try order([SortKey("salary"), SortKey("name", ascending: false)]) == [3, 4, 5, 2, 1])
        // Binary order puts capitals and then accented letters after lowercase ASCII...
        #expect(try order([SortKey("name")]) == [1, 2, 5, 4, 3])
        // ...case-insensitive and localized orders do not.
        #expect(try order([SortKey("name", comparison: .caseInsensitive)]) == [1, 2, 4, 5, 3])
        #expect(try order([SortKey("name", comparison: .localized)]) == [1, 2, 4, 5, 3])
        #expect(try order([SortKey("manager.name"), SortKey("age")]) == [5, 1, 2, 3, 4])
        #expect(try e.compare(f.rows[1]!, f.rows[1]!, by: [SortKey("age"), SortKey("name")]) == .orderedSame)
    }

    @Test func valuesCompareExactlyAcrossIntegersAndDoubles() {
        let big = Int64(1) << 53
        #expect(ValueOrder.compare(.int(big + 1), .double(Double(big)), asDecimals: false) == .orderedDescending)
        #expect(ValueOrder.compare(.int(3), .double(3.5), asDecimals: false) == .orderedAscending)
        #expect(ValueOrder.compare(.int(-3), .double(-3.5), asDecimals: false) == .orderedDescending)
        #expect(ValueOrder.compare(.int(.max), .double(9.3e18), asDecimals: false) == .orderedAscending)
        #expect(ValueOrder.compare(.double(.nan), .double(1), asDecimals: false) == nil)
        #expect(ValueOrder.compare(.string("1"), .int(1), asDecimals: false) == nil)
        #expect(ValueOrder.sortOrder(.double(.nan), .double(.infinity), asDecimals: false, strings: .binary) == .orderedDescending)
        #expect(ValueOrder.sortOrder(.null, .int(.min), asDecimals: false, strings: .binary) == .orderedAscending)
        #expect(ValueOrder.sortOrder(.int(1), .string("a"), asDecimals: false, strings: .binary) == .orderedAscending)
    }

    @Test func theEntityColumnIsAField() throws {
        var schema = EvaluatorFixture.schema
        schema.entityColumn = 1
        let e = RowEvaluator(schema: schema)
        #expect(try e.matches(.isIn([FetchSchema.entityKey], [50]), row: f.rows[1]!))
        #expect(try !e.matches(.isIn([FetchSchema.entityKey], [50]), row: f.rows[2]!))
    }
}
