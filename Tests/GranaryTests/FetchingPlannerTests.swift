import Foundation
import Testing
@testable import Granary

@Suite struct FetchingPlannerTests {
    static let schema = FetchSchema(
        entityName: "Employee",
        fields: [
            "name": FieldInfo(column: 0, kind: .string),
            "age": FieldInfo(column: 1, kind: .integer),
            "salary": FieldInfo(column: 2, kind: .double),
            "dept": FieldInfo(column: 3, kind: .string),
            "manager": FieldInfo(column: 4, kind: .toOne(destination: "Employee")),
            "reports": FieldInfo(column: 5, kind: .toMany(destination: "Employee")),
            "price": FieldInfo(column: 6, kind: .decimal),
        ],
        indexes: [
            PlannerIndex(name: "Employee_bySalary", on: "salary"),
            PlannerIndex(name: "Employee_byDeptAge", on: "dept", "age"),
            PlannerIndex(name: "Employee_byName", on: "name", isUnique: true),
            PlannerIndex(name: "Employee_byAgeDesc", columns: [("age", true)]),
            PlannerIndex(name: "Employee_byPrice", on: "price"),
            PlannerIndex(name: "Employee_byManager", on: "manager"),
        ])

    func plan(_ format: String, _ args: [Any?] = [], sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0,
              schema: FetchSchema = Self.schema) throws -> FetchPlan {
        try FetchPlanner.plan(predicate: try PredicateParser.parse(format, arguments: args), sort: sort, limit: limit, offset: offset, schema: schema)
    }

    @Test func noPredicateScansTheTableAndPushesTheLimit() throws {
        let p = try FetchPlanner.plan(predicate: nil, sort: [], limit: 10, offset: 0, schema: Self.schema)
        #expect(p.access == .fullScan)
        #expect(p.residual == nil && p.sortedByAccess && p.limitPushedDown)
        #expect(p.explain == "SCAN Employee, LIMIT 10 IN SCAN")
    }

    @Test func aRangeWithASatisfiedOrderLeavesTheRestAsResidual() throws {
        let p = try plan("salary BETWEEN {1000, 2000} AND name BEGINSWITH 'A'", sort: [SortKey("salary")], limit: 5)
        #expect(p.access == .index(name: "Employee_bySalary", equal: [], range: .closed(.double(1000), .double(2000)), prefix: nil, reverse: false))
        #expect(p.residual == .string(["name"], .beginsWith, "A", caseInsensitive: false))
        #expect(p.sortedByAccess && !p.limitPushedDown)
        #expect(p.explain == "INDEX Employee_bySalary RANGE [1000.0, 2000.0] ORDER SATISFIED, RESIDUAL name BEGINSWITH 'A'")
    }

