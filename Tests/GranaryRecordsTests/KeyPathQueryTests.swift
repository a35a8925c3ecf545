import Foundation
import Granary
import GranaryRecords
import PropertyBased
import Testing

/// A customer as plain values, for the reference filter.
private struct CustomerRow {
    var uuid: String
    var name: String
    var email: String?
    var orders: Int
    var birth: Date
}

private let names = ["Ada", "ada", "Ádám", "Bob", "bobby", "Carla", "Zoë", "zoe", "Émile", "anna"]
private let base = Date(timeIntervalSinceReferenceDate: 0)

private func insertUsers(_ context: ManagedObjectContext, _ rows: [CustomerRow]) throws {
    try context.performAndWait {
        for r in rows {
            let u = Customer(context: context)
            u.uuid = r.uuid
            u.name = r.name
            u.email = r.email
            u.numberOfOrders = r.orders
            u.birthDate = r.birth
        }
        try context.save()
    }
}

private func fetchIDs(_ context: ManagedObjectContext, _ p: ComparisonPredicate<Customer>) throws -> Set<String> {
    try context.performAndWait {
        Set(try context.fetch(FetchRequest<Customer>(p, in: context)).map(\.uuid))
    }
}

private func fetchIDs(_ context: ManagedObjectContext, format: String, _ args: [Any?] = []) throws -> Set<String> {
    try context.performAndWait {
        var r = FetchRequest<Customer>(entityName: "Customer")
        r.filter = try PredicateParser.parse(format, arguments: args)
        return Set(try context.fetch(r).map(\.uuid))
    }
}

/// A random predicate over non-optional attributes (and null tests on `email`), with its reference.
private func randomPredicate(_ g: inout SplitMixGenerator, depth: Int = 0) -> (ComparisonPredicate<Customer>, (CustomerRow) -> Bool) {
    let pick = Int.random(in: 0..<(depth < 3 ? 16 : 12), using: &g)
    let n = Int.random(in: 0...5, using: &g)
    let s = names.randomElement(using: &g)!
    let prefix = String(s.prefix(Int.random(in: 1...2, using: &g)))
    switch pick {
    case 0: return (\Customer.numberOfOrders == n, { $0.orders == n })
    case 1: return (\Customer.numberOfOrders != n, { $0.orders != n })
    case 2: return (\Customer.numberOfOrders < n, { $0.orders < n })
    case 3: return (\Customer.numberOfOrders <= n, { $0.orders <= n })
    case 4: return (\Customer.numberOfOrders > n, { $0.orders > n })
    case 5: return (\Customer.numberOfOrders >= n, { $0.orders >= n })
    case 6: return (\Customer.name == s, { $0.name == s })
    case 7:
        let set = Set((0..<3).map { _ in names.randomElement(using: &g)! })
        return (\Customer.name === set, { set.contains($0.name) })
    case 8:
        return Bool.random(using: &g) ? (\Customer.email == nil, { $0.email == nil }) : (\Customer.email != nil, { $0.email != nil })
    case 9: return (.beginsWith(\Customer.name, prefix), { $0.name.hasPrefix(prefix) })
    case 10:
        return (.contains(\Customer.name, prefix, options: [.caseInsensitive, .diacriticInsensitive]), {
            $0.name.range(of: prefix, options: [.caseInsensitive, .diacriticInsensitive]) != nil
        })
    case 11:
        let d = base.addingTimeInterval(Double(n) * 86_400)
        return (\Customer.birthDate > d, { $0.birth > d })
    case 12, 13:
        let (a, fa) = randomPredicate(&g, depth: depth + 1)
        let (b, fb) = randomPredicate(&g, depth: depth + 1)
        return (a && b, { fa($0) && fb($0) })
    case 14:
        let (a, fa) = randomPredicate(&g, depth: depth + 1)
        let (b, fb) = randomPredicate(&g, depth: depth + 1)
        return (a || b, { fa($0) || fb($0) })
    default:
        let (a, fa) = randomPredicate(&g, depth: depth + 1)
        return (!a, { !fa($0) })
    }
}

