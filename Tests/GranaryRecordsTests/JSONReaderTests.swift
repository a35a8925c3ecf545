import Foundation
import Granary
@testable import GranaryRecords
import PropertyBased
import Testing

/// The import's own JSON reader against `JSONSerialization`: random documents (written by Foundation and
/// by hand, with every escape and spacing JSON allows) read to the same nodes, every malformed input is a
/// `JSONReader.Failure` with an offset, and nothing crashes.
///
/// Deliberate differences from `JSONSerialization` on Linux, each checked below:
/// - Trailing commas (`[1,]`, `{"a":1,}`) are refused, as RFC 8259 says; Foundation accepts them.
/// - Numbers with many digits are correctly rounded (Swift's `Double(String)`). Foundation reads them as
///   `NSDecimalNumber`, whose `doubleValue` can be a few ulps off, so doubles are compared with Foundation's
///   to within 1e-14 relative, and exactly with the value the document was made from.
/// - An integer in Int64 is exactly that `.int`. Foundation reads negative integers of 19 digits as
///   `NSDecimalNumber`, a double here; only there may our `.int` meet Foundation's `.double` (see
///   `NumberRule`).
/// - A string keeps every U+FEFF in it; Foundation drops one that starts the string or follows an escape
///   (in keys too). Most generated documents have none; those with a raw U+FEFF are compared with the
///   generated value only.
/// - UTF-16 and UTF-32 text reads as its UTF-8 form does; Foundation drops U+FEFF in more places there, so
///   those readings are checked against the generated value only.
@Suite struct JSONReaderTests {
    // MARK: Comparing nodes

    /// How two numbers compare: doubles with each other, and an int (ours) with a double (the other reading).
    struct NumberRule: Sendable {
        var doubles: @Sendable (Double, Double) -> Bool
        var intAndDouble: @Sendable (Int64, Double) -> Bool

        /// Exactly the same node: doubles bit for bit (so -0.0 is not 0.0), never an int for a double.
        static let exact = NumberRule(doubles: { $0.bitPattern == $1.bitPattern }, intAndDouble: { _, _ in false })
        /// The same value: also an int and a double that is exactly that integer (Foundation writes an
        /// integral double as an integer).
        static let sameValue = NumberRule(doubles: { $0.bitPattern == $1.bitPattern }, intAndDouble: { Int64(exactly: $1) == $0 })
        /// Against Foundation's reading (see the suite's comment): doubles within 1e-14 relative, and a
        /// negative integer of 19 digits against Foundation's double.
        static let foundation = NumberRule(doubles: { closeEnough($0, $1) }, intAndDouble: { $0 <= -1_000_000_000_000_000_000 && closeEnough(Double($0), $1) })
    }

