import Foundation
import Testing
@testable import Granary

/// Foundation also declares a `PredicateParseError`; ours is the module's.
private typealias PredicateParseError = Granary.PredicateParseError

/// Hostile nesting: format strings, trees built in code and `#Predicate`s built at run time that nest
/// past `PredicateNode.maximumDepth` are refused with typed errors instead of overflowing the stack, and
/// ones exactly at the limit still parse, plan, evaluate, print, compare and drop. Every case runs on an
/// 8 MB and on a 512 KB stack; a stack overflow would kill the test process.
@Suite struct FetchingDepthLimitTests {
    static let limit = PredicateNode.maximumDepth
    static let salaryIsOne = PredicateNode.compare(["salary"], .equal, .value(1))
    /// True for every employee (salaries are at least 0), so an AND with it changes nothing.
    static let always = PredicateNode.compare(["salary"], .greaterOrEqual, .value(0))
    /// False for every employee, so an OR with it changes nothing.
    static let never = PredicateNode.compare(["salary"], .less, .value(0))

    /// `levels` NOTs over `leaf`.
    static func negations(_ levels: Int, of leaf: PredicateNode = salaryIsOne) -> PredicateNode {
        var node = leaf
        for _ in 0..<levels { node = .not(node) }
        return node
    }

    /// `levels` alternating ANDs and ORs over `leaf`, each with a term that changes nothing, so the
    /// whole means `leaf`.
    static func alternating(_ levels: Int, of leaf: PredicateNode = salaryIsOne) -> PredicateNode {
        var node = leaf
        for level in 0..<levels { node = level.isMultiple(of: 2) ? .and([node, always]) : .or([node, never]) }
        return node
    }

    /// `levels` ANYs over the reports of reports …, ending at `leaf`.
    static func reportChain(_ levels: Int, of leaf: PredicateNode = salaryIsOne) -> PredicateNode {
        var node = leaf
        for _ in 0..<levels { node = .any(["reports"], node) }
        return node
    }

    /// Takes a tree apart one level at a time and leaves `.true` in its place. Swift destroys an indirect
    /// enum recursively, so dropping a tree 100,000 levels deep at once overflows the stack; `FetchPredicate`
    /// never builds one, but a `PredicateNode` built case by case can be.
    static func dismantle(_ node: inout PredicateNode) {
        var pending = [node]
        node = .true
        while let next = pending.popLast() {
            switch next {
            case .and(let xs), .or(let xs): pending.append(contentsOf: xs)
            case .not(let x), .any(_, let x): pending.append(x)
            default: break
            }
        }
    }

