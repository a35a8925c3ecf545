import Foundation
import Testing
@testable import Granary

/// Foundation also declares a `PredicateParseError`; ours is the module's.
private typealias PredicateParseError = Granary.PredicateParseError

@Suite struct FetchingParserTests {
    func parse(_ s: String, _ args: [Any?] = []) throws -> PredicateNode { try PredicateParser.parse(s, arguments: args) }

    func syntaxError(_ s: String, _ args: [Any?] = []) -> (token: String, offset: Int, message: String)? {
        do {
            _ = try parse(s, args)
            return nil
        } catch let PredicateParseError.syntax(message, token, offset) {
            return (token, offset, message)
        } catch {
            return ("other: \(error)", -1, "")
        }
    }

    @Test func theBriefsExampleParses() throws {
        let born1 = Date(timeIntervalSinceReferenceDate: 0)
        let born2 = Date(timeIntervalSinceReferenceDate: 1000)
        let node = try parse(
            "age > %@ AND name BEGINSWITH[c] %@ OR manager.name == 'Ada' AND NOT (flag == YES) AND dept IN %@ AND ANY reports.age > 30 AND reports.@count >= 2 AND name LIKE 'A*' AND born BETWEEN {%@, %@} AND email == nil",
            [30, "a", ["x", "y"], born1, born2])
        #expect(node == .or([
            .and([.compare(["age"], .greater, .value(30)), .string(["name"], .beginsWith, "a", caseInsensitive: true)]),
            .and([
                .compare(["manager", "name"], .equal, .value("Ada")),
                .not(.compare(["flag"], .equal, .value(true))),
                .isIn(["dept"], ["x", "y"]),
                .any(["reports"], .compare(["age"], .greater, .value(30))),
                .count(["reports"], .greaterOrEqual, 2),
                .string(["name"], .like, "A*", caseInsensitive: false),
                .between(["born"], .date(born1), .date(born2)),
                .isNil(["email"]),
            ]),
        ]))
    }

    @Test func keywordsAreCaseInsensitiveAndSymbolsAreAlternatives() throws {
        #expect(try parse("a = 1 and b == 2 && not c != 3 or d <> 4 || !(e =< 5) OR f => 6")
            == .or([
                .and([.compare(["a"], .equal, .value(1)), .compare(["b"], .equal, .value(2)), .not(.compare(["c"], .notEqual, .value(3)))]),
                .compare(["d"], .notEqual, .value(4)),
                .not(.compare(["e"], .lessOrEqual, .value(5))),
                .compare(["f"], .greaterOrEqual, .value(6)),
            ]))
        #expect(try parse("truepredicate") == .true)
        #expect(try parse("FALSEPREDICATE OR TRUEPREDICATE") == .or([.false, .true]))
    }

    @Test func literalsOfEveryKind() throws {
        #expect(try parse("a == -3") == .compare(["a"], .equal, .value(-3)))
        #expect(try parse("a == 2.5e2") == .compare(["a"], .equal, .value(250.0)))
        #expect(try parse("a == 0x1F") == .compare(["a"], .equal, .value(31)))
        #expect(try parse("a == \"it's\"") == .compare(["a"], .equal, .value("it's")))
        #expect(try parse("a == 'say \\'hi\\''") == .compare(["a"], .equal, .value("say 'hi'")))
        #expect(try parse("a == NO") == .compare(["a"], .equal, .value(false)))
        #expect(try parse("a == true") == .compare(["a"], .equal, .value(true)))
        #expect(try parse("a != NULL") == .not(.isNil(["a"])))
        #expect(try parse("a == CAST(100, \"NSDate\")") == .compare(["a"], .equal, .value(.date(Date(timeIntervalSinceReferenceDate: 100)))))
        let u = UUID()
        #expect(try parse("a == CAST('\(u.uuidString)', \"UUID\")") == .compare(["a"], .equal, .value(.uuid(u))))
        #expect(try parse("a == CAST('00ff', \"NSData\")") == .compare(["a"], .equal, .value(.bytes([0, 255]))))
        #expect(try parse("#in == 1") == .compare(["in"], .equal, .value(1)))
    }

    @Test func constantsOnTheLeftSwapTheOperator() throws {
        #expect(try parse("30 < age") == .compare(["age"], .greater, .value(30)))
        #expect(try parse("2 <= reports.@count") == .count(["reports"], .greaterOrEqual, 2))
    }

    @Test func stringOperatorsAndModifiers() throws {
        #expect(try parse("n ENDSWITH[d] 'x'") == .string(["n"], .endsWith, "x", caseInsensitive: false, diacriticInsensitive: true))
        #expect(try parse("n contains[cd] 'x'") == .string(["n"], .contains, "x", caseInsensitive: true, diacriticInsensitive: true))
        #expect(try parse("n MATCHES '[a-z]+'") == .string(["n"], .matches, "[a-z]+", caseInsensitive: false))
        // ==[c] is LIKE[c] on the escaped string, so wildcards in the constant stay literal.
        #expect(try parse("n ==[c] 'a*b'") == .string(["n"], .like, "a\\*b", caseInsensitive: true))
        #expect(try parse("n !=[c] 'ab'") == .not(.string(["n"], .like, "ab", caseInsensitive: true)))
    }

    @Test func keyPathComparisonsAndKeySubstitution() throws {
        #expect(try parse("a < b.c") == .compare(["a"], .less, .keyPath(["b", "c"])))
        #expect(try parse("%K == %@", ["manager.name", "Ada"]) == .compare(["manager", "name"], .equal, .value("Ada")))
        #expect(try parse("manager.%K > %d", ["age", 3]) == .compare(["manager", "age"], .greater, .value(3)))
        #expect(try parse("x == %f", [2]) == .compare(["x"], .equal, .value(2.0)))
        #expect(try parse("x == %@", [nil]) == .isNil(["x"]))
        #expect(try parse("x IN %@", [Set([1])]) == .isIn(["x"], [1]))
        #expect(try parse("x == %@", [Decimal(string: "1.5")!]) == .compare(["x"], .equal, .value("1.5")))
    }

    @Test func quantifiersAndSubqueries() throws {
        #expect(try parse("SOME reports.manager.name == 'A'") == .any(["reports", "manager"], .compare(["name"], .equal, .value("A"))))
        #expect(try parse("ALL reports.age > 3") == .not(.any(["reports"], .not(.compare(["age"], .greater, .value(3))))))
        #expect(try parse("NONE reports.name BEGINSWITH 'x'") == .not(.any(["reports"], .string(["name"], .beginsWith, "x", caseInsensitive: false))))
        #expect(try parse("SUBQUERY(reports, $r, $r.age > 3 AND $r.name == 'A').@count > 0")
            == .any(["reports"], .and([.compare(["age"], .greater, .value(3)), .compare(["name"], .equal, .value("A"))])))
        #expect(try parse("SUBQUERY(reports, $r, SUBQUERY($r.reports, $s, $s.age < 2).@count == 0).@count != 0")
            == .any(["reports"], .not(.any(["reports"], .compare(["age"], .less, .value(2))))))
    }

    @Test func descriptionsParseBackToTheSameNode() throws {
        let nodes: [PredicateNode] = [
            .and([.compare(["age"], .greater, .value(30)), .or([.isNil(["email"]), .string(["name"], .like, "A?*", caseInsensitive: true, diacriticInsensitive: true)])]),
            .not(.isIn(["dept"], ["a", .int(2), .double(2.5), .null, .bool(true)])),
            .between(["born"], .date(Date(timeIntervalSinceReferenceDate: 12.25)), .date(Date(timeIntervalSinceReferenceDate: 99))),
            .any(["reports"], .and([.compare(["age"], .greater, .value(3)), .count(["reports"], .equal, 0)])),
            .any(["reports", "manager"], .string(["name"], .endsWith, "it's", caseInsensitive: false)),
            .compare(["in", "order"], .lessOrEqual, .keyPath(["x"])),
            .compare(["id"], .equal, .value(.uuid(UUID()))),
            .compare(["blob"], .equal, .value(.bytes([1, 0xAB]))),
            .compare(["ref"], .equal, .value(.reference(RowReference(table: TableID(rawValue: 3), key: -4)))),
        ]
        for node in nodes {
            #expect(try parse(node.description) == node, "\(node)")
        }
    }

    /// Found by fuzzing (fuzz-predicate): the lexer read characters, and a combining mark joins the quote
    /// or backslash before it into one character, so such strings did not lex, or lost their escape.
    @Test func stringsWithCombiningMarksAfterAQuoteOrAnEscapeParse() throws {
        #expect(try parse("n == '\u{301}a'") == .compare(["n"], .equal, .value(.string("\u{301}a"))))
        #expect(try parse("n == 'a\\n\u{5C4}'") == .compare(["n"], .equal, .value(.string("a\n\u{5C4}"))))
        #expect(try parse("n == 'a\\'\u{301}'") == .compare(["n"], .equal, .value(.string("a'\u{301}"))))
        #expect(try parse("na\u{308}me == 1") == .compare(["na\u{308}me"], .equal, .value(1)))
        for value in ["\u{301}", "x\n\u{5C4}", "'\u{301}", "\\\u{301}", "\t\u{20DD}"] {
            let node = PredicateNode.string(["n"], .like, value, caseInsensitive: true)
            #expect(try parse(node.description) == node, "\(node)")
        }
    }

    /// Found by fuzzing (fuzz-predicate): `CAST(1e999, "NSDate")` parses to a date at an infinite interval,
    /// which described itself as `CAST(inf, "NSDate")`, which does not parse.
    @Test func datesAtNonFiniteIntervalsDescribeThemselvesParseably() throws {
        let node = try parse("born > CAST(1e999, \"NSDate\")")
        #expect(node == .compare(["born"], .greater, .value(.date(Date(timeIntervalSinceReferenceDate: .infinity)))))
        #expect(try parse(node.description) == node, "\(node)")
        for t in [-Double.infinity, .infinity, 1.5] {
            let date = PredicateNode.compare(["born"], .equal, .value(.date(Date(timeIntervalSinceReferenceDate: t))))
            #expect(try parse(date.description) == date, "\(date)")
        }
        let nan = PredicateNode.compare(["born"], .equal, .value(.date(Date(timeIntervalSinceReferenceDate: .nan))))
        let parsed = try parse(nan.description)
        #expect(parsed.description == nan.description)
    }

    @Test func syntaxErrorsNameTheTokenAndItsOffset() {
        let bad = syntaxError("age >> 3")
        #expect(bad?.token == ">" && bad?.offset == 5)
        let missing = syntaxError("age > ")
        #expect(missing?.token == "" && missing?.offset == 6)
        let noOp = syntaxError("age 3")
        #expect(noOp?.token == "3" && noOp?.offset == 4 && noOp?.message.contains("comparison operator") == true)
        let paren = syntaxError("(a == 1")
        #expect(paren?.offset == 7 && paren?.message.contains("')'") == true)
        let trailing = syntaxError("a == 1 b")
        #expect(trailing?.token == "b" && trailing?.offset == 7)
        let string = syntaxError("a == 'open")
        #expect(string?.offset == 5 && string?.message.contains("unterminated") == true)
        let modifier = syntaxError("a BEGINSWITH[x] 'y'")
        #expect(modifier?.offset == 12)
        let ordering = syntaxError("a < nil")
        #expect(ordering?.token == "<" && ordering?.offset == 2)
        let anyKey = syntaxError("ANY reports > 3")
        #expect(anyKey?.token == "reports" && anyKey?.offset == 4)
        let anyRight = syntaxError("ANY reports.age > age")
        #expect(anyRight?.token == "age" && anyRight?.offset == 18)
        let variable = syntaxError("SUBQUERY(reports, $r, age > 3).@count > 0")
        #expect(variable?.token == "age" && variable?.offset == 22)
        let list = syntaxError("a == {1, 2}")
        #expect(list?.token == "{" && list?.offset == 5)
        let between = syntaxError("a BETWEEN {1}")
        #expect(between?.offset == 10)
        let unexpected = syntaxError("a == 1 ; b")
        #expect(unexpected?.token == ";" && unexpected?.offset == 7)
        // The message itself carries the token and offset for the user.
        #expect(PredicateParseError.syntax(message: "expected a key path or a value", token: ">", offset: 5).description
            == "expected a key path or a value: unexpected '>' at offset 5")
    }

    @Test func argumentErrorsNameThePlaceholder() {
        #expect(throws: PredicateParseError.argument(message: "placeholder %@ has no argument (1 given)", offset: 17)) {
            try PredicateParser.parse("a == %@ AND b == %@", arguments: [1])
        }
        #expect(throws: PredicateParseError.self) { try PredicateParser.parse("%K == 1", arguments: [5]) }
        #expect(throws: PredicateParseError.self) { try PredicateParser.parse("a == %d", arguments: ["x"]) }
        #expect(throws: PredicateParseError.self) { try PredicateParser.parse("a == %@", arguments: [NSObject()]) }
    }

    @Test func theBuilderMakesTheSameNodes() {
        let k = FetchPredicate.key
        #expect((k("age") > 30 && k("name").beginsWith("A")).node
            == .and([.compare(["age"], .greater, .value(30)), .string(["name"], .beginsWith, "A", caseInsensitive: false)]))
        #expect((k("dept").isIn(["a", "b"]) || !(k("manager.name") == "Ada")).node
            == .or([.isIn(["dept"], ["a", "b"]), .not(.compare(["manager", "name"], .equal, .value("Ada")))]))
        #expect((k("email") == nil).node == .isNil(["email"]))
        #expect((k("email") != nil).node == .not(.isNil(["email"])))
        #expect(k("email").isNil.node == .isNil(["email"]))
        let none: Int? = nil
        #expect((k("n") == none).node == .isNil(["n"]))
        #expect((k("a") <= k("b")).node == .compare(["a"], .lessOrEqual, .keyPath(["b"])))
        #expect(k("a").between(1, 5).node == .between(["a"], 1, 5))
        #expect(k("s").like("a*", caseInsensitive: true).node == .string(["s"], .like, "a*", caseInsensitive: true))
        #expect(k("s").matches("x+").node == .string(["s"], .matches, "x+", caseInsensitive: false))
        #expect(k("s").endsWith("z", diacriticInsensitive: true).node == .string(["s"], .endsWith, "z", caseInsensitive: false, diacriticInsensitive: true))
        #expect(k("s").contains("q").node == .string(["s"], .contains, "q", caseInsensitive: false))
        #expect(k("reports").any(k("age") >= 3).node == .any(["reports"], .compare(["age"], .greaterOrEqual, .value(3))))
        #expect((k("reports").count != 0).node == .count(["reports"], .notEqual, 0))
        #expect((FetchPredicate.all && k("x") < 2.5).node == .compare(["x"], .less, .value(2.5)))
        #expect((FetchPredicate.none || FetchPredicate.all).node == .true)
        #expect((k("d") == Date(timeIntervalSinceReferenceDate: 5)).description == "d == CAST(5.0, \"NSDate\")")
    }
}