    /// Whether two nodes hold the same JSON: strings scalar for scalar (not Swift's canonical equivalence),
    /// numbers by `numbers`.
    static func same(_ a: JSONNode, _ b: JSONNode, _ numbers: NumberRule = .exact) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return numbers.doubles(x, y)
        case (.int(let i), .double(let d)): return numbers.intAndDouble(i, d)
        case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1, numbers) }
        case (.object(let x), .object(let y)):
            let xKeys = Set(x.keys.map { Array($0.unicodeScalars) }), yKeys = Set(y.keys.map { Array($0.unicodeScalars) })
            return xKeys == yKeys && x.allSatisfy { key, value in y[key].map { same(value, $0, numbers) } ?? false }
        default: return false
        }
    }

    /// Foundation's reading can be a few ulps off for long numbers (see the suite's comment).
    static func closeEnough(_ x: Double, _ y: Double) -> Bool {
        x.bitPattern == y.bitPattern || abs(x - y) <= abs(x) * 1e-14
    }

    /// What `JSONSerialization` reads from `data`, as a node; nil when it refuses the data.
    static func foundation(_ data: Data) -> JSONNode? {
        (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)).map(JSONNode.init(any:))
    }

    static func describe(_ data: Data) -> String {
        let text = String(decoding: data.prefix(300), as: UTF8.self)
        return data.count > 300 ? text + "… (\(data.count) bytes)" : text
    }

    // MARK: Random documents

    /// A generated value: numbers keep the text they are written as by hand and the node that text must
    /// read to.
    indirect enum Value {
        case null
        case bool(Bool)
        case number(text: String, node: JSONNode, foundation: Any)
        case string(String)
        case array([Value])
        case object([String: Value])

        /// The node a correct reader gives.
        var node: JSONNode {
            switch self {
            case .null: .null
            case .bool(let b): .bool(b)
            case .number(_, let node, _): node
            case .string(let s): .string(s)
            case .array(let a): .array(a.map(\.node))
            case .object(let o): .object(JSONObject(o.mapValues(\.node)))
            }
        }

        /// The value with U+FEFF taken out of every string and key (see the suite's comment).
        var withoutFEFF: Value {
            func strip(_ s: String) -> String { String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\u{FEFF}" })) }
            switch self {
            case .null, .bool, .number: return self
            case .string(let s): return .string(strip(s))
            case .array(let a): return .array(a.map(\.withoutFEFF))
            case .object(let o): return .object(Dictionary(o.map { (strip($0), $1.withoutFEFF) }, uniquingKeysWith: { first, _ in first }))
            }
        }

        /// The value as `JSONSerialization.data(withJSONObject:)` takes it.
        var any: Any {
            switch self {
            case .null: NSNull()
            case .bool(let b): b
            case .number(_, _, let foundation): foundation
            case .string(let s): s
            case .array(let a): a.map(\.any)
            case .object(let o): o.mapValues(\.any)
            }
        }
    }

    /// Pieces strings are built from: plain text, the characters JSON must escape, multi-byte UTF-8,
    /// characters outside the BMP (a surrogate pair as a `\u` escape), combining marks, the BOM, U+2028.
    static let stringPieces: [String] = [
        "a", "Zed", "0", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}", "\u{1F}",
        "\u{7F}", "é", "e\u{301}", "ß", "中文", "\u{FEFF}", "\u{2028}", "\u{FFFD}", "\u{FFFF}", "😀", "👩‍👩‍👧", "\u{10FFFF}",
        "🇭🇷", "\u{E000}", "{", "}", "[", "]", ":", ",", "true", "null",
    ]

    static func string(_ g: inout SplitMixGenerator, maxPieces: Int = 6) -> String {
        (0..<Int.random(in: 0...maxPieces, using: &g)).map { _ in stringPieces.randomElement(using: &g)! }.joined()
    }

    /// Whether the text holds a raw U+FEFF, which Foundation may drop (see the suite's comment).
    static func hasRawFEFF(_ data: Data) -> Bool {
        data.firstRange(of: [0xEF, 0xBB, 0xBF] as [UInt8]) != nil
    }

    static func number(_ g: inout SplitMixGenerator) -> Value {
        func integer(_ i: Int64) -> Value { .number(text: String(i), node: .int(i), foundation: Int(i)) }
        /// An integer outside Int64: a double for both readers.
        func big(_ text: String) -> Value {
            .number(text: text, node: .double(Double(text)!), foundation: NSDecimalNumber(string: text))
        }
        func double(_ d: Double, text: String? = nil) -> Value { .number(text: text ?? "\(d)", node: .double(d), foundation: d) }
        switch Int.random(in: 0..<14, using: &g) {
        case 0: return integer(Int64.random(in: -1_000...1_000, using: &g))
        case 1: return integer(Int64.random(in: Int64.min...Int64.max, using: &g))
        case 2: return integer(Int64.max - Int64.random(in: 0...2, using: &g))
        case 3: return integer(Int64.min + Int64.random(in: 0...2, using: &g))
        case 4:
            let beyond = UInt64(Int64.max) + UInt64.random(in: 1...3, using: &g)
            return .number(text: String(beyond), node: .double(Double(beyond)), foundation: NSNumber(value: beyond))
        case 5: return .number(text: String(UInt64.max), node: .double(Double(UInt64.max)), foundation: NSNumber(value: UInt64.max))
        case 6: return big(["-9223372036854775809", "18446744073709551616", "-18446744073709551616", "1" + String(repeating: "0", count: 30)].randomElement(using: &g)!)
        case 7: return big(String(Int.random(in: 1...9, using: &g)) + (0..<Int.random(in: 19...40, using: &g)).map { _ in String(Int.random(in: 0...9, using: &g)) }.joined())
        case 8:
            // Any finite double, by its bits: subnormals, huge exponents, 17 significant digits.
            var d: Double
            repeat { d = Double(bitPattern: g.next()) } while !d.isFinite
            return double(d)
        case 9: return double(Double.random(in: -1e6...1e6, using: &g))
        case 10: return double(Double(Int.random(in: -100_000...100_000, using: &g)) / 1_000)
        case 11:
            // Negative zero, spelled several ways; "-0" alone is the integer 0 for both readers.
            let text = ["-0.0", "-0e0", "-0.000E+5", "-0E-0"].randomElement(using: &g)!
            return .number(text: text, node: .double(-0.0), foundation: -0.0)
        case 12:
            // Exponents: mantissa with or without a fraction, e/E, with or without a sign.
            let mantissa = ["1", "12", "1.5", "0.25", "9.999", "0"].randomElement(using: &g)!
            // Positive exponents up to 307 keep every mantissa finite: JSONSerialization cannot write an infinity.
            let sign = ["", "+", "-"].randomElement(using: &g)!
            let text = mantissa + ["e", "E"].randomElement(using: &g)! + sign + String(Int.random(in: 0...(sign == "-" ? 320 : 307), using: &g))
            return double(Double(text)!, text: text)
        default: return .number(text: "-0", node: .int(0), foundation: 0)
        }
    }

    static func value(_ g: inout SplitMixGenerator, depth: Int) -> Value {
        let containers = depth < 6 ? 2 : 0
        switch Int.random(in: 0..<(6 + containers), using: &g) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &g))
        case 2, 3: return number(&g)
        case 4, 5: return .string(string(&g))
        case 6: return .array((0..<Int.random(in: 0...4, using: &g)).map { _ in value(&g, depth: depth + 1) })
        default:
            var members: [String: Value] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &g) { members[string(&g, maxPieces: 3)] = value(&g, depth: depth + 1) }
            return .object(members)
        }
    }

    /// A top level that is an array or an object.
    static func document(_ g: inout SplitMixGenerator) -> Value {
        var v: Value
        repeat { v = value(&g, depth: 0) } while !{ if case .array = v { true } else if case .object = v { true } else { false } }()
        return v
    }

    // MARK: Writing by hand

    static func space(_ g: inout SplitMixGenerator) -> String {
        guard Int.random(in: 0..<3, using: &g) == 0 else { return "" }
        return (0..<Int.random(in: 1...3, using: &g)).map { _ in [" ", "\n", "\r", "\t"].randomElement(using: &g)! }.joined()
    }

    static func hex4(_ unit: UInt32, _ g: inout SplitMixGenerator) -> String {
        let digits = String(unit, radix: 16)
        let padded = String(repeating: "0", count: 4 - digits.count) + digits
        return "\\u" + (Bool.random(using: &g) ? padded.uppercased() : padded)
    }

    /// A string literal with each scalar written raw, with its short escape or as `\u` escapes, at random.
    static func literal(_ s: String, _ g: inout SplitMixGenerator) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            let asUnicode = Int.random(in: 0..<4, using: &g) == 0
            if asUnicode {
                if scalar.value > 0xFFFF {
                    let v = scalar.value - 0x10000
                    out += hex4(0xD800 + (v >> 10), &g) + hex4(0xDC00 + (v & 0x3FF), &g)
                } else {
                    out += hex4(scalar.value, &g)
                }
                continue
            }
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += Bool.random(using: &g) ? "\\/" : "/"
            case "\u{8}": out += "\\b"
            case "\u{C}": out += "\\f"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += hex4(scalar.value, &g)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func handWritten(_ v: Value, _ g: inout SplitMixGenerator) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let text, _, _): return text
        case .string(let s): return literal(s, &g)
        case .array(let a):
            return "[" + space(&g) + a.map { handWritten($0, &g) + space(&g) }.joined(separator: "," + space(&g)) + "]"
        case .object(let o):
            let members = o.map { key, value in literal(key, &g) + space(&g) + ":" + space(&g) + handWritten(value, &g) + space(&g) }
            return "{" + space(&g) + members.joined(separator: "," + space(&g)) + "}"
        }
    }

    // MARK: Parity

    /// Checks one document: our reading equals the value it was made from, and Foundation's reading.
    static func check(_ data: Data, expected: Value, _ label: String, writtenByFoundation: Bool = false, againstFoundation: Bool = true) {
        let read: JSONNode
        do { read = try JSONReader.read(data) } catch {
            Issue.record("\(label): refused (\(error.message) at byte \(error.offset)): \(describe(data))")
            return
        }
        #expect(same(read, expected.node, writtenByFoundation ? .sameValue : .exact), "\(label): not the generated value: \(describe(data))")
        guard againstFoundation, !hasRawFEFF(data) else { return }
        guard let theirs = foundation(data) else {
            Issue.record("\(label): JSONSerialization refuses \(describe(data))")
            return
        }
        #expect(same(read, theirs, .foundation), "\(label): not JSONSerialization's value: \(describe(data))")
    }

    @Test func randomDocumentsReadAsJSONSerializationReadsThem() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var g = SplitMixGenerator(seed: seed)
                var value = Int.random(in: 0..<4, using: &g) == 0 ? Self.value(&g, depth: 0) : Self.document(&g)
                if Int.random(in: 0..<4, using: &g) != 0 { value = value.withoutFEFF }
                // Foundation's spelling: compact, `\/` for slashes, `\u00xx` for control characters.
                let compact = try JSONSerialization.data(withJSONObject: value.any, options: [.fragmentsAllowed])
                Self.check(compact, expected: value, "seed \(seed) JSONSerialization", writtenByFoundation: true)
                let pretty = try JSONSerialization.data(withJSONObject: value.any, options: [.fragmentsAllowed, .prettyPrinted, .sortedKeys])
                Self.check(pretty, expected: value, "seed \(seed) JSONSerialization pretty", writtenByFoundation: true)
                // By hand: random spacing, escapes and number spellings.
                let text = Self.space(&g) + Self.handWritten(value, &g) + Self.space(&g)
                Self.check(Data(text.utf8), expected: value, "seed \(seed) by hand")
            } catch {
                Issue.record("\(seed): \(error)")
            }
        }
    }

    @Test func doublesAreCorrectlyRoundedWhereJSONSerializationIsNot() throws {
        // 17 significant digits: Foundation on Linux reads these through NSDecimalNumber.
        for text in ["-518086.44891265285", "2.0614133008418191e+114", "0.1000000000000000055511151231257827", "-1.5059206429518639e+60"] {
            let read = try JSONReader.read(Data(text.utf8))
            #expect(Self.same(read, .double(Double(text)!)), "\(text)")
        }
    }

    @Test func numbersAtTheEdges() throws {
        let cases: [(String, JSONNode)] = [
            ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("-9223372036854775809", .double(-9_223_372_036_854_775_808)),
            ("18446744073709551616", .double(18_446_744_073_709_551_616)), ("-0", .int(0)), ("-0.0", .double(-0.0)), ("0", .int(0)),
            ("1E2", .double(100)), ("1e-400", .double(0)), ("-1e-400", .double(-0.0)), ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
            ("5e-324", .double(.leastNonzeroMagnitude)), ("1.0", .double(1)), ("[-0]", .array([.int(0)])),
        ]
        for (text, node) in cases {
            let read = try JSONReader.read(Data(text.utf8))
            #expect(Self.same(read, node), "\(text) read as \(read)")   // the kind too: 1.0 is no int
        }
    }

    @Test func escapesAndUnicode() throws {
        let cases: [(String, String)] = [
            (#""\/\\\"\b\f\n\r\t""#, "/\\\"\u{8}\u{C}\n\r\t"),
            (#""\u0041\u00e9\u00E9\u4E2D""#, "Aéé中"),
            (#""\ud83d\ude00\uD83D\uDE00""#, "😀😀"),
            (#""\u0000x""#, "\u{0}x"),
            (#""\udbff\udfff""#, "\u{10FFFF}"),
            ("\"e\u{301}\"", "e\u{301}"),
            ("\"\u{FEFF}\u{2028}\"", "\u{FEFF}\u{2028}"),
            (#""abc\u0022def""#, "abc\"def"),
        ]
        for (text, expected) in cases {
            let read = try JSONReader.read(Data(text.utf8))
            #expect(Self.same(read, .string(expected)), "\(text) read as \(read)")
        }
        // U+FEFF is kept wherever it is (Foundation drops a raw one at the start or after an escape).
        #expect(Self.same(try JSONReader.read(Data("\"\\n\u{FEFF}x\"".utf8)), .string("\n\u{FEFF}x")))
        #expect(Self.same(try JSONReader.read(Data("\"\u{FEFF}\u{FEFF}x\"".utf8)), .string("\u{FEFF}\u{FEFF}x")))
        #expect(Self.same(try JSONReader.read(Data("{\"\u{FEFF}k\": \"\u{FEFF}\"}".utf8)), .object(["\u{FEFF}k": .string("\u{FEFF}")])))
        let read = try JSONReader.read(Data(#"{"a": 1, "a": 2}"#.utf8))
        #expect(Self.same(read, .object(["a": .int(2)])), "the last of duplicate keys wins")
        #expect(Self.same(read, try #require(Self.foundation(Data(#"{"a": 1, "a": 2}"#.utf8)))))
    }

    @Test func depthUpToTheLimitReads() throws {
        let limit = JSONReader.depthLimit
        let arrays = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        var read = try JSONReader.read(Data(arrays.utf8))
        for _ in 1..<limit {
            guard case .array(let a) = read, a.count == 1 else { Issue.record("not nested arrays"); return }
            read = a[0]
        }
        #expect(Self.same(read, .array([])))
        let objects = String(repeating: #"{"k":"#, count: limit - 1) + "{}" + String(repeating: "}", count: limit - 1)
        _ = try JSONReader.read(Data(objects.utf8))
        #expect(Self.foundation(Data(arrays.utf8)) != nil, "Foundation's limit is ours")
    }

    @Test func aTenMegabyteStringReads() throws {
        let plain = String(repeating: "é9", count: 3_500_000)
        let read = try JSONReader.read(Data(("[\"" + plain + "\"]").utf8))
        guard case .array(let a) = read, a.count == 1, case .string(let s) = a[0] else { Issue.record("not a one-string array"); return }
        #expect(s.utf8.count == 10_500_000 && s == plain)
        // With an escape at the end, every byte goes through the escape path.
        let escaped = String(repeating: "x", count: 10_000_000) + "\\n"
        let read2 = try JSONReader.read(Data(("\"" + escaped + "\"").utf8))
        guard case .string(let s2) = read2 else { Issue.record("not a string"); return }
        #expect(s2.utf8.count == 10_000_001 && s2.hasSuffix("x\n"))
    }

    // MARK: Encodings

    @Test func aUTF8ByteOrderMarkIsSkipped() throws {
        let body = #"{"a": [1, "é", null]}"#
        let read = try JSONReader.read(Data([0xEF, 0xBB, 0xBF] + Array(body.utf8)))
        #expect(Self.same(read, .object(["a": .array([.int(1), .string("é"), .null])])))
        #expect(Self.same(try JSONReader.read(Data([0xEF, 0xBB, 0xBF, 0x20, 0x31])), .int(1)))
        // A BOM is not a value, and only one is skipped.
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(Data([0xEF, 0xBB, 0xBF])) }
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(Data([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF, 0x31])) }
    }

    @Test func aSliceOfDataReads() throws {
        // Data that does not start at index 0, as a slice of a larger buffer.
        let whole = Data("xyz[1, \"é\"]".utf8) + Data([0xFE, 0xFF, 0x00, 0x5B, 0x00, 0x32, 0x00, 0x5D])
        #expect(Self.same(try JSONReader.read(whole[3..<12]), .array([.int(1), .string("é")])))
        #expect(Self.same(try JSONReader.read(whole[12...]), .array([.int(2)])))
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(whole[3..<11]) }
    }

    @Test func utf16AndUTF32TextReadsAsItsUTF8Form() throws {
        var g = SplitMixGenerator(seed: 16)
        for round in 0..<40 {
            let value = Self.document(&g)
            let text = Self.handWritten(value, &g)
            let units = Array(text.utf16)
            let bigEndian = units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            let littleEndian = units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            let scalars = text.unicodeScalars.map(\.value)
            let utf32BigEndian = scalars.flatMap { v in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
            let utf32LittleEndian = scalars.flatMap { v in [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) } }
            for (name, bytes) in [("UTF-16BE with BOM", [0xFE, 0xFF] + bigEndian), ("UTF-16LE with BOM", [0xFF, 0xFE] + littleEndian),
                                  ("UTF-16BE", bigEndian), ("UTF-16LE", littleEndian),
                                  ("UTF-32BE with BOM", [0, 0, 0xFE, 0xFF] + utf32BigEndian), ("UTF-32LE with BOM", [0xFF, 0xFE, 0, 0] + utf32LittleEndian)] {
                Self.check(Data(bytes), expected: value, "round \(round) \(name)", againstFoundation: false)
            }
        }
        // The same rules as UTF-8: a trailing comma is refused, a U+FEFF in a string kept.
        let trailing = Array("[1,]".utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(Data([0xFE, 0xFF] + trailing)) }
        let feff = Array("[\"\u{FEFF}x\u{FEFF}\"]".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(Self.same(try JSONReader.read(Data([0xFF, 0xFE] + feff)), .array([.string("\u{FEFF}x\u{FEFF}")])))
        // Broken UTF-16 and UTF-32 are a Failure, not a crash: odd lengths, lone surrogates, scalars beyond U+10FFFF.
        for bytes: [UInt8] in [[0xFE, 0xFF, 0x00], [0xFF, 0xFE, 0x5B, 0x00], [0xFE, 0xFF, 0xD8, 0x00, 0x00, 0x22], [0x00, 0x00],
                               [0xFF, 0xFE, 0x22, 0x00, 0x00, 0xDC, 0x22, 0x00], [0x22, 0x00, 0x00, 0xD8, 0x22, 0x00],
                               [0x00, 0x00, 0xFE, 0xFF, 0x00, 0x11, 0x00, 0x00], [0x22, 0x00, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00],
                               [0x00, 0x00, 0x00, 0x5B, 0x00, 0x00]] {
            #expect(throws: JSONReader.Failure.self, "\(bytes)") { try JSONReader.read(Data(bytes)) }
        }
    }

    // MARK: Malformed input

    /// Malformed documents, each with a label.
    static let malformed: [(String, [UInt8])] = {
        var cases: [(String, String)] = [
            ("empty", ""), ("only spaces", " \n\t "),
            ("trailing comma in an array", "[1,]"), ("trailing comma in an object", #"{"a":1,}"#),
            ("a comma only", "[,]"), ("two commas", "[1,,2]"), ("a comma in an empty object", "{,}"),
            ("missing colon", #"{"a" 1}"#), ("key without value", #"{"a"}"#), ("colon without value", #"{"a":}"#),
            ("single quotes", "['a']"), ("single-quoted key", "{'a': 1}"), ("unquoted key", "{a: 1}"), ("number key", "{1: 1}"),
            ("bad escape", #"["\x"]"#), ("capital U escape", #"["\U0041"]"#), ("short \\u", #"["\u12"]"#), ("\\u with a non-hex digit", #"["\u12G4"]"#),
            ("backslash at the end", #"["\"#), ("escaped newline", "[\"\\\n\"]"),
            ("lone high surrogate", #"["\ud800"]"#), ("lone low surrogate", #"["\udc00"]"#), ("high then a letter", #"["\ud800\u0041"]"#),
            ("high then text", #"["\ud800x"]"#), ("two highs", #"["\udbff\udbff"]"#), ("high at the end", #"["\ud83d"#),
            ("leading zero", "01"), ("negative leading zero", "[-01]"), ("double zero", "[00]"), ("plus sign", "+1"), ("bare fraction", ".5"),
            ("no fraction digits", "1."), ("no exponent digits", "1e"), ("signed exponent without digits", "[1e+]"), ("dot then exponent", "1.e5"),
            ("minus alone", "-"), ("two minuses", "--1"), ("hex", "0x10"), ("minus space", "- 1"),
            ("NaN", "NaN"), ("Infinity", "Infinity"), ("minus Infinity", "-Infinity"), ("nan in an array", "[nan]"), ("inf", "[inf]"),
            ("overflowing exponent", "1e400"), ("overflowing negative", "[-1e400]"), ("overflowing digits", "[" + String(repeating: "9", count: 400) + "]"),
            ("capital True", "True"), ("truncated literal", "[tru]"), ("longer literal", "nulll"), ("undefined", "undefined"),
            ("text after the value", "[1] x"), ("two values", "{} {}"), ("two numbers", "1 2"), ("two strings", #""a""b""#), ("closing twice", "[1]]"),
            ("unclosed array", "[1, 2"), ("unclosed object", #"{"a": 1"#), ("unclosed string", #"["abc"#), ("mismatched brackets", "[1}"),
            ("form feed as space", "[1,\u{C}2]"), ("no-break space", "[1,\u{A0}2]"), ("comment", "[1] // note"), ("block comment", "/* x */ [1]"),
            ("a NUL after the value", "[1]\u{0}"),
        ]
        for byte in 0..<0x20 {
            cases.append(("control character \(byte) in a string", "[\"a" + String(UnicodeScalar(UInt8(byte))) + "b\"]"))
        }
        cases.append(("control character in a key", "{\"a\u{1}\": 1}"))
        var bytes = cases.map { ($0.0, Array($0.1.utf8)) }
        bytes += [
            ("0xFF in a string", [0x5B, 0x22, 0xFF, 0x22, 0x5D]), ("overlong slash", [0x22, 0xC0, 0xAF, 0x22]),
            ("encoded surrogate", [0x22, 0xED, 0xA0, 0x80, 0x22]), ("truncated sequence", [0x22, 0xE2, 0x82, 0x22]),
            ("continuation byte alone", [0x22, 0x80, 0x22]), ("beyond U+10FFFF", [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]),
            ("invalid UTF-8 in a key", [0x7B, 0x22, 0xFE, 0x22, 0x3A, 0x31, 0x7D]), ("invalid UTF-8 after an escape", Array(#""\n"#.utf8) + [0xC3, 0x22]),
            ("0xFF outside a string", [0x5B, 0xFF, 0x5D]), ("a lone BOM byte", [0xEF, 0x31]),
            ("deeper than the limit", Array((String(repeating: "[", count: JSONReader.depthLimit + 1) + String(repeating: "]", count: JSONReader.depthLimit + 1)).utf8)),
            ("objects deeper than the limit", Array((String(repeating: #"{"k":"#, count: JSONReader.depthLimit) + "{}" + String(repeating: "}", count: JSONReader.depthLimit)).utf8)),
            ("100,000 [", Array(repeating: UInt8(ascii: "["), count: 100_000)),
            ("100,000 [{\"a\":", Array(String(repeating: #"[{"a":"#, count: 50_000).utf8)),
        ]
        return bytes
    }()

    /// Malformed inputs Foundation reads anyway (see the suite's comment).
    static let acceptedByFoundation: Set<String> = ["trailing comma in an array", "trailing comma in an object"]

    @Test func everyMalformedInputIsAFailureWithAnOffset() {
        for (label, bytes) in Self.malformed {
            let data = Data(bytes)
            do {
                let read = try JSONReader.read(data)
                Issue.record("\(label): read as \(read)")
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(label): offset \(error.offset) of \(bytes.count)")
                #expect(!error.message.isEmpty)
            }
            #expect((Self.foundation(data) == nil) != Self.acceptedByFoundation.contains(label), "\(label): JSONSerialization differs")
        }
    }

    @Test func failuresNameWhereTheyAre() throws {
        let cases: [(String, Int)] = [
            ("[1,]", 3), (#"{"a" 1}"#, 5), ("[1] x", 4), (#"["\x"]"#, 2), (#"["a\n\'"]"#, 5), ("01", 1), ("", 0), ("[1, 2", 5), ("1e400", 0),
            (#"["\ud800x"]"#, 8), ("[\"a\u{1}\"]", 3), (String(repeating: "[", count: 600), JSONReader.depthLimit),
        ]
        for (text, offset) in cases {
            #expect(throws: JSONReader.Failure.self, "\(text)") { try JSONReader.read(Data(text.utf8)) }
            do { _ = try JSONReader.read(Data(text.utf8)) } catch {
                #expect(error.offset == offset, "\(text): \(error.message) at \(error.offset)")
            }
        }
    }

    @Test func everyTruncationOfADocumentIsAFailure() {
        var g = SplitMixGenerator(seed: 7)
        var documents = [#"{"a": [1, -2.5e3, "x\u00e9\"", {"b": null, "c": true}], "d": false}"#, "[\"😀\", \"\\ud83d\\ude00\", 12345678901234567890]"]
        for _ in 0..<12 { documents.append(Self.handWritten(Self.document(&g), &g)) }
        for text in documents {
            let bytes = Array(text.utf8)
            #expect((try? JSONReader.read(Data(bytes))) != nil, "\(text)")
            for end in 0..<bytes.count {
                let prefix = Data(bytes[..<end])
                do {
                    let read = try JSONReader.read(prefix)
                    Issue.record("\(Self.describe(prefix)): read as \(read)")
                } catch {
                    #expect(error.offset <= end, "\(Self.describe(prefix)): offset \(error.offset)")
                }
            }
        }
    }

    @Test func randomDamageNeverCrashesAndAgreesWithJSONSerialization() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int.max)) { seed in
            Self.damageAndCompare(seed: seed)
        }
    }

    /// A hand-written document with one to three bytes changed, removed, inserted or repeated, read by both.
    static func damageAndCompare(seed: Int) {
        var g = SplitMixGenerator(seed: seed)
        var document = Self.document(&g)
        if Int.random(in: 0..<4, using: &g) != 0 { document = document.withoutFEFF }
        var bytes = Array(Self.handWritten(document, &g).utf8)
        let interesting: [UInt8] = Array("[]{}\",:\\u0123456789eE.-+ tfnl".utf8) + [0x00, 0x01, 0x0A, 0x80, 0xC3, 0xED, 0xEF, 0xFF]
        for _ in 0..<Int.random(in: 1...3, using: &g) {
            let at = Int.random(in: 0...bytes.count, using: &g)
            switch Int.random(in: 0..<4, using: &g) {
            case 0 where at < bytes.count: bytes[at] = interesting.randomElement(using: &g)!
            case 1 where at < bytes.count: bytes.remove(at: at)
            case 2: bytes.insert(interesting.randomElement(using: &g)!, at: at)
            default: bytes.insert(contentsOf: bytes[at...].prefix(Int.random(in: 1...8, using: &g)), at: at)
            }
        }
        let data = Data(bytes)
        let theirs = Self.foundation(data)
        do throws(JSONReader.Failure) {
            let read = try JSONReader.read(data)
            guard let theirs else {
                Issue.record("seed \(seed): read, but JSONSerialization refuses \(Self.describe(data))")
                return
            }
            #expect(Self.hasRawFEFF(data) || Self.same(read, theirs, .foundation), "seed \(seed): \(Self.describe(data))")
        } catch {
            guard theirs != nil else { return }
            // Foundation reads trailing commas; that is the one difference allowed.
            let before = bytes[..<error.offset].last { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
            let isTrailingComma = error.offset < bytes.count && [UInt8(ascii: "]"), UInt8(ascii: "}")].contains(bytes[error.offset])
                && before == UInt8(ascii: ",")
            #expect(isTrailingComma, "seed \(seed): refused (\(error.message) at byte \(error.offset)), JSONSerialization reads \(Self.describe(data))")
        }
    }

    // MARK: Big arrays on two threads

    /// A top-level array of random elements, hand-written, sometimes damaged (as
    /// `damageAndCompare` damages), read in two halves on two threads and in one reading: the same nodes,
    /// or the same failure at the same byte. (The split threshold is zero here, so every array with a
    /// comma past its middle is split; imports split only arrays of a megabyte or more.)
    @Test func anArrayReadInTwoHalvesReadsAsInOne() async {
        // The edges first: nothing to split, text that ends at or inside the split, escapes at the middle.
        for text in ["", " ", "[", "[1", "[1,", "[1,2", "[1,2]", "[[1,2],3]", #"["a\","b"]"#, #"["\\",1,2]"#, #"{"a":[1,2,3]}"#, "[1,2] x"] {
            let data = Data(text.utf8)
            let one = Result { () throws(JSONReader.Failure) in try JSONReader.read(data, splitThreshold: .max) }
            let two = Result { () throws(JSONReader.Failure) in try JSONReader.read(data, splitThreshold: 0) }
            switch (one, two) {
            case (.success(let a), .success(let b)): #expect(Self.same(a, b), "\(text)")
            case (.failure(let a), .failure(let b)): #expect(a.message == b.message && a.offset == b.offset, "\(text)")
            default: Issue.record("\(text): one reading \(one), two \(two)")
            }
        }
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMixGenerator(seed: seed)
            let elements = (0..<Int.random(in: 0...12, using: &g)).map { _ in Self.value(&g, depth: 1) }
            var bytes = Array((Self.space(&g) + Self.handWritten(.array(elements), &g) + Self.space(&g)).utf8)
            let interesting: [UInt8] = Array("[]{}\",:\\u0123456789eE.-+ tfnl".utf8) + [0x00, 0x80, 0xC3, 0xFF]
            if Bool.random(using: &g) {
                for _ in 0..<Int.random(in: 1...2, using: &g) {
                    let at = Int.random(in: 0...bytes.count, using: &g)
                    switch Int.random(in: 0..<3, using: &g) {
                    case 0 where at < bytes.count: bytes[at] = interesting.randomElement(using: &g)!
                    case 1 where at < bytes.count: bytes.remove(at: at)
                    default: bytes.insert(interesting.randomElement(using: &g)!, at: at)
                    }
                }
            }
            let data = Data(bytes)
            let one = Result { () throws(JSONReader.Failure) in try JSONReader.read(data, splitThreshold: .max) }
            let two = Result { () throws(JSONReader.Failure) in try JSONReader.read(data, splitThreshold: 0) }
            switch (one, two) {
            case (.success(let a), .success(let b)):
                #expect(Self.same(a, b), "seed \(seed): \(Self.describe(data))")
            case (.failure(let a), .failure(let b)):
                #expect(a.message == b.message && a.offset == b.offset,
                        "seed \(seed): one reading says \(a.message) at \(a.offset), two say \(b.message) at \(b.offset): \(Self.describe(data))")
            default:
                Issue.record("seed \(seed): one reading \(one), two \(two): \(Self.describe(data))")
            }
        }
    }

    /// An import's array of a hundred thousand objects is big enough to be split, and reads whole.
    @Test func aBigArrayIsSplitAndReadsWhole() throws {
        let text = "[" + (0..<20_000).map { #"{"id": \#($0), "name": "item \"\#($0)\"", "tags": [1, {"a": "]"}]}"# }.joined(separator: ",") + "]"
        let data = Data(text.utf8)
        #expect(data.count >= JSONReader.splitThreshold)
        guard case .array(let elements) = try JSONReader.read(data) else {
            Issue.record("not an array")
            return
        }
        #expect(elements.count == 20_000)
        for (n, element) in elements.enumerated() {
            guard case .object(let object) = element, case .int(let id) = object["id"], case .string(let name) = object["name"] else {
                Issue.record("element \(n) is \(element)")
                return
            }
            #expect(id == Int64(n) && name == "item \"\(n)\"")
        }
        // A failure past the middle names its byte, as a single reading does.
        var damaged = Array(text.utf8)
        let at = damaged.count * 3 / 4
        damaged[at] = UInt8(ascii: "}")
        let one = Result { () throws(JSONReader.Failure) in try JSONReader.read(Data(damaged), splitThreshold: .max) }
        let two = Result { () throws(JSONReader.Failure) in try JSONReader.read(Data(damaged)) }
        guard case .failure(let a) = one, case .failure(let b) = two else {
            Issue.record("damaged text read: \(one), \(two)")
            return
        }
        #expect(a.offset == b.offset && a.message == b.message)
    }

    // MARK: Through the import

    @Test func importsReportMalformedJSONWithItsByteOffset() throws {
        let (_, _, context) = try makeParsingStack()
        var inputs = Self.malformed.filter { !$0.0.hasPrefix("control character") }.map(\.1)
        let document = Array(#"[{"uuid": "u1", "age": 3}, {"uuid": "u2"}]"#.utf8)
        inputs += (0..<document.count).map { Array(document[..<$0]) }
        context.performAndWait {
            for bytes in inputs {
                let data = Data(bytes)
                guard case .failure(let failure) = Result(catching: { () throws(JSONReader.Failure) in try JSONReader.read(data) }) else {
                    Issue.record("read: \(Self.describe(data))")
                    continue
                }
                do {
                    try PUser.parse(jsonData: data, in: context)
                    Issue.record("imported \(Self.describe(data))")
                } catch let error as ParsingError {
                    guard case .invalidJSON(let detail) = error.reason else {
                        Issue.record("\(Self.describe(data)): \(error)")
                        continue
                    }
                    #expect(detail.hasSuffix("at byte \(failure.offset)") && detail.contains(failure.message), "\(Self.describe(data)): \(detail)")
                    #expect(error.description.contains("byte \(failure.offset)"))
                } catch {
                    Issue.record("\(Self.describe(data)): \(error)")
                }
                #expect(!context.hasChanges)
            }
        }
    }

    @Test func everyImportEntryPointNamesTheByte() async throws {
        let cases: [(String, Int)] = [
            ("[1,]", 3), (#"{"uuid": "#, 9), (#"[{"uuid": "u1"}] x"#, 17), (#"[{"uuid": "u1", "name": 1e400}]"#, 24), (#"[{"uuid": "u\x"}]"#, 12),
        ]
        func expectInvalid(_ body: () async throws -> Void, _ offset: Int, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) async {
            do {
                try await body()
                Issue.record("\(label): imported", sourceLocation: sourceLocation)
            } catch let error as ParsingError {
                guard case .invalidJSON(let detail) = error.reason else {
                    Issue.record("\(label): \(error)", sourceLocation: sourceLocation)
                    return
                }
                #expect(detail.hasSuffix("at byte \(offset)"), "\(label): \(detail)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(label): \(error)", sourceLocation: sourceLocation)
            }
        }
        let (_, _, context) = try makeParsingStack()
        let store = try RecordsTestModel.makeManager()
        for (text, offset) in cases {
            let data = Data(text.utf8)
            await expectInvalid({ try context.performAndWait { _ = try PUser.parse(jsonData: data, in: context) } }, offset, "parse \(text)")
            await expectInvalid({ try context.performAndWait { _ = try PUser.parseSkippingInvalid(jsonData: data, in: context) } }, offset,
                                "parseSkippingInvalid \(text)")
            await expectInvalid({ try context.performAndWait { _ = try PUser.parseAndSave(jsonData: data, in: context) } }, offset,
                                "parseAndSave \(text)")
            await expectInvalid({ _ = try await User.parse(jsonData: data, in: store) }, offset, "StoreManager async \(text)")
            await expectInvalid({
                let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, any Error>, Never>) in
                    User.parse(jsonData: data, in: store) { result in continuation.resume(returning: result.map { _ in () }) }
                }
                _ = try result.get()
            }, offset, "StoreManager closure \(text)")
        }
        let stored = try store.mainContext.performAndWait { try store.mainContext.fetch(FetchRequest<User>()).count }
        #expect(stored == 0)
        context.performAndWait { #expect(!context.hasChanges) }
    }

    @Test func importsReadWhatTheReaderReads() throws {
        let (_, _, context) = try makeParsingStack()
        // A BOM, escapes and UTF-16 all reach the objects.
        let text = #"[{"uuid": "u\u0031", "first_name": "Z\u00e9d \ud83d\ude00 \/"}]"#
        var utf16 = [UInt8(0xFE), 0xFF]
        for unit in text.utf16 { utf16 += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for bytes in [Array(text.utf8), [0xEF, 0xBB, 0xBF] + Array(text.utf8), utf16] {
            try context.performAndWait {
                let users = try PUser.parse(jsonData: Data(bytes), in: context)
                #expect(users.map(\.uuid) == ["u1"] && users.first?.firstName == "Zéd 😀 /")
                context.rollback()
            }
        }
    }
}
