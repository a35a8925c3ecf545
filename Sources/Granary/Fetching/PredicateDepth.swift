extension PredicateNode {
    /// The deepest nesting of predicates fetching accepts: levels of NOT, AND, OR and ANY in a tree;
    /// of parentheses, NOT, AND, OR, ANY and SUBQUERY in a format string; and of expressions (every
    /// operator, key path and constant) in a `#Predicate`.
    ///
    /// `#Predicate` lowering, simplification, the planner, the evaluators and `description` recurse
    /// once per level, so an unbounded depth would let hostile input overflow the stack and kill the
    /// process. The bound is what the costliest of them, `#Predicate` lowering (about 2 KB of stack a
    /// level in a debug build), can walk on a 512 KB secondary-thread stack with room to spare; 128 is
    /// also serde_json's default recursion limit, and hand-written predicates stay far below it.
    /// Deeper predicates are refused with `PredicateParseError.tooDeep` (format strings) or
    /// `.treeTooDeep` (predicates built in code).
    public static let maximumDepth = 128

    /// How many levels of NOT, AND, OR and ANY nest in the predicate: 0 for a comparison, 1 for a
    /// conjunction of comparisons.
    ///
    /// Measured with a list of the nodes still to visit, not by recursion, so any tree can be measured.
    public var depth: Int {
        var deepest = 0
        var pending: [(node: PredicateNode, level: Int)] = [(self, 0)]
        while let (node, level) = pending.popLast() {
            switch node {
            case .and(let xs), .or(let xs):
                deepest = max(deepest, level + 1)
                for x in xs where !x.isSimple { pending.append((x, level + 1)) }
            case .not(let x), .any(_, let x):
                deepest = max(deepest, level + 1)
                if !x.isSimple { pending.append((x, level + 1)) }
            default:
                break
            }
        }
        return deepest
    }

    /// `min(depth, cap)`, by a recursion no deeper than `cap` that allocates nothing: the check every
    /// fetch makes of its predicate.
    func depth(cappedAt cap: Int) -> Int {
        guard cap > 0 else { return 0 }
        switch self {
        case .and(let xs), .or(let xs):
            var deepest = 0
            for x in xs where !x.isSimple {
                deepest = max(deepest, x.depth(cappedAt: cap - 1))
                if deepest == cap - 1 { break }
            }
            return deepest + 1
        case .not(let x), .any(_, let x):
            return x.isSimple ? 1 : x.depth(cappedAt: cap - 1) + 1
        default:
            return 0
        }
    }

    /// What the planner and the evaluators accept: one level more than `maximumDepth`, for the
    /// conjunction a fetch adds when it joins its `#Predicate`, its filter and its entity test.
    static let maximumJoinedDepth = maximumDepth + 1

    /// Throws unless the predicate nests at most `limit` levels; every entry to fetching that takes a
    /// tree built in code calls it before walking the tree.
    ///
    /// - Throws: `PredicateParseError.treeTooDeep` with the predicate's depth.
    func checkDepth(limit: Int = maximumDepth) throws(PredicateParseError) {
        guard depth(cappedAt: limit + 1) <= limit else { throw .treeTooDeep(depth: depth) }
    }

}