    @Test func equalityOnTheLeadingColumnThenARangeRunsInReverseForADescendingSort() throws {
        let p = try plan("dept == 'x' AND age > 30", sort: [SortKey("age", ascending: false)], limit: 5, offset: 2)
        #expect(p.access == .index(name: "Employee_byDeptAge", equal: ["x"], range: .greaterThan(30), prefix: nil, reverse: true))
        #expect(p.residual == nil && p.sortedByAccess && p.limitPushedDown)
        #expect(p.explain == "INDEX Employee_byDeptAge EQUAL ('x') RANGE (30, +inf) REVERSE ORDER SATISFIED, LIMIT 5 OFFSET 2 IN SCAN")
        #expect(p.access.indexQueries(table: "t", offset: 2, limit: 5)
            == [IndexQuery(table: "t", index: "Employee_byDeptAge", equal: ["x"], range: .greaterThan(30), reverse: true, offset: 2, limit: 5)])
    }

    @Test func theLongestEqualityPrefixWins() throws {
        let p = try plan("name == 'Ada' AND dept == 'x' AND age == 3")
        #expect(p.access == .index(name: "Employee_byDeptAge", equal: ["x", 3], range: nil, prefix: nil, reverse: false))
        #expect(p.residual == .compare(["name"], .equal, .value("Ada")))
    }

    @Test func inOnAnIndexedColumnBecomesAUnionInValueOrder() throws {
        let p = try plan("dept IN {'b', 'a', 'b'} AND age == 3")
        #expect(p.access == .indexUnion([
            .index(name: "Employee_byDeptAge", equal: ["a", 3], range: nil, prefix: nil, reverse: false),
            .index(name: "Employee_byDeptAge", equal: ["b", 3], range: nil, prefix: nil, reverse: false),
        ]))
        #expect(p.residual == nil)
        #expect(p.explain == "UNION OF 2 SCANS OF INDEX Employee_byDeptAge: EQUAL ('a', 3) | EQUAL ('b', 3)")
    }

    @Test func anOrOfEqualitiesOnOneColumnIsAUnionThatCanDeliverOrder() throws {
        let p = try plan("dept == 'a' OR dept == 'b'", sort: [SortKey("dept", ascending: false), SortKey("age", ascending: false)], limit: 3)
        #expect(p.access == .indexUnion([
            .index(name: "Employee_byDeptAge", equal: ["b"], range: nil, prefix: nil, reverse: true),
            .index(name: "Employee_byDeptAge", equal: ["a"], range: nil, prefix: nil, reverse: true),
        ]))
        #expect(p.sortedByAccess && !p.limitPushedDown && p.residual == nil)
    }

    @Test func anOrAcrossFieldsStaysResidual() throws {
        let p = try plan("dept == 'a' OR age == 3")
        #expect(p.access == .fullScan)
        #expect(p.residual == .or([.compare(["dept"], .equal, .value("a")), .compare(["age"], .equal, .value(3))]))
        #expect(p.explain == "SCAN Employee, RESIDUAL dept == 'a' OR age == 3")
    }

    @Test func termsNoIndexCanAnswerStayResidual() throws {
        for format in ["name ==[c] 'x'", "name BEGINSWITH[c] 'A'", "name CONTAINS 'x'", "name LIKE 'a*'", "manager.name == 'x'",
                       "ANY reports.age > 3", "reports.@count > 1", "age != 3", "NOT (age == 3)", "age > 2.5", "age == salary",
                       "price == 5", "price > '1.5'", "age < 'x'"] {
            let p = try plan(format)
            #expect(p.access == .fullScan, "\(format)")
            #expect(p.residual == (try PredicateParser.parse(format)), "\(format)")
            #expect(!p.sortedByAccess || p.residual != nil, "\(format)")
        }
    }

    @Test func constantsConvertExactlyToTheColumnsType() throws {
        let p = try plan("age >= 30.0")
        #expect(p.access == .index(name: "Employee_byAgeDesc", equal: [], range: .atLeast(30), prefix: nil, reverse: false))
        let q = try plan("salary == 3")
        #expect(q.access == .index(name: "Employee_bySalary", equal: [.double(3)], range: nil, prefix: nil, reverse: false))
        // A lower-only double range stops below NaN, which the index sorts above +infinity.
        let r = try plan("salary > 5")
        #expect(r.access == .index(name: "Employee_bySalary", equal: [], range: ValueRange(lower: .double(5), lowerInclusive: false, upper: .double(.infinity)),
                                   prefix: nil, reverse: false))
    }

    @Test func nullTestsUseTheIndex() throws {
        #expect(try plan("salary == nil").access == .index(name: "Employee_bySalary", equal: [.null], range: nil, prefix: nil, reverse: false))
        let p = try plan("price != nil")
        #expect(p.access == .index(name: "Employee_byPrice", equal: [], range: ValueRange(lower: nil, upper: nil), prefix: nil, reverse: false))
        #expect(p.explain == "INDEX Employee_byPrice NOT NULL")
        let ref = RowReference(table: TableID(rawValue: 1), key: 7)
        #expect(try plan("manager == %@", [ref]).access
            == .index(name: "Employee_byManager", equal: [.reference(ref)], range: nil, prefix: nil, reverse: false))
    }

    @Test func aPrefixScanServesCaseSensitiveBeginsWith() throws {
        let p = try plan("name BEGINSWITH 'Ad' AND age > 3")
        #expect(p.access == .index(name: "Employee_byName", equal: [], range: nil, prefix: "Ad", reverse: false))
        #expect(p.residual == .compare(["age"], .greater, .value(3)))
        #expect(p.explain == "INDEX Employee_byName PREFIX 'Ad', RESIDUAL age > 3")
    }

    @Test func anIndexIsScannedOnlyForOrderWhenNothingFilters() throws {
        let p = try plan("age != 3", sort: [SortKey("age")], limit: 1)
        #expect(p.access == .index(name: "Employee_byAgeDesc", equal: [], range: nil, prefix: nil, reverse: true))
        #expect(p.residual == .compare(["age"], .notEqual, .value(3)))
        #expect(p.sortedByAccess && !p.limitPushedDown)
        #expect(p.explain == "INDEX Employee_byAgeDesc REVERSE ORDER SATISFIED, RESIDUAL age != 3")
    }

    @Test func ordersNoIndexDeliversAreSortedInMemory() throws {
        let p = try FetchPlanner.plan(predicate: nil, sort: [SortKey("name", comparison: .caseInsensitive)], limit: 3, offset: 0, schema: Self.schema)
        #expect(p.access == .fullScan && !p.sortedByAccess && !p.limitPushedDown)
        #expect(p.explain == "SCAN Employee SORT IN MEMORY BY name ASC CASEINSENSITIVE")
        #expect(try !plan("dept == 'a'", sort: [SortKey("age"), SortKey("name")]).sortedByAccess)
        #expect(try !plan("age > 3", sort: [SortKey("price")]).sortedByAccess)
        #expect(try plan("dept == 'a'", sort: [SortKey("dept"), SortKey("age")]).sortedByAccess)
    }

    @Test func anAlwaysFalsePredicateReadsNothing() throws {
        let p = try plan("FALSEPREDICATE OR (age > 3 AND FALSEPREDICATE)")
        #expect(p.access == .indexUnion([]))
        #expect(p.explain == "NOTHING (the predicate is always false)")
    }

    @Test func subEntityFetchesFilterOnTheEntityColumn() throws {
        var schema = Self.schema
        schema.entityColumn = 9
        schema.entityCodes = [3, 2]
        let p = try plan("age > 3", schema: schema)
        #expect(p.residual == .isIn([FetchSchema.entityKey], [2, 3]))
        #expect(p.explain == "INDEX Employee_byAgeDesc RANGE (3, +inf), RESIDUAL _entity IN {2, 3}")
        schema.indexes.append(PlannerIndex(name: "Employee_byEntityAge", on: FetchSchema.entityKey, "age"))
        let q = try plan("age == 3", schema: schema)
        #expect(q.access == .indexUnion([
            .index(name: "Employee_byEntityAge", equal: [2, 3], range: nil, prefix: nil, reverse: false),
            .index(name: "Employee_byEntityAge", equal: [3, 3], range: nil, prefix: nil, reverse: false),
        ]))
        #expect(q.residual == nil)
    }
}

@Suite struct FetchingSimplificationTests {
    @Test func simplificationFoldsConstantsAndDoubleNegations() {
        let a = PredicateNode.compare(["a"], .equal, .value(1))
        #expect(PredicateNode.and([.true, a, .and([a])]).simplified == .and([a, a]))
        #expect(PredicateNode.or([.false, .and([a, .false])]).simplified == .false)
        #expect(PredicateNode.not(.not(a)).simplified == a)
        #expect(PredicateNode.not(.or([a, .true])).simplified == .false)
        #expect(PredicateNode.any(["r"], .and([a, .false])).simplified == .false)
        #expect(PredicateNode.or([]).simplified == .false)
    }
}
