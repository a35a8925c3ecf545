import Foundation
import GranaryStorage

/// Reads Core Data's `NSPredicate(format:)` syntax into a `PredicateNode`, so that ported code keeps its
/// predicate strings.
///
/// Supported: `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`, `FALSEPREDICATE`;
/// comparisons `==`/`=`, `!=`/`<>`, `<`, `<=`/`=<`, `>`, `>=`/`=>` between a key path and a constant or
/// another key path (either side); `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, each with
/// `[c]`, `[d]` or `[cd]` (which also apply to `==` and `!=` on strings); `IN` with `{…}` or an array
/// argument; `BETWEEN {lo, hi}`; `ANY`/`SOME`/`ALL`/`NONE` over a to-many key path (`ANY reports.age > 30`);
/// `key.@count`; `SUBQUERY(key, $x, predicate).@count > 0` (and `== 0`); `nil`/`NULL`, `YES`/`NO`/
/// `TRUE`/`FALSE`, numbers, quoted strings, `CAST(x, "NSDate")` (also `"UUID"`, `"NSData"` hex,
/// `"RowReference"` `'table/key'`, `"Double"`); placeholders `%@` (a value or a collection), `%K` (a key
/// path), `%d`/`%i`/`%ld` (an integer), `%f`/`%lf` (a double). Keywords are case-insensitive; prefix
/// a key named like a keyword with `#`.
///
/// Substitution variables (`$NAME`, Core Data's `withSubstitutionVariables`) take their values from
/// `variables`, followed through a key path when one comes after them (`$FETCH_SOURCE.name`,
/// `$FETCHED_PROPERTY.userInfo.word`): through dictionaries, managed objects (`value(forKey:)`) and
/// fetched property descriptions. A variable's value is used as a `%@` argument would be.
public enum PredicateParser {
    /// Parses a format string, substituting `arguments` for the placeholders in order and `variables`
    /// (by name, without the `$`) for substitution variables.
    ///
    /// - Throws: `PredicateParseError.syntax` naming the unexpected token and its character offset,
    ///   `PredicateParseError.argument` for a missing or unusable argument, `.variable` for a `$variable`
    ///   with no value (or a key path after it that names none), or `.tooDeep` for a predicate nesting
    ///   deeper than `PredicateNode.maximumDepth`.
    public static func parse(_ format: String, arguments: [Any?] = [], variables: [String: Any] = [:]) throws -> PredicateNode {
        var lexer = Lexer(format)
        var parser = Parser(tokens: try lexer.tokens(), arguments: arguments)
        parser.variables = .values(variables)
        let node = try parser.predicate().node
        try parser.expectEnd()
        return node
    }

    /// Parses a predicate over the results of a grouped or aggregate fetch (`FetchRequest.havingPredicate`),
    /// whose key paths name keys of the results: an expression's name, a grouped key path. Core Data
    /// writes an expression's name as a variable (`$total > 100`, or `%@ > 100` with
    /// `NSExpression(forVariable: "total")`); here `$total` reads as the key `total`, as `total` does.
    ///
    /// - Throws: what `parse(_:arguments:variables:)` throws, but never `.variable`.
    public static func parseHaving(_ format: String, arguments: [Any?] = []) throws -> PredicateNode {
        var lexer = Lexer(format)
        var parser = Parser(tokens: try lexer.tokens(), arguments: arguments)
        parser.variables = .resultKeys
        let node = try parser.predicate().node
        try parser.expectEnd()
        return node
    }

    /// Checks that a format string parses when the named variables are given values, without knowing
    /// the values: for a model's fetched-property predicates, whose `$FETCH_SOURCE` is known only when
    /// the property is read. Comparisons with a variable are read and dropped.
    ///
    /// - Throws: what `parse(_:arguments:variables:)` throws, for any variable not in `variables`.
    static func check(_ format: String, variables: Set<String>) throws {
        var lexer = Lexer(format)
        var parser = Parser(tokens: try lexer.tokens(), arguments: [])
        parser.variables = .unknownValues(variables)
        _ = try parser.predicate()
        try parser.expectEnd()
    }
}

/// A value a predicate's substitution variable can stand for and follow a key path through, beside
/// dictionaries: managed objects and fetched property descriptions.
protocol PredicateVariableValue {
    func predicateVariableValue(forKey key: String) -> PredicateVariableLookup
}

/// The result of following one key of a variable's key path.
enum PredicateVariableLookup {
    case value(Any?)
    /// The object has no such key: an error, where a nil value is not.
    case unknownKey
}

private struct Token {
    enum Kind: Equatable {
        case identifier(String)
        case keyword(String)
        case number(String)
        case string(String)
        case symbol(String)
        case placeholder(String)
        case variable(String)
        case modifier(String)
        case end
    }
    var kind: Kind
    var text: String
    var offset: Int
}