private func randomRows(_ g: inout SplitMixGenerator, count: Int) -> [CustomerRow] {
    (0..<count).map { i in
        CustomerRow(uuid: "u\(i)", name: names.randomElement(using: &g)!,
                email: Bool.random(using: &g) ? "u\(i)@x.io" : nil,
                orders: Int.random(in: 0...5, using: &g),
                birth: base.addingTimeInterval(Double(Int.random(in: 0...5, using: &g)) * 86_400))
    }
}

@Suite struct KeyPathQueryTests {
    @Test func randomKeyPathPredicatesMatchAReferenceFilterOnADurableStore() async throws {
        let (_, context) = try makeQueryStack()
        var g = SplitMixGenerator(seed: 20)
        let rows = randomRows(&g, count: 60)
        try insertUsers(context, rows)
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var g = SplitMixGenerator(seed: seed)
                let (p, reference) = randomPredicate(&g)
                let expected = Set(rows.filter(reference).map(\.uuid))
                let got = try fetchIDs(context, p)
                #expect(got == expected, "seed \(seed)")
            } catch {
                Issue.record("\(seed): \(error)")
            }
        }
    }

    @Test func randomClausesSortAsAReferenceSort() async throws {
        let (_, context) = try makeQueryStack()
        var g = SplitMixGenerator(seed: 11)
        let rows = randomRows(&g, count: 50)
        try insertUsers(context, rows)
        typealias Level = (ComparisonClause<Customer>, (CustomerRow, CustomerRow) -> Bool?)
        func level<V: Comparable>(_ kp: KeyPath<Customer, V>, _ value: @escaping (CustomerRow) -> V, ascending: Bool) -> Level {
            (ascending ? .ascending(kp) : .descending(kp), { a, b in
                let (x, y) = (value(a), value(b))
                return x == y ? nil : (ascending ? x < y : x > y)
            })
        }
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var g = SplitMixGenerator(seed: seed)
                var levels: [Level] = []
                for _ in 0..<Int.random(in: 1...3, using: &g) {
                    let up = Bool.random(using: &g)
                    switch Int.random(in: 0...2, using: &g) {
                    case 0: levels.append(level(\Customer.name, \.name, ascending: up))
                    case 1: levels.append(level(\Customer.numberOfOrders, \.orders, ascending: up))
                    default: levels.append(level(\Customer.birthDate, \.birth, ascending: up))
                    }
                }
                levels.append(level(\Customer.uuid, \.uuid, ascending: true))    // a total order
                let expected = rows.sorted { a, b in
                    for (_, before) in levels { if let answer = before(a, b) { return answer } }
                    return false
                }.map(\.uuid)
                let got = try context.performAndWait {
                    try context.fetch(FetchRequest<Customer>(nil, sortedBy: levels.map(\.0), in: context)).map(\.uuid)
                }
                #expect(got == expected, "seed \(seed)")
            } catch {
                Issue.record("\(seed): \(error)")
            }
        }
    }

    @Test func eachOperatorGivesTheRowsOfItsFormatString() throws {
        let (_, context) = try makeQueryStack()
        var g = SplitMixGenerator(seed: 7)
        try insertUsers(context, randomRows(&g, count: 40))
        let cases: [(ComparisonPredicate<Customer>, String, [Any?])] = [
            (\Customer.uuid == "u3" && \Customer.numberOfOrders != 0, "uuid == %@ AND numberOfOrders != 0", ["u3"]),
            (\Customer.numberOfOrders < 2, "numberOfOrders < 2", []),
            (\Customer.numberOfOrders <= 2, "numberOfOrders <= 2", []),
            (\Customer.numberOfOrders > 2, "numberOfOrders > 2", []),
            (\Customer.numberOfOrders >= 2, "numberOfOrders >= 2", []),
            (\Customer.numberOfOrders == 1 || \Customer.name == "Bob", "numberOfOrders == 1 OR name == 'Bob'", []),
            (!(\Customer.name == "Bob"), "NOT name == 'Bob'", []),
            (\Customer.uuid === ["u1", "u2", "u30"], "uuid IN %@", [["u1", "u2", "u30"]]),
            (\Customer.email == nil, "email == nil", []),
            (\Customer.email != nil, "email != nil", []),
            (.beginsWith(\Customer.name, "A"), "name BEGINSWITH 'A'", []),
            (.beginsWith(\Customer.name, "a", options: .caseInsensitive), "name BEGINSWITH[c] 'a'", []),
            (.endsWith(\Customer.name, "a"), "name ENDSWITH 'a'", []),
            (.contains(\Customer.name, "o"), "name CONTAINS 'o'", []),
            (.contains(\Customer.name, "e", options: [.caseInsensitive, .diacriticInsensitive]), "name CONTAINS[cd] 'e'", []),
            (.like(\Customer.name, "?da*"), "name LIKE '?da*'", []),
            (\Customer.email < nil, "FALSEPREDICATE", []),    // an order against null holds for nothing
            (\Customer.email == "u3@x.io", "email == 'u3@x.io'", []),
            (.true, "TRUEPREDICATE", []),
            (.false, "FALSEPREDICATE", []),
        ]
        for (p, format, args) in cases {
            #expect(try fetchIDs(context, p) == fetchIDs(context, format: format, args), "\(format)")
        }
        #expect(try fetchIDs(context, .true).count == 40)
        let mixed = ComparisonPredicate<Customer>(FetchPredicate.key("numberOfOrders") > 1) && .beginsWith(\Customer.name, "A")
        #expect(try fetchIDs(context, mixed) == fetchIDs(context, format: "numberOfOrders > 1 AND name BEGINSWITH 'A'"))
        let parsed = ComparisonPredicate<Customer>(FetchPredicate(try PredicateParser.parse("name ENDSWITH 'a'")))
        #expect(try fetchIDs(context, parsed || \Customer.numberOfOrders == 0) == fetchIDs(context, format: "name ENDSWITH 'a' OR numberOfOrders == 0"))
    }

    @Test func predicatesNeedNoTypeAnnotation() throws {
        let (_, context) = try makeQueryStack()
        try insertUsers(context, [CustomerRow(uuid: "1", name: "Ada", email: nil, orders: 2, birth: base),
                                  CustomerRow(uuid: "2", name: "Bob", email: "b@x.io", orders: 0, birth: base)])
        let noEmail: ComparisonPredicate<Customer> = \Customer.email == nil    // Swift's Optional == nil wins without the type
        let busy = \Customer.numberOfOrders > 1
        let named = \Customer.name == "Bob"
        #expect(try fetchIDs(context, noEmail) == ["1"])
        #expect(try fetchIDs(context, busy && noEmail) == ["1"])
        #expect(try fetchIDs(context, named || busy) == ["1", "2"])
    }

    @Test func keyPathsGiveTheRowsOfTheSamePredicateMacro() throws {
        let (_, context) = try makeQueryStack()
        var g = SplitMixGenerator(seed: 5)
        try insertUsers(context, randomRows(&g, count: 40))
        func macro(_ p: Predicate<Customer>) throws -> Set<String> {
            try context.performAndWait { Set(try context.fetch(FetchRequest<Customer>(predicate: p)).map(\.uuid)) }
        }
        #expect(try fetchIDs(context, \Customer.numberOfOrders > 2 && \Customer.name != "Bob")
                == macro(#Predicate { $0.numberOfOrders > 2 && $0.name != "Bob" }))
        #expect(try fetchIDs(context, \Customer.numberOfOrders <= 1 || !(\Customer.email == nil))
                == macro(#Predicate { $0.numberOfOrders <= 1 || !($0.email == nil) }))
        #expect(try fetchIDs(context, .beginsWith(\Customer.name, "a")) == macro(#Predicate { $0.name.starts(with: "a") }))
    }

    @Test func toOnePathsAndObjectsCompare() throws {
        let (_, context) = try makeQueryStack()
        try context.performAndWait {
            let ada = Customer(context: context)
            ada.uuid = "1"; ada.name = "Ada"; ada.birthDate = base
            let bob = Customer(context: context)
            bob.uuid = "2"; bob.name = "Bob"; bob.birthDate = base
            for (t, u) in [("a", ada), ("b", bob), ("c", nil)] as [(String, Customer?)] {
                let o = Purchase(context: context)
                o.title = t
                o.user = u
            }
            try context.save()
            func titles(_ p: ComparisonPredicate<Purchase>) throws -> [String] {
                try context.fetch(FetchRequest<Purchase>(p, sortedBy: [.ascending(\Purchase.title)], in: context)).map(\.title)
            }
            #expect(try titles(\Purchase.user?.name == "Ada") == ["a"])
            #expect(try titles(.beginsWith(\Purchase.user?.name, "B")) == ["b"])
            #expect(try titles(\Purchase.user == bob) == ["b"])
            #expect(try titles(\Purchase.user == nil) == ["c"])
            #expect(try titles(\Purchase.user != nil) == ["a", "b"])
            #expect(try titles(\Purchase.user != ada) == ["b", "c"])
        }
    }

    @Test func clausesSortAsSortKeys() throws {
        let (_, context) = try makeQueryStack()
        var g = SplitMixGenerator(seed: 3)
        try insertUsers(context, randomRows(&g, count: 30))
        try context.performAndWait {
            let byClause = try context.fetch(FetchRequest<Customer>(nil, sortedBy: [.descending(\Customer.birthDate), .ascending(\Customer.uuid)], in: context))
            var r = FetchRequest<Customer>(entityName: "Customer")
            r.sortKeys = [SortKey("birthDate", ascending: false), SortKey("uuid")]
            #expect(byClause.map(\.uuid) == (try context.fetch(r)).map(\.uuid))
            let byDescriptor = try context.fetch(FetchRequest<Customer>(sortBy: [SortDescriptor(\Customer.birthDate, order: .reverse), SortDescriptor(\Customer.uuid)]))
            #expect(byClause.map(\.uuid) == byDescriptor.map(\.uuid))
            let dates = byClause.map(\.birthDate)
            #expect(dates == dates.sorted(by: >))
        }
    }

    @Test func anIndexedEqualityIsPlannedOnTheIndex() throws {
        let (_, context) = try makeQueryStack()
        try context.performAndWait {
            let keyPath = try context.explain(FetchRequest<Customer>(\Customer.name == "Ada", in: context))
            var request = FetchRequest<Customer>(entityName: "Customer")
            request.filter = try PredicateParser.parse("name == 'Ada'")
            let format = try context.explain(request)
            #expect(keyPath.explain.hasPrefix("INDEX Customer_byName EQUAL"), "\(keyPath.explain)")
            #expect(keyPath.explain == format.explain)
            let sorted = try context.explain(FetchRequest<Customer>(nil, sortedBy: [.ascending(\Customer.name)], in: context))
            #expect(sorted.explain.contains("INDEX Customer_byName") && sorted.explain.contains("ORDER SATISFIED"), "\(sorted.explain)")
            let unique = try context.explain(FetchRequest<Customer>(\Customer.uuid === ["a", "b"], in: context))
            #expect(unique.explain.contains("INDEX Customer_unique_uuid"), "\(unique.explain)")
        }
    }

    @Test func aKeyPathThatIsNotStoredIsRefusedByName() throws {
        let (_, context) = try makeQueryStack()
        context.performAndWait {
            #expect {
                _ = try FetchRequest<Customer>(\Customer.greeting == "hello", in: context)
            } throws: { error in
                guard case KeyPathQueryError.notAStoredProperty(let entity, let keyPath) = error else { return false }
                // Swift prints a computed key path without its name, as `\Customer.<computed 0x… (String)>`.
                return entity == "Customer" && keyPath.hasPrefix("\\Customer.<computed")
            }
            #expect {
                _ = try FetchRequest<Customer>(\Customer.scratch == 1, in: context)
            } throws: { error in
                error as? KeyPathQueryError == .notAStoredProperty(entity: "Customer", keyPath: "\\Customer.scratch")
            }
            #expect(throws: KeyPathQueryError.self) {
                _ = try FetchRequest<Customer>(nil, sortedBy: [.ascending(\Customer.orders.count)], in: context)
            }
        }
    }
}