    /// The error a call throws, or `nil` when it returns.
    static func error(_ body: () throws -> Void) -> (any Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// An in-memory store with a chain of employees, each the manager of the next: E0 … E(count-1),
    /// salary 1 for even numbers and 2 for odd ones.
    static func makeStaff(count: Int = 2 * limit + 4, saved: Bool = true) throws -> ManagedObjectContext {
        let (_, context) = try makeStack()
        try context.performAndWait {
            var previous: Employee?
            for i in 0..<count {
                let e = Employee(context: context)
                e.name = "E\(i)"
                e.salary = i.isMultiple(of: 2) ? 1 : 2
                e.manager = previous
                previous = e
            }
            if saved { try context.save() }
        }
        return context
    }

    static func names(_ filter: PredicateNode, in context: ManagedObjectContext) throws -> Set<String> {
        try context.performAndWait {
            var request = FetchRequest<Employee>()
            request.filter = filter
            return Set(try context.fetch(request).map(\.name))
        }
    }

    static func evenNames(_ count: Int = 2 * limit + 4) -> Set<String> { Set(stride(from: 0, to: count, by: 2).map { "E\($0)" }) }

    // MARK: Format strings

    @Test(arguments: StackSize.all)
    func formatStringsNestedPastTheLimitAreRefusedWithTheOffset(stackSize: Int) throws {
        let n = 100_000
        let limit = Self.limit
        // Fewer SUBQUERYs and CASTs, whose text is longer: the lexer reads the whole string first,
        // slowly in a debug build, and 10,000 is as far past the limit for the parser.
        let subquery = "SUBQUERY(reports, $x, " + String(repeating: "SUBQUERY($x.reports, $x, ", count: n / 10)
        let cases: [(String, String, PredicateParseError)] = [
            ("unclosed parentheses", String(repeating: "(", count: n), .tooDeep(depth: limit + 1, offset: limit)),
            ("nested parentheses", String(repeating: "(", count: n) + "salary == 1" + String(repeating: ")", count: n),
             .tooDeep(depth: limit + 1, offset: limit)),
            ("NOTs", String(repeating: "NOT ", count: n) + "salary == 1", .tooDeep(depth: limit + 1, offset: 4 * (n - limit - 1))),
            ("!s", String(repeating: "!", count: n) + "salary == 1", .tooDeep(depth: limit + 1, offset: n - limit - 1)),
            ("SUBQUERYs", subquery, .tooDeep(depth: limit + 1, offset: 22 + 25 * (limit - 1))),
            ("nested lists", "salary IN " + String(repeating: "{", count: n / 2) + "1" + String(repeating: "}", count: n / 2),
             .syntax(message: "a list holds constants only", token: "{", offset: 11)),
            ("nested CASTs", "hired == " + String(repeating: "CAST(", count: n / 10) + "0" + String(repeating: ", \"NSDate\")", count: n / 10),
             .syntax(message: "CAST needs a constant", token: "CAST", offset: 14)),
        ]
        for (label, format, expected) in cases {
            let thrown = try onThread(stackSize: stackSize) { Self.error { _ = try PredicateParser.parse(format) } }
            #expect(thrown as? PredicateParseError == expected, "\(label)")
        }
    }

    @Test(arguments: StackSize.all)
    func aFormatStringWhoseTreeWouldPassTheLimitIsRefusedAtTheOperator(stackSize: Int) throws {
        // Each parenthesis holds an OR of an AND, two levels of tree for one of parentheses: the tree
        // passes the limit long before the parentheses do.
        let levels = Self.limit / 2 + 1
        let format = String(repeating: "salary == 1 OR salary == 2 AND (", count: levels) + "salary == 1" + String(repeating: ")", count: levels)
        let thrown = try onThread(stackSize: stackSize) { Self.error { _ = try PredicateParser.parse(format) } }
        guard case .tooDeep(let depth, let offset)? = thrown as? PredicateParseError else {
            Issue.record("expected tooDeep, got \(String(describing: thrown))")
            return
        }
        #expect(depth == Self.limit + 1)
        #expect(format.dropFirst(offset).hasPrefix("AND"))
    }

    @Test(arguments: StackSize.all)
    func formatStringsAtTheLimitParseAndReadBackTheirDescription(stackSize: Int) throws {
        let limit = Self.limit
        let formats = [
            String(repeating: "NOT ", count: limit) + "salary == 1",
            String(repeating: "(", count: limit) + "salary == 1" + String(repeating: ")", count: limit),
            Self.alternating(limit).description,
            Self.negations(limit).description,
            Self.reportChain(limit).description,
        ]
        let depths = try onThread(stackSize: stackSize) {
            try formats.map { format -> Int in
                let node = try PredicateParser.parse(format)
                #expect(try PredicateParser.parse(node.description) == node)
                return node.depth
            }
        }
        #expect(depths == [limit, 0, limit, limit, limit])
        // One more level is one too many.
        #expect(throws: PredicateParseError.tooDeep(depth: limit + 1, offset: 0)) {
            try PredicateParser.parse(String(repeating: "NOT ", count: limit + 1) + "salary == 1")
        }
        #expect(throws: PredicateParseError.tooDeep(depth: limit + 1, offset: limit)) {
            try PredicateParser.parse(String(repeating: "(", count: limit + 1) + "salary == 1" + String(repeating: ")", count: limit + 1))
        }
    }

    // MARK: Trees built in code

    @Test(arguments: StackSize.all)
    func treesAtTheLimitPlanEvaluatePrintCompareAndFetch(stackSize: Int) throws {
        let limit = Self.limit
        let saved = try Self.makeStaff()
        let pending = try Self.makeStaff(saved: false)
        let results = try onThread(stackSize: stackSize) { () -> [[Set<String>]] in
            try [Self.alternating(limit), Self.negations(limit), Self.reportChain(limit)].map { tree in
                // Equality, hashing, simplification and the description all walk the whole tree.
                #expect(tree == Self.alternating(limit) || tree == Self.negations(limit) || tree == Self.reportChain(limit))
                #expect(Set([tree, tree]).count == 1)
                _ = tree.simplified
                #expect(!tree.description.contains("…"))
                return [try Self.names(tree, in: saved), try Self.names(tree, in: pending)]
            }
        }
        let even = Self.evenNames()
        // An even number of NOTs over salary == 1; and E(k) reaches an employee with salary 1 through
        // `limit` levels of reports exactly when k + limit is before the end of the chain (the salary of
        // E(k + limit) is 1 when k is even, as the limit is even).
        let reachesDeepEnough = Set((0..<(2 * limit + 4 - limit)).filter { $0.isMultiple(of: 2) }.map { "E\($0)" })
        #expect(results == [[even, even], [even, even], [reachesDeepEnough, reachesDeepEnough]])
    }

    @Test(arguments: StackSize.all)
    func treesOneLevelPastTheLimitAreRefusedByEveryFetch(stackSize: Int) throws {
        let context = try Self.makeStaff()
        let depth = Self.limit + 1
        let thrown = try onThread(stackSize: stackSize) {
            [Self.alternating(depth), Self.negations(depth), Self.reportChain(depth)].map { tree in
                Self.error { _ = try Self.names(tree, in: context) }
            }
        }
        for error in thrown {
            #expect(error as? PredicateParseError == .treeTooDeep(depth: depth))
            #expect("\(error!)" == "the predicate nests more than \(Self.limit) levels of NOT, AND, OR and ANY; at most \(Self.limit) are allowed")
        }
    }

    @Test(arguments: StackSize.all)
    func treesNestedAHundredThousandDeepAreRefusedEverywhereWithoutRecursing(stackSize: Int) throws {
        let n = 100_000
        let context = try Self.makeStaff(count: 4)
        let schema = ObjectEvaluator.schema(for: try #require(context.model?.entity(named: "Employee")))
        // A row whose reports are itself, so that the evaluator follows ANY as deep as the tree goes.
        var values = [Value](repeating: .null, count: schema.fields.count)
        values[try #require(schema.field("reports")).column] = .references([RowReference(table: TableID(rawValue: 0), key: 1)])
        values[try #require(schema.field("salary")).column] = .int(1)
        let row = Row(values)
        let evaluator = RowEvaluator(schema: schema) { _, _ in (row, schema) }
        var sorted = FetchRequest<Employee>()
        sorted.sortKeys = [SortKey("name")]

        let outcome = try onThread(stackSize: stackSize) { () -> [String] in
            var seen: [String] = []
            let builders: [(Int, PredicateNode) -> PredicateNode] = [
                { Self.alternating($0, of: $1) }, { Self.negations($0, of: $1) }, { Self.reportChain($0, of: $1) },
            ]
            for make in builders {
                var tree = make(n, Self.salaryIsOne)
                var twin = make(n, Self.salaryIsOne)
                var other = make(n, Self.never)
                // Measuring, comparing, hashing, simplifying and describing never recurse past the limit.
                seen.append("depth \(tree.depth), equal \(tree == twin) \(tree == other) \(tree.hashValue == twin.hashValue)")
                var simplified = tree.simplified
                seen.append("described \(tree.description.contains("…"))")
                // Every way into fetching refuses it.
                var request = sorted
                request.filter = tree
                let attempts: [() throws -> Void] = [
                    { _ = try FetchPlanner.plan(predicate: tree, sort: [], limit: nil, offset: 0, schema: schema) },
                    { _ = try evaluator.matches(tree, row: row) },
                    { _ = try context.performAndWait { try context.fetch(request) } },
                    { _ = try context.performAndWait { try context.count(for: request) } },
                    { _ = try context.performAndWait { try context.explain(request) } },
                    { try context.performAndWait { try FetchedResultsController(fetchRequest: request, managedObjectContext: context).performFetch() } },
                    { _ = try context.performAndWait { try context.execute(BatchDeleteRequest(entityName: "Employee", predicate: tree)) } },
                    { _ = try context.performAndWait { try context.execute(BatchDeleteRequest(fetchRequest: request)) } },
                ]
                for attempt in attempts { seen.append(Self.error(attempt).map { "\($0)" } ?? "no error") }
                request.filter = nil
                Self.dismantle(&tree)
                Self.dismantle(&twin)
                Self.dismantle(&other)
                Self.dismantle(&simplified)
            }
            return seen
        }
        let refused = PredicateParseError.treeTooDeep(depth: n).description
        let perTree = ["depth \(n), equal true false true", "described true"] + Array(repeating: refused, count: 8)
        #expect(outcome == perTree + perTree + perTree)
        // Nothing was deleted.
        #expect(try Self.names(.true, in: context).count == 4)
    }

    // MARK: FetchPredicate

    @Test(arguments: StackSize.all)
    func fetchPredicateNegationsCancelOutAndNeverNest(stackSize: Int) throws {
        let context = try Self.makeStaff()
        let names = try onThread(stackSize: stackSize) { () -> [Set<String>] in
            var p = FetchPredicate.key("salary") == 1
            var flipped: [Set<String>] = []
            for i in 1...100_001 {
                p = !p
                #expect(p.node.depth == i % 2, "after \(i) NOTs")
                if i >= 100_000 { flipped.append(try Self.names(p.node, in: context)) }
            }
            return flipped
        }
        let all = Set((0..<(2 * Self.limit + 4)).map { "E\($0)" })
        #expect(names == [Self.evenNames(), all.subtracting(Self.evenNames())])
    }

    @Test(arguments: StackSize.all)
    func fetchPredicateOperatorsStopNestingOneLevelPastTheLimit(stackSize: Int) throws {
        let context = try Self.makeStaff()
        let limit = Self.limit
        let outcome = try onThread(stackSize: stackSize) { () -> [String] in
            var seen: [String] = []
            var p = FetchPredicate.key("salary") == 1
            let always = FetchPredicate.key("salary") >= 0
            let never = FetchPredicate.key("salary") < 0
            for level in 0..<100_000 {
                p = level.isMultiple(of: 2) ? p && always : p || never
                if level == limit - 1 { seen.append("at the limit: depth \(p.node.depth), \(try Self.names(p.node, in: context) == Self.evenNames())") }
            }
            seen.append("past it: depth \(p.node.depth), \(p.isTooDeep)")
            seen.append("\(Self.error { _ = try Self.names(p.node, in: context) }!)")
            var q = FetchPredicate.key("salary") == 1
            for _ in 0..<100_000 { q = FetchPredicate.key("reports").any(q) }
            seen.append("ANY: depth \(q.node.depth), \(q.isTooDeep)")
            seen.append("\(q == q) \(q.description.hasSuffix(".@count > 0"))")
            return seen
            // p and q are dropped here, on this thread: they are only limit + 1 deep.
        }
        #expect(outcome == [
            "at the limit: depth \(limit), true",
            "past it: depth \(limit + 1), true",
            PredicateParseError.treeTooDeep(depth: limit + 1).description,
            "ANY: depth \(limit + 1), true",
            "true true",
        ])
    }

    // MARK: #Predicate built at run time

    /// `levels` negations of a constant, or conjunctions of one with `true` (the costliest to lower, as
    /// each level's value holds all the levels below it), built as `#Predicate` builds them but at run
    /// time, through `any StandardPredicateExpression`. Constants keep the whole expression trivially
    /// destructible: Foundation destroys nested expressions recursively.
    static func nestedConstant(_ levels: Int, _ constant: Bool, conjunctions: Bool = false) -> Predicate<Employee> {
        func negation<E: StandardPredicateExpression<Bool>>(_ e: E) -> any StandardPredicateExpression<Bool> { PredicateExpressions.Negation(e) }
        func conjunction<E: StandardPredicateExpression<Bool>>(_ e: E) -> any StandardPredicateExpression<Bool> {
            PredicateExpressions.Conjunction(lhs: e, rhs: PredicateExpressions.Value(true))
        }
        var expression: any StandardPredicateExpression<Bool> = PredicateExpressions.Value(constant)
        for _ in 0..<levels { expression = conjunctions ? conjunction(expression) : negation(expression) }
        let built = expression
        return Predicate<Employee> { _ in built }
    }

    @Test(arguments: StackSize.all)
    func runTimePredicatesNestingPastTheLimitAreRefusedNotEvaluatedOnObjects(stackSize: Int) throws {
        let context = try Self.makeStaff(count: 4)
        let limit = Self.limit
        let outcome = try onThread(stackSize: stackSize) { () -> [String] in
            // The constant and `limit - 1` levels are `limit` expressions deep: an odd number of NOTs of
            // false, or ANDs of true with true. Far past the limit, 2,000 levels: each level is a new
            // generic type whose metadata names every level below it, so 100,000 took 100 s to build.
            [(limit - 1, false), (limit - 1, true), (limit, false), (limit, true), (2_000, false)].map { levels, conjunctions in
                let predicate = Self.nestedConstant(levels, conjunctions, conjunctions: conjunctions)
                let lowered = PredicateNode.lower(predicate).map { "\($0.depth)" } ?? "nil"
                do {
                    return "\(lowered) \(try context.performAndWait { try context.fetch(FetchRequest<Employee>(predicate: predicate)) }.count)"
                } catch {
                    return "\(lowered) \(error)"
                }
            }
        }
        let refused = PredicateParseError.treeTooDeep(depth: limit + 1).description
        #expect(outcome == ["\(limit - 1) 4", "0 4", "nil \(refused)", "nil \(refused)", "nil \(refused)"])
    }
}