/// Splits a format string into tokens, reading it as Unicode scalars rather than characters: a combining
/// mark after a quote or a backslash would join it into one character (`'` and U+0301 are one `Character`),
/// so that a string starting with an accent, or an escape before one, would not be seen; a description
/// of a parsed predicate may hold either. Offsets therefore count scalars (for ASCII, characters).
private struct Lexer {
    let chars: [Unicode.Scalar]
    var i = 0

    init(_ s: String) { chars = Array(s.unicodeScalars) }

    func text(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(chars[range])) }

    func error(_ message: String, _ text: String, _ offset: Int) -> PredicateParseError {
        .syntax(message: message, token: text, offset: offset)
    }

    mutating func tokens() throws -> [Token] {
        var out: [Token] = []
        while true {
            while i < chars.count, chars[i].properties.isWhitespace { i += 1 }
            guard i < chars.count else {
                out.append(Token(kind: .end, text: "", offset: chars.count))
                return out
            }
            out.append(try next())
        }
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" }
    /// Letters, digits, `_`, and the combining marks a letter may carry ("é" written as "e" and U+0301).
    static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        if c.properties.isAlphabetic || isDigit(c) || c == "_" { return true }
        switch c.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
    static func isDigit(_ c: Unicode.Scalar) -> Bool { c.properties.numericType != nil }
    static func isHexDigit(_ c: Unicode.Scalar) -> Bool { c.isASCII && Character(c).isHexDigit }

    mutating func word() -> String {
        let start = i
        while i < chars.count, Self.isIdentifierPart(chars[i]) { i += 1 }
        return text(start..<i)
    }

    mutating func next() throws -> Token {
        let start = i
        let c = chars[i]
        func token(_ kind: Token.Kind) -> Token { Token(kind: kind, text: text(start..<i), offset: start) }
        if Self.isIdentifierStart(c) {
            let w = word()
            let upper = w.uppercased()
            return token(PredicateFormat.reservedWords.contains(upper) ? .keyword(upper) : .identifier(w))
        }
        if c == "#" || c == "@" || c == "$" {
            i += 1
            guard i < chars.count, Self.isIdentifierStart(chars[i]) else { throw error("expected a name after '\(c)'", String(c), start) }
            let w = word()
            switch c {
            case "#": return token(.identifier(w))
            case "@": return token(.identifier("@" + w))
            default: return token(.variable(w))
            }
        }
        if Self.isDigit(c) { return try number(start) }
        if c == "'" || c == "\"" { return try string(start, quote: c) }
        if c == "%" {
            i += 1
            var spec = ""
            while i < chars.count, chars[i] == "l" { spec.append("l"); i += 1 }
            guard i < chars.count, "@Kdiuf".unicodeScalars.contains(chars[i]) else {
                throw error("expected %@, %K, %d or %f", text(start..<min(i + 1, chars.count)), start)
            }
            spec.unicodeScalars.append(chars[i]); i += 1
            return token(.placeholder(spec.replacingOccurrences(of: "l", with: "")))
        }
        if c == "[" {
            i += 1
            let w = word()
            guard i < chars.count, chars[i] == "]", !w.isEmpty, w.allSatisfy({ "cdCD".contains($0) }) else {
                throw error("expected a modifier [c], [d] or [cd]", text(start..<min(i + 1, chars.count)), start)
            }
            i += 1
            return token(.modifier(w.lowercased()))
        }
        for symbol in ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "<", ">", "=", "!", "(", ")", "{", "}", ",", ".", "-"] {
            if matches(symbol) {
                i += symbol.unicodeScalars.count
                return token(.symbol(symbol))
            }
        }
        i += 1
        throw error("unexpected character", String(c), start)
    }

    func matches(_ symbol: String) -> Bool {
        var j = i
        for ch in symbol.unicodeScalars {
            guard j < chars.count, chars[j] == ch else { return false }
            j += 1
        }
        return true
    }

    mutating func number(_ start: Int) throws -> Token {
        if chars[i] == "0", i + 1 < chars.count, chars[i + 1] == "x" || chars[i + 1] == "X" {
            i += 2
            while i < chars.count, Self.isHexDigit(chars[i]) { i += 1 }
            return Token(kind: .number(text(start..<i)), text: text(start..<i), offset: start)
        }
        while i < chars.count, Self.isDigit(chars[i]) { i += 1 }
        if i + 1 < chars.count, chars[i] == ".", Self.isDigit(chars[i + 1]) {
            i += 1
            while i < chars.count, Self.isDigit(chars[i]) { i += 1 }
        }
        if i < chars.count, chars[i] == "e" || chars[i] == "E" {
            var j = i + 1
            if j < chars.count, chars[j] == "+" || chars[j] == "-" { j += 1 }
            if j < chars.count, Self.isDigit(chars[j]) {
                i = j
                while i < chars.count, Self.isDigit(chars[i]) { i += 1 }
            }
        }
        let number = text(start..<i)
        return Token(kind: .number(number), text: number, offset: start)
    }

    mutating func string(_ start: Int, quote: Unicode.Scalar) throws -> Token {
        i += 1
        var value = ""
        while true {
            guard i < chars.count else { throw error("unterminated string", text(start..<chars.count), start) }
            let c = chars[i]
            i += 1
            if c == quote { break }
            if c == "\\" {
                guard i < chars.count else { throw error("unterminated string", text(start..<chars.count), start) }
                let e = chars[i]
                i += 1
                switch e {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                case "0": value.append("\0")
                default: value.unicodeScalars.append(e)
                }
            } else {
                value.unicodeScalars.append(c)
            }
        }
        return Token(kind: .string(value), text: text(start..<i), offset: start)
    }
}

