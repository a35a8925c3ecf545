import Foundation
import PropertyBased
import Testing
@testable import Granary

/// Random purchases (integers, doubles, nils, strings to group by) and random aggregate fetches (a
/// function of a key path, grouped by nothing, one or two key paths, a predicate, a having threshold):
/// each result must be what a brute-force computation over the saved objects gives, before the
/// context has pending changes, while it has them (the store's answer does not move), and after they
/// are saved.
@Suite struct AggregateFetchPropertyTests {
    /// SplitMix64, so that one seed reproduces a whole case.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
    }

    static let categories: [String?] = [nil, "", "a", "ab", "b", "B", "é"]

    static func randomCategory(_ r: inout Random) -> String? { r.pick(categories) }
    static func randomAmount(_ r: inout Random) -> Int64? {
        switch r.int(8) {
        case 0: return nil
        // Large enough for a sum to wrap, as a derived @sum does.
        case 1: return r.pick([Int64.max / 2, Int64.min / 2 + 1])
        default: return Int64(r.int(2_001)) - 1_000
        }
    }
    /// Multiples of 1/8 in a small range: their sums are exact in any order, so a sum read in index
    /// order equals the brute force's.
    static func randomPrice(_ r: inout Random) -> Double? { r.int(5) == 0 ? nil : Double(r.int(2_001) - 1_000) / 8 }

    /// One random request and what the brute force needs to know about it.
    struct Case: CustomStringConvertible {
        var function: ExpressionDescription.Function
        var keyPath: String?
        var groupBy: [String]
        var predicate: String?
        var havingAtLeast: Int?
        var distinctCategories = false

        var description: String {
            distinctCategories ? "distinct categories where \(predicate ?? "-")"
                : "\(function.rawValue):(\(keyPath ?? "SELF")) group by \(groupBy) where \(predicate ?? "-") having n >= \(havingAtLeast.map(String.init) ?? "-")"
        }

        var request: FetchRequest<Purchase> {
            get throws {
                var request = FetchRequest<Purchase>()
                if let predicate { request.filter = try PredicateParser.parse(predicate) }
                if distinctCategories {
                    request.propertiesToFetch = ["category"]
                    request.returnsDistinctResults = true
                    return request
                }
                request.propertiesToFetch = groupBy.map(FetchProperty.property) + [
                    .expression(ExpressionDescription(name: "value", expression: .function(function, keyPath: keyPath))),
                    .expression(ExpressionDescription(name: "n", expression: .count())),
                ]
                request.propertiesToGroupBy = groupBy
                if let havingAtLeast { request.havingPredicate = try PredicateParser.parseHaving("$n >= %d", arguments: [havingAtLeast]) }
                return request
            }
        }
    }

    static func randomCase(_ r: inout Random) -> Case {
        let function = r.pick(ExpressionDescription.Function.allCases)
        let keyPath: String?
        switch function {
        case .sum, .average: keyPath = r.pick(["amount", "price", "quantity"])
        case .min, .max: keyPath = r.pick(["amount", "price", "quantity", "category"])
        case .count: keyPath = r.pick([nil, "amount", "price", "category"])
        }
        let groupBy = r.pick([[], ["category"], ["category"], ["category", "quantity"], ["quantity"]])
        let predicate = r.pick([nil, nil, "amount > \(r.int(1_000) - 500)", "category IN {'a', 'b', ''}", "price < \(r.int(200) - 100)",
                                "amount == nil", "category == 'a' AND quantity >= 1", "category BEGINSWITH 'a'"])
        let having = groupBy.isEmpty || r.int(2) == 0 ? nil : 1 + r.int(4)
        return Case(function: function, keyPath: keyPath, groupBy: groupBy, predicate: predicate, havingAtLeast: having,
                    distinctCategories: r.int(10) == 0)
    }

    // MARK: Brute force

    /// The plain values of one saved purchase.
    struct Item {
        var category: String?
        var amount: Int64?
        var price: Double?
        var quantity: Int16

        init(_ p: Purchase) {
            category = p.category
            amount = p.amount
            price = p.price
            quantity = p.quantity
        }

        func value(_ keyPath: String?) -> Any? {
            switch keyPath {
            case "category": return category
            case "amount": return amount
            case "price": return price
            case "quantity": return quantity
            default: return nil
            }
        }

        /// The predicates of `randomCase`, under the store's null rules (a comparison with nil is false).
        func matches(_ predicate: String?) -> Bool {
            guard let predicate else { return true }
            if predicate == "amount == nil" { return amount == nil }
            if predicate == "category IN {'a', 'b', ''}" { return ["a", "b", ""].contains(category) }
            if predicate == "category == 'a' AND quantity >= 1" { return category == "a" && quantity >= 1 }
            if predicate == "category BEGINSWITH 'a'" { return category?.hasPrefix("a") ?? false }
            let parts = predicate.split(separator: " ")
            let bound = Double(parts[2])!
            if parts[0] == "amount" { return amount.map { Double($0) > bound } ?? false }
            return price.map { $0 < bound } ?? false
        }
    }

    static func isLess(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case let (x as Int64, y as Int64): return x < y
        case let (x as Double, y as Double): return x < y
        case let (x as Int16, y as Int16): return x < y
        case let (x as String, y as String): return Array(x.utf8).lexicographicallyPrecedes(y.utf8)
        default: return false
        }
    }

    /// The dictionaries the case should return, by the description of their grouped values.
    static func expected(_ c: Case, _ items: [Item]) -> [String: [String: Any]] {
        let matching = items.filter { $0.matches(c.predicate) }
        if c.distinctCategories {
            var out: [String: [String: Any]] = [:]
            for item in matching { out[String(describing: item.category)] = item.category.map { ["category": $0] } ?? [:] }
            return out
        }
        var groups: [String: [Item]] = [:]
        func key(_ item: Item) -> String { c.groupBy.map { String(describing: item.value($0)) }.joined(separator: "|") }
        for item in matching { groups[key(item), default: []].append(item) }
        if c.groupBy.isEmpty && groups.isEmpty { groups[""] = [] }
        var out: [String: [String: Any]] = [:]
        for (groupKey, members) in groups {
            if let least = c.havingAtLeast, members.count < least { continue }
            var row: [String: Any] = ["n": Int64(members.count)]
            for name in c.groupBy { if let v = members[0].value(name) { row[name] = v } }
            let values = members.compactMap { $0.value(c.keyPath) }
            switch c.function {
            case .count: row["value"] = Int64(c.keyPath == nil ? members.count : values.count)
            case .sum, .average:
                if c.keyPath == "price" {
                    let sum = values.reduce(0.0) { $0 + ($1 as! Double) }
                    row["value"] = c.function == .sum ? sum : values.isEmpty ? nil : sum / Double(values.count)
                } else {
                    let sum = values.reduce(Int64(0)) { $0 &+ (($1 as? Int64) ?? Int64($1 as! Int16)) }
                    row["value"] = c.function == .sum ? sum : values.isEmpty ? nil : Double(sum) / Double(values.count)
                }
            case .min: row["value"] = values.min(by: isLess)
            case .max: row["value"] = values.max(by: isLess)
            }
            out[groupKey] = row
        }
        return out
    }

    static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x as Int64, y as Int64): return x == y
        case let (x as Int16, y as Int16): return x == y
        case let (x as Double, y as Double): return x == y
        case let (x as String, y as String): return x == y
        default: return false
        }
    }

    /// Compares the store's answer to the brute force's, order aside (no sort was asked for).
    static func check(_ c: Case, _ context: ManagedObjectContext, against items: [Item], _ stage: String) throws {
        let rows = try context.fetchDictionaries(try c.request)
        let expected = expected(c, items)
        let keys = c.distinctCategories ? ["category"] : c.groupBy
        var actual: [String: [String: Any]] = [:]
        for row in rows {
            let key = c.distinctCategories ? String(describing: row["category"] as? String)
                : keys.map { name in String(describing: row[name].map { $0 as Any }) }.joined(separator: "|")
            #expect(actual[key] == nil, "\(stage) \(c): group \(key) twice")
            actual[key] = row
        }
        // Group keys are described alike on both sides only when they are present, so compare by
        // each expected row's own values.
        #expect(rows.count == expected.count, "\(stage) \(c): \(rows.count) dictionaries, expected \(expected.count): \(rows) against \(expected)")
        for want in expected.values {
            let match = rows.first { row in keys.allSatisfy { same(row[$0], want[$0]) } }
            guard let match else {
                Issue.record("\(stage) \(c): no dictionary for \(want) in \(rows)")
                continue
            }
            #expect(Set(match.keys) == Set(want.keys), "\(stage) \(c): keys \(match.keys.sorted()) against \(want.keys.sorted())")
            for (k, v) in want where !same(match[k], v) {
                Issue.record("\(stage) \(c): \(k) is \(String(describing: match[k])) (\(match[k].map { type(of: $0) } as Any)), expected \(v) (\(type(of: v)))")
            }
        }
    }

    static func run(seed: Int) throws {
        var r = Random(state: UInt64(truncatingIfNeeded: seed))
        let (coordinator, context) = try makeAggregateStack(r.int(3) == 0 ? .durable : .inMemory)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        func saved() throws -> [Item] {
            try reader.performAndWait {
                reader.reset()
                return try reader.fetch(FetchRequest<Purchase>()).map(Item.init)
            }
        }
        let cases = (0..<6).map { _ in randomCase(&r) }
        try context.performAndWait {
            for _ in 0..<r.int(40) {
                makePurchase(context, randomCategory(&r), amount: randomAmount(&r), price: randomPrice(&r), quantity: Int16(r.int(4)))
            }
            try context.save()
            let before = try saved()
            for c in cases { try check(c, context, against: before, "saved") }

            // Unsaved inserts, edits and deletes: the answer is still the store's.
            for _ in 0..<(1 + r.int(6)) {
                let existing = try context.fetch(FetchRequest<Purchase>())
                switch r.int(3) {
                case 0: makePurchase(context, randomCategory(&r), amount: randomAmount(&r), price: randomPrice(&r), quantity: Int16(r.int(4)))
                case 1 where !existing.isEmpty:
                    let p = r.pick(existing)
                    p.amount = randomAmount(&r)
                    p.category = randomCategory(&r)
                    p.price = randomPrice(&r)
                default:
                    if !existing.isEmpty { context.delete(r.pick(existing)) }
                }
            }
            for c in cases { try check(c, context, against: before, "pending") }
            try context.save()
            let after = try saved()
            for c in cases { try check(c, context, against: after, "saved again") }
        }
    }

    @Test func aggregatesEqualABruteForceComputationOverTheObjects() async {
        if let seed = ProcessInfo.processInfo.environment["AGGREGATE_SEED"].flatMap(Int.init) {
            #expect(throws: Never.self) { try Self.run(seed: seed) }
            return
        }
        await propertyCheck(count: 60, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self, "seed \(seed)") { try Self.run(seed: seed) }
        }
    }
}