private struct Parser {
    /// What an operand of a comparison turned out to be.
    enum Expr {
        case keyPath(KeyPathExpr)
        case count(KeyPathExpr)
        case subqueryCount(KeyPathExpr, PredicateNode)
        case constant(Value)
        case list([Value])
        /// Managed objects or object IDs given as `%@`, compared by identity.
        case objects([ManagedObjectID])
        /// A substitution variable whose value is not known (`PredicateParser.check`): any comparison
        /// with it reads as TRUEPREDICATE.
        case unknownVariable
    }

    /// Where the values of substitution variables come from.
    enum Variables {
        case values([String: Any])
        case unknownValues(Set<String>)
        /// A variable names a key of a grouped fetch's results (`PredicateParser.parseHaving`).
        case resultKeys
    }

    let tokens: [Token]
    let arguments: [Any?]
    var position = 0
    var nextArgument = 0
    /// The variable of the innermost SUBQUERY, whose key paths must start with it.
    var scope: String?
    /// How many parentheses and SUBQUERYs are open around the current token.
    var openGroups = 0
    var variables = Variables.values([:])

    init(tokens: [Token], arguments: [Any?]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    var current: Token { tokens[position] }

    mutating func advance() -> Token {
        let t = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return t
    }

    func error(_ message: String, at token: Token? = nil) -> PredicateParseError {
        let t = token ?? current
        return .syntax(message: message, token: t.text, offset: t.offset)
    }

    func isKeyword(_ k: String) -> Bool { current.kind == .keyword(k) }
    func isSymbol(_ s: String) -> Bool { current.kind == .symbol(s) }

    mutating func expectSymbol(_ s: String, _ message: String) throws {
        guard isSymbol(s) else { throw error(message) }
        _ = advance()
    }

    func expectEnd() throws {
        guard current.kind == .end else { throw error("expected AND, OR or the end of the predicate") }
    }

    // MARK: Predicates

    /// A predicate and how many levels of NOT, AND, OR and ANY it nests (`PredicateNode.depth`),
    /// counted as it is read so that no format string builds a tree that fetching refuses.
    struct Nested {
        var node: PredicateNode
        var depth: Int
    }

    /// `node`, which nests `depth` levels, unless that is deeper than the limit.
    func nested(_ node: PredicateNode, _ depth: Int, at token: Token) throws -> Nested {
        guard depth <= PredicateNode.maximumDepth else { throw PredicateParseError.tooDeep(depth: depth, offset: token.offset) }
        return Nested(node: node, depth: depth)
    }

    /// Opens a parenthesis or SUBQUERY at `token`, unless more than the limit are open.
    mutating func open(_ token: Token) throws {
        openGroups += 1
        guard openGroups <= PredicateNode.maximumDepth else { throw PredicateParseError.tooDeep(depth: openGroups, offset: token.offset) }
    }

    /// A parenthesis or SUBQUERY being read: its terms so far, and what to do with it when it closes.
    struct Group {
        enum Opener {
            /// The whole predicate.
            case top
            case parenthesis
            /// `SUBQUERY(collection, $var, …)`, at `start`; `outerScope` is the variable around it.
            case subquery(collection: KeyPathExpr, outerScope: String?, start: Token)
        }
        var opener: Opener
        /// The positions of the NOTs before the opener, which apply to the group once it is closed.
        var nots: Range<Int>
        var disjuncts: [Nested] = []
        var conjuncts: [Nested] = []
        var firstAnd: Token?
        var firstOr: Token?
    }

    /// The whole predicate: ORs of ANDs of operands, each operand any number of NOTs before a
    /// condition, a parenthesized predicate or a SUBQUERY.
    ///
    /// One loop with a list of the open groups instead of recursive descent: a level of parentheses
    /// or SUBQUERY costs a list element rather than several stack frames, so neither 100,000 `(` nor
    /// a predicate at the depth limit can overflow the stack however small it is.
    mutating func predicate() throws -> Nested {
        var enclosing: [Group] = []
        var group = Group(opener: .top, nots: 0..<0)
        while true {
            let firstNot = position
            while isKeyword("NOT") || isSymbol("!") { _ = advance() }
            let nots = firstNot..<position
            if isSymbol("(") {
                try open(advance())
                enclosing.append(group)
                group = Group(opener: .parenthesis, nots: nots)
                continue
            }
            if isKeyword("SUBQUERY") {
                let start = current
                try open(advance())
                let (collection, variable) = try subqueryHead()
                enclosing.append(group)
                group = Group(opener: .subquery(collection: collection, outerScope: scope, start: start), nots: nots)
                scope = variable
                continue
            }
            var operand = try negated(try condition(), by: nots)
            // Adds the operand to its group; where the group ends there, closes it, and its value is
            // the next operand of the group around it.
            while true {
                group.conjuncts.append(operand)
                if isKeyword("AND") || isSymbol("&&") {
                    group.firstAnd = group.firstAnd ?? current
                    _ = advance()
                    break
                }
                group.disjuncts.append(try joined(group.conjuncts, isConjunction: true, at: group.firstAnd))
                group.conjuncts = []
                group.firstAnd = nil
                if isKeyword("OR") || isSymbol("||") {
                    group.firstOr = group.firstOr ?? current
                    _ = advance()
                    break
                }
                let value = try joined(group.disjuncts, isConjunction: false, at: group.firstOr)
                switch group.opener {
                case .top:
                    return value
                case .parenthesis:
                    try expectSymbol(")", "expected ')'")
                    operand = try negated(value, by: group.nots)
                case .subquery(let collection, let outerScope, let start):
                    scope = outerScope
                    try subqueryTail()
                    let node = try comparison(lhs: .subqueryCount(collection, value.node), lhsToken: start)
                    // `.any(inner)`, or `.not(.any(inner))` for a count of 0.
                    var depth = value.depth + 1
                    if case .not = node { depth += 1 }
                    operand = try negated(nested(node, depth, at: start), by: group.nots)
                }
                openGroups -= 1
                group = enclosing.removeLast()
            }
        }
    }

    /// One term as it is, several joined by AND or OR (whose first operator token `token` is).
    func joined(_ terms: [Nested], isConjunction: Bool, at token: Token?) throws -> Nested {
        guard terms.count > 1, let token else { return terms[0] }
        let nodes = terms.map(\.node)
        return try nested(isConjunction ? .and(nodes) : .or(nodes), terms.map(\.depth).max()! + 1, at: token)
    }

    /// `operand` under the NOTs at `positions`, innermost first, so that an error names the NOT that
    /// passes the limit.
    func negated(_ operand: Nested, by positions: Range<Int>) throws -> Nested {
        var result = operand
        for i in positions.reversed() {
            result = try nested(.not(result.node), result.depth + 1, at: tokens[i])
        }
        return result
    }

    /// A comparison, a quantified comparison, or a constant predicate.
    mutating func condition() throws -> Nested {
        if isKeyword("TRUEPREDICATE") { _ = advance(); return Nested(node: .true, depth: 0) }
        if isKeyword("FALSEPREDICATE") { _ = advance(); return Nested(node: .false, depth: 0) }
        for quantifier in ["ANY", "SOME", "ALL", "NONE"] where isKeyword(quantifier) { return try quantified(quantifier) }
        let start = current
        let node = try comparison(lhs: try expression(), lhsToken: start)
        return Nested(node: node, depth: node.depth(cappedAt: 2))
    }

    /// `ANY`, `SOME`, `ALL` or `NONE` and a comparison of a to-many relationship's members.
    mutating func quantified(_ quantifier: String) throws -> Nested {
        _ = advance()
        let start = current
        let message = "\(quantifier) needs a key path through a to-many relationship to an attribute, such as reports.age"
        guard case .keyPath(let path) = try expression(), !path.isEmpty else { throw error(message, at: start) }
        if path.count == 1 {
            // `ANY employees == %@` with objects: the members themselves are compared, by identity.
            let node = try comparison(lhs: .keyPath(path), lhsToken: start, quantified: true)
            if case .true = node, case .unknownValues = variables { return Nested(node: .true, depth: 0) }
            guard case .objects = node, quantifier != "ALL" else { throw error(message, at: start) }
            let result: PredicateNode = quantifier == "NONE" ? .not(node) : node
            return try nested(result, result.depth(cappedAt: 2), at: start)
        }
        let member = try comparison(lhs: .keyPath([path.last!]), lhsToken: start, quantified: true)
        let collection = Array(path.dropLast())
        let node: PredicateNode
        switch quantifier {
        case "ALL": node = .not(.any(collection, .not(member)))
        case "NONE": node = .not(.any(collection, member))
        default: node = .any(collection, member)
        }
        return try nested(node, node.depth(cappedAt: PredicateNode.maximumDepth + 1), at: start)
    }

    /// The operator and right-hand side after `lhs`.
    ///
    /// - Parameter quantified: the comparison is inside ANY/ALL/NONE, where a key path on the right
    ///   would be read from the member instead of the object, so only constants are allowed there.
    mutating func comparison(lhs: Expr, lhsToken: Token, quantified: Bool = false) throws -> PredicateNode {
        let opToken = advance()
        var modifiers = ""
        if case .modifier(let m) = current.kind {
            modifiers = m
            _ = advance()
        }
        let c = modifiers.contains("c")
        let d = modifiers.contains("d")
        switch opToken.kind {
        case .symbol(let s):
            let op: ComparisonOperator
            switch s {
            case "==", "=": op = .equal
            case "!=", "<>": op = .notEqual
            case "<": op = .less
            case "<=", "=<": op = .lessOrEqual
            case ">": op = .greater
            case ">=", "=>": op = .greaterOrEqual
            default: throw error("expected a comparison operator", at: opToken)
            }
            let rhsToken = current
            let rhs = try expression()
            if quantified, case .keyPath = rhs { throw error("ANY, ALL and NONE compare with constants only; use SUBQUERY", at: rhsToken) }
            return try compare(lhs, op, rhs, caseInsensitive: c, diacriticInsensitive: d, opToken: opToken, lhsToken: lhsToken, rhsToken: rhsToken)
        case .keyword(let k):
            let rhsToken = current
            switch k {
            case "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES":
                let op = StringOperator(rawValue: k)!
                if case .unknownVariable = lhs { _ = try expression(); return .true }
                guard case .keyPath(let path) = lhs else { throw error("\(k) needs a key path on its left", at: lhsToken) }
                let rhs = try expression()
                if case .unknownVariable = rhs { return .true }
                // `employees CONTAINS %@`: the to-many relationship holds the object.
                if k == "CONTAINS", !c && !d, case .objects(let ids) = rhs { return .objects(path, ids) }
                guard case .constant(.string(let s)) = rhs else { throw error("\(k) needs a string on its right", at: rhsToken) }
                return .string(path, op, s, caseInsensitive: c, diacriticInsensitive: d)
            case "IN":
                if case .unknownVariable = lhs { _ = try expression(); return .true }
                guard case .keyPath(let path) = lhs else { throw error("IN needs a key path on its left", at: lhsToken) }
                switch try expression() {
                case .unknownVariable: return .true
                case .list(let values): return .isIn(path, values)
                case .objects(let ids): return .objects(path, ids)
                default: throw error("IN needs a list such as {1, 2} or a collection argument on its right", at: rhsToken)
                }
            case "BETWEEN":
                guard case .keyPath(let path) = lhs else { throw error("BETWEEN needs a key path on its left", at: lhsToken) }
                guard case .list(let bounds) = try expression(), bounds.count == 2 else {
                    throw error("BETWEEN needs two bounds such as {1, 10}", at: rhsToken)
                }
                return .between(path, bounds[0], bounds[1])
            default:
                throw error("expected a comparison operator", at: opToken)
            }
        default:
            throw error("expected a comparison operator", at: opToken)
        }
    }

    func compare(_ lhs: Expr, _ op: ComparisonOperator, _ rhs: Expr, caseInsensitive c: Bool, diacriticInsensitive d: Bool,
                 opToken: Token, lhsToken: Token, rhsToken: Token) throws -> PredicateNode {
        switch (lhs, rhs) {
        case (.unknownVariable, _), (_, .unknownVariable):
            return .true
        case (.keyPath(let p), .constant(let v)):
            return try keyCompare(p, op, v, c, d, opToken)
        case (.constant(let v), .keyPath(let p)):
            return try keyCompare(p, op.swapped, v, c, d, opToken)
        case (.keyPath(let p), .objects(let ids)), (.objects(let ids), .keyPath(let p)):
            guard !c && !d, op == .equal || op == .notEqual else {
                throw error("an object compares by identity, with == or != (or IN) and no [c] or [d]", at: opToken)
            }
            return op == .equal ? .objects(p, ids) : .not(.objects(p, ids))
        case (.keyPath(let p), .keyPath(let q)):
            if c || d { throw error("[c] and [d] need a string constant to compare with", at: opToken) }
            return .compare(p, op, .keyPath(q))
        case (.count(let p), .constant(.int(let n))):
            guard let n = Int(exactly: n) else { throw error("count out of range", at: rhsToken) }
            return .count(p, op, n)
        case (.constant(.int(let n)), .count(let p)):
            guard let n = Int(exactly: n) else { throw error("count out of range", at: lhsToken) }
            return .count(p, op.swapped, n)
        case (.subqueryCount(let p, let inner), .constant(.int(let n))):
            switch (op, n) {
            case (.greater, 0), (.greaterOrEqual, 1), (.notEqual, 0): return .any(p, inner)
            case (.equal, 0), (.less, 1), (.lessOrEqual, 0): return .not(.any(p, inner))
            default: throw error("only SUBQUERY(...).@count > 0 and == 0 are supported", at: rhsToken)
            }
        case (.count, _), (.subqueryCount, _):
            throw error("@count compares with an integer", at: rhsToken)
        case (_, .list):
            throw error("a list needs IN or BETWEEN", at: rhsToken)
        default:
            throw error("a comparison needs a key path on one side", at: lhsToken)
        }
    }

    func keyCompare(_ p: KeyPathExpr, _ op: ComparisonOperator, _ v: Value, _ c: Bool, _ d: Bool, _ opToken: Token) throws -> PredicateNode {
        if c || d {
            guard case .string(let s) = v, op == .equal || op == .notEqual else {
                throw error("[c] and [d] apply to string operators and to == and != with a string", at: opToken)
            }
            let equal = PredicateNode.string(p, .like, LikePattern.escaping(s), caseInsensitive: c, diacriticInsensitive: d)
            return op == .equal ? equal : .not(equal)
        }
        if v.isNull {
            switch op {
            case .equal: return .isNil(p)
            case .notEqual: return .not(.isNil(p))
            default: throw error("nil can only be compared with == or !=", at: opToken)
            }
        }
        return .compare(p, op, .value(v))
    }

    // MARK: Expressions

    mutating func expression() throws -> Expr {
        let t = current
        switch t.kind {
        case .identifier, .variable, .keyword("SELF"):
            return try keyPath()
        case .placeholder(let spec):
            _ = advance()
            let arg = try argument(for: t)
            switch spec {
            case "K":
                guard let key = arg as? String, !key.isEmpty else {
                    throw PredicateParseError.argument(message: "%K needs a key path string, got \(describe(arg))", offset: t.offset)
                }
                return try keyPathTail(key.split(separator: ".").map(String.init), start: t)
            case "d", "i", "u":
                guard let any = arg, case .int(let n)? = PredicateValues.value(of: any) else {
                    throw PredicateParseError.argument(message: "%\(spec) needs an integer, got \(describe(arg))", offset: t.offset)
                }
                return .constant(.int(n))
            case "f":
                guard let any = arg, let v = PredicateValues.value(of: any), let d = Self.double(v) else {
                    throw PredicateParseError.argument(message: "%f needs a number, got \(describe(arg))", offset: t.offset)
                }
                return .constant(.double(d))
            default:
                guard let any = arg else { return .constant(.null) }
                if let expression = any as? any PredicateExpressionArgument {
                    if let path = expression.predicateKeyPath, !path.isEmpty {
                        return try keyPathTail(path.split(separator: ".").map(String.init), start: t)
                    }
                    if let name = expression.predicateVariable {
                        if case .resultKeys = variables { return try keyPathTail([name], start: t) }
                        return try substitution(name, start: t)
                    }
                }
                if let v = PredicateValues.value(of: any) { return .constant(v) }
                if let ids = PredicateValues.objectIDs(of: any) { return .objects(ids) }
                if let vs = PredicateValues.values(of: any) { return .list(vs) }
                throw PredicateParseError.argument(message: "%@ got \(describe(arg)), which is not a predicate value, a managed object or object ID, or a collection of them", offset: t.offset)
            }
        case .number(let text):
            _ = advance()
            return .constant(try number(text, negative: false, token: t))
        case .symbol("-"):
            _ = advance()
            guard case .number(let text) = current.kind else { throw error("expected a number after '-'") }
            let n = advance()
            return .constant(try number(text, negative: true, token: n))
        case .string(let s):
            _ = advance()
            return .constant(.string(s))
        case .keyword("YES"), .keyword("TRUE"):
            _ = advance()
            return .constant(.bool(true))
        case .keyword("NO"), .keyword("FALSE"):
            _ = advance()
            return .constant(.bool(false))
        case .keyword("NIL"), .keyword("NULL"):
            _ = advance()
            return .constant(.null)
        case .symbol("{"):
            _ = advance()
            var values: [Value] = []
            if !isSymbol("}") {
                repeat {
                    values.append(try constant(else: "a list holds constants only", allowingCast: true))
                } while try consumeComma()
            }
            try expectSymbol("}", "expected ',' or '}' in a list")
            return .list(values)
        case .keyword("CAST"):
            return .constant(try cast())
        case .keyword("SUBQUERY"):
            throw error("SUBQUERY(…).@count must stand on the left of its comparison")
        default:
            throw error("expected a key path or a value")
        }
    }

    /// A constant in a list or a CAST. Lists hold no lists and a CAST holds no CAST, so those are
    /// refused before reading them: reading goes back through `expression` only for tokens that do
    /// not nest, and 50,000 `{` are refused at the second instead of recursing 50,000 times.
    mutating func constant(else message: String, allowingCast: Bool) throws -> Value {
        let t = current
        switch t.kind {
        case .keyword("CAST") where allowingCast:
            return try cast()
        case .symbol("{"), .keyword("CAST"), .keyword("SUBQUERY"):
            throw error(message)
        default:
            guard case .constant(let v) = try expression() else { throw error(message, at: t) }
            return v
        }
    }

    mutating func consumeComma() throws -> Bool {
        if isSymbol(",") { _ = advance(); return true }
        return false
    }

    /// A key path: names joined by dots, optionally ending in `.@count`, starting with the SUBQUERY
    /// variable inside a SUBQUERY.
    mutating func keyPath() throws -> Expr {
        let start = current
        var path: KeyPathExpr = []
        switch advance().kind {
        case .variable(let v) where v != scope:
            if case .resultKeys = variables { return try keyPathTail([v], start: start) }
            return try substitution(v, start: start)
        case .variable:
            break
        case .identifier(let name):
            if scope != nil { throw error("inside SUBQUERY key paths must start with $\(scope!)", at: start) }
            if name.hasPrefix("@") { throw error("expected a key path", at: start) }
            path = [name]
        case .keyword("SELF"):
            if scope != nil { throw error("inside SUBQUERY key paths must start with $\(scope!)", at: start) }
        default:
            throw error("expected a key path", at: start)
        }
        return try keyPathTail(path, start: start)
    }

    mutating func keyPathTail(_ path: KeyPathExpr, start: Token) throws -> Expr {
        var path = path
        while isSymbol(".") {
            _ = advance()
            let t = advance()
            switch t.kind {
            case .identifier("@count"):
                guard !path.isEmpty else { throw error("@count needs a to-many key path", at: t) }
                return .count(path)
            case .identifier(let name) where !name.hasPrefix("@"):
                path.append(name)
            case .placeholder("K"):
                let arg = try argument(for: t)
                guard let key = arg as? String, !key.isEmpty else {
                    throw PredicateParseError.argument(message: "%K needs a key path string, got \(describe(arg))", offset: t.offset)
                }
                path.append(contentsOf: key.split(separator: ".").map(String.init))
            default:
                throw error("expected a key name after '.'", at: t)
            }
        }
        return .keyPath(path)
    }

    /// A substitution variable and the key path after it, as the value it names (used as a `%@`
    /// argument would be).
    mutating func substitution(_ name: String, start: Token) throws -> Expr {
        var keys: [String] = []
        var counted = false
        while isSymbol("."), !counted {
            _ = advance()
            let t = advance()
            switch t.kind {
            case .identifier("@count"): counted = true
            case .identifier(let key) where !key.hasPrefix("@"): keys.append(key)
            case .keyword: keys.append(t.text)
            default: throw error("expected a key name after '.'", at: t)
            }
        }
        func failure(_ message: String) -> PredicateParseError {
            .variable(name: name, message: message, offset: start.offset)
        }
        let root: Any
        switch variables {
        case .unknownValues(let names):
            guard names.contains(name) else {
                throw failure(scope == nil ? "no such variable (\(names.sorted().map { "$" + $0 }.joined(separator: ", ")) are defined here)"
                    : "no such variable; inside this SUBQUERY key paths start with $\(scope!)")
            }
            return .unknownVariable
        case .values(let values):
            guard let value = values[name] else {
                throw failure(scope == nil ? "no value was given for this variable" : "no value was given for this variable; inside this SUBQUERY key paths start with $\(scope!)")
            }
            root = value
        case .resultKeys:
            // `keyPath()` reads these as keys before they get here.
            return .keyPath([name] + keys)
        }
        var current: Any? = root
        var walked = "$" + name
        for key in keys {
            walked += "." + key
            guard let object = ManagedValueCoercion.unwrap(current) else { current = nil; break }
            switch object {
            case let dictionary as [String: Any]:
                current = dictionary[key]
            case let dictionary as [AnyHashable: Any]:
                current = dictionary[key]
            case let readable as any PredicateVariableValue:
                switch readable.predicateVariableValue(forKey: key) {
                case .value(let next): current = next
                case .unknownKey: throw failure("\(walked) names no value of \(type(of: object))")
                }
            default:
                throw failure("cannot read key '\(key)' of \(SafeDescription.of(object)), a \(type(of: object))")
            }
        }
        if counted {
            guard let collection = ManagedValueCoercion.unwrap(current), !(collection is String),
                let count = (collection as? any Collection)?.count ?? (collection as? ToManyMembers)?.objects.count
            else {
                throw failure("\(walked).@count needs a collection")
            }
            return .constant(.int(Int64(count)))
        }
        guard let value = ManagedValueCoercion.unwrap(current) else { return .constant(.null) }
        if let v = PredicateValues.value(of: value) { return .constant(v) }
        if let ids = PredicateValues.objectIDs(of: value) { return .objects(ids) }
        if let vs = PredicateValues.values(of: value) { return .list(vs) }
        throw failure("\(walked) is \(SafeDescription.of(value)), which is not a predicate value, a managed object or a collection of them")
    }

    /// `(collection, $var,` after SUBQUERY: the collection and the variable.
    mutating func subqueryHead() throws -> (collection: KeyPathExpr, variable: String) {
        try expectSymbol("(", "expected '(' after SUBQUERY")
        let collectionToken = current
        guard case .keyPath(let collection) = try keyPath(), !collection.isEmpty else {
            throw error("SUBQUERY needs a to-many key path first", at: collectionToken)
        }
        try expectSymbol(",", "expected ',' after the SUBQUERY collection")
        guard case .variable(let name) = current.kind else { throw error("expected a $variable") }
        _ = advance()
        try expectSymbol(",", "expected ',' after the SUBQUERY variable")
        return (collection, name)
    }

    /// `).@count` after the predicate of a SUBQUERY.
    mutating func subqueryTail() throws {
        try expectSymbol(")", "expected ')' to close SUBQUERY")
        try expectSymbol(".", "SUBQUERY must be followed by .@count")
        guard current.kind == .identifier("@count") else { throw error("SUBQUERY must be followed by .@count") }
        _ = advance()
    }

    /// `CAST(value, "Type")`.
    mutating func cast() throws -> Value {
        _ = advance()
        try expectSymbol("(", "expected '(' after CAST")
        let valueToken = current
        let v = try constant(else: "CAST needs a constant", allowingCast: false)
        try expectSymbol(",", "expected ',' in CAST")
        let typeToken = advance()
        guard case .string(let type) = typeToken.kind else { throw error("expected a type name string", at: typeToken) }
        try expectSymbol(")", "expected ')' to close CAST")
        switch (type, v) {
        case ("NSDate", .string(let s)):
            if let t = Double(s) { return .date(Date(timeIntervalSinceReferenceDate: t)) }
        case ("NSDate", _):
            guard let t = Self.double(v) else { break }
            return .date(Date(timeIntervalSinceReferenceDate: t))
        case ("UUID", .string(let s)), ("NSUUID", .string(let s)):
            if let u = UUID(uuidString: s) { return .uuid(u) }
        case ("NSData", .string(let hex)), ("Data", .string(let hex)):
            if let b = Self.bytes(hex) { return .bytes(b) }
        case ("RowReference", .string(let s)):
            let parts = s.split(separator: "/")
            if parts.count == 2, let table = UInt32(parts[0]), let key = Int64(parts[1]) {
                return .reference(RowReference(table: TableID(rawValue: table), key: key))
            }
        case ("Double", .string(let s)), ("NSNumber", .string(let s)):
            if let d = Double(s) { return .double(d) }
        case ("Double", _), ("NSNumber", _):
            if let d = Self.double(v) { return .double(d) }
        default:
            throw error("unsupported CAST type (use NSDate, UUID, NSData, RowReference or Double)", at: typeToken)
        }
        throw error("cannot CAST this value to \(type)", at: valueToken)
    }

    // MARK: Helpers

    mutating func argument(for token: Token) throws -> Any? {
        guard nextArgument < arguments.count else {
            throw PredicateParseError.argument(message: "placeholder \(token.text) has no argument (\(arguments.count) given)", offset: token.offset)
        }
        defer { nextArgument += 1 }
        return arguments[nextArgument]
    }

    func describe(_ arg: Any?) -> String {
        guard let arg else { return "nil" }
        return "\(SafeDescription.of(arg)) of type \(type(of: arg))"
    }

    func number(_ text: String, negative: Bool, token: Token) throws -> Value {
        let sign = negative ? "-" : ""
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            guard let n = Int64(sign + text.dropFirst(2), radix: 16) else { throw error("integer out of range", at: token) }
            return .int(n)
        }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            guard let d = Double(sign + text) else { throw error("invalid number", at: token) }
            return .double(d)
        }
        guard let n = Int64(sign + text) else { throw error("integer out of range", at: token) }
        return .int(n)
    }

    static func double(_ v: Value) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let b = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
            i += 2
        }
        return out
    }
}
