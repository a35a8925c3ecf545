import Foundation
import PropertyBased
import Testing

@testable import GranaryStorage

private func encode(_ value: Value, descending: Bool = false) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try IndexKey.append(value, descending: descending, to: &bytes)
    return bytes
}

/// memcmp order, as the tree compares keys.
private func order(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a == b ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
}

private func order<T: Comparable>(_ a: T, _ b: T) -> Int {
    a == b ? 0 : a < b ? -1 : 1
}

private func utf8Order(_ a: String, _ b: String) -> Int { order(Array(a.utf8), Array(b.utf8)) }

private func uuidBytes(_ u: UUID) -> [UInt8] { withUnsafeBytes(of: u.uuid) { Array($0) } }

/// Checks, ascending and descending, that the encodings of every pair compare as `valueOrder` says.
private func expectOrderPreserved(
    _ values: [Value], valueOrder: (Value, Value) -> Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let ascending = try values.map { try encode($0) }
    let descending = try values.map { try encode($0, descending: true) }
    for i in values.indices {
        for j in values.indices {
            let expected = valueOrder(values[i], values[j])
            #expect(order(ascending[i], ascending[j]) == expected, "\(values[i]) vs \(values[j])", sourceLocation: sourceLocation)
            #expect(order(descending[i], descending[j]) == -expected, "desc \(values[i]) vs \(values[j])", sourceLocation: sourceLocation)
        }
    }
}

@Suite struct IndexKeyTests {
    // MARK: Primary keys

    @Test func primaryKeysRoundTripAndSortNumerically() {
        let keys: [Int64] = [.min, .min + 1, -1 << 40, -256, -1, 0, 1, 255, 256, 1 << 40, .max - 1, .max]
        for k in keys {
            let bytes = IndexKey.primaryKey(k)
            #expect(bytes.count == 8)
            #expect(IndexKey.primaryKey(from: bytes) == k)
            #expect(IndexKey.withPrimaryKey(k) { Array($0) } == bytes)
            #expect(IndexKey.primaryKey(from: [1, 2, 3] + bytes) == k, "the primary key is the last 8 bytes")
        }
        for (a, b) in zip(keys, keys.dropFirst()) {
            #expect(IndexKey.primaryKey(a).lexicographicallyPrecedes(IndexKey.primaryKey(b)))
        }
        #expect(IndexKey.primaryKey(0) == [0x80, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func randomPrimaryKeysSortNumerically() async {
        await propertyCheck(count: 500, input: Gen.int64(in: .min ... .max), Gen.int64(in: -1000...1000)) { a, b in
            #expect(order(IndexKey.primaryKey(a), IndexKey.primaryKey(b)) == order(a, b))
            #expect(IndexKey.primaryKey(from: IndexKey.primaryKey(a)) == a)
        }
    }

    // MARK: Each type

    @Test func nullsAndBoolsSortFirstAndFalseBeforeTrue() throws {
        try expectOrderPreserved([.null, .bool(false), .bool(true)]) { a, b in
            func rank(_ v: Value) -> Int { v == .null ? 0 : v == .bool(false) ? 1 : 2 }
            return order(rank(a), rank(b))
        }
        for value: Value in [.bool(false), .int(.min), .double(-.infinity), .string(""), .bytes([]), .date(.distantPast),
            .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), .reference(RowReference(table: TableID(rawValue: 0), key: .min))]
        {
            #expect(try order(encode(.null), encode(value)) < 0, "null sorts before \(value)")
        }
    }

    @Test func integersSortNumerically() async throws {
        let edges: [Value] = [Int64.min, -1_000_000, -256, -255, -1, 0, 1, 255, 256, Int64.max].map { .int($0) }
        try expectOrderPreserved(edges) { a, b in
            guard case .int(let x) = a, case .int(let y) = b else { return 99 }
            return order(x, y)
        }
        await propertyCheck(count: 300, input: Gen.int64(in: .min ... .max), Gen.int64(in: .min ... .max)) { x, y in
            #expect(throws: Never.self) {
                try expectOrderPreserved([.int(x), .int(y)]) { a, b in a == b ? 0 : (a == .int(x) ? order(x, y) : order(y, x)) }
            }
        }
    }

    @Test func doublesSortNumericallyWithSignedZerosEqualAndNaNLast() throws {
        let specials: [Double] = [
            -.infinity, -.greatestFiniteMagnitude, -1e300, -2.5, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude, -0.0, 0.0,
            .leastNonzeroMagnitude, .leastNormalMagnitude, 1e-300, 0.1, 1, 2.5, 1e300, .greatestFiniteMagnitude, .infinity, .nan,
            -.nan, .signalingNaN, Double(bitPattern: 0x7FF0_0000_0000_0001),
        ]
        var rng = SplitMix64(seed: 3)
        let randoms = (0..<60).map { _ in Double.random(in: -1e6...1e6, using: &rng) * (Bool.random(using: &rng) ? 1e-200 : 1) }
        func doubleOrder(_ x: Double, _ y: Double) -> Int {
            if x.isNaN || y.isNaN { return x.isNaN && y.isNaN ? 0 : (x.isNaN ? 1 : -1) }
            return order(x, y)
        }
        try expectOrderPreserved((specials + randoms).map { .double($0) }) { a, b in
            guard case .double(let x) = a, case .double(let y) = b else { return 99 }
            return doubleOrder(x, y)
        }
        #expect(try encode(.double(-0.0)) == encode(.double(0.0)))
        #expect(try encode(.double(-.nan)) == encode(.double(.nan)))
        // Dates are ordered by their interval since the reference date, like doubles.
        try expectOrderPreserved((specials.filter { !$0.isNaN } + randoms).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }) { a, b in
            guard case .date(let x) = a, case .date(let y) = b else { return 99 }
            return doubleOrder(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        }
    }

    /// Strings order by UTF-8 bytes (Unicode scalar order), with embedded NULs and prefixes handled.
    static let trickyStrings: [String] = [
        "", "\0", "\0\0", "\0\u{1}", "\u{1}", "a", "a\0", "a\0\0", "a\0b", "a\u{1}", "ab", "ab\0", "abc", "abd", "b", "B", "Z",
        "é", "e\u{301}", "e", "\u{7F}", "\u{80}", "\u{FFFF}", "\u{10000}", "😀", "日本", "日本語", "\u{FF}", "ÿ\0",
    ]

    @Test func stringsSortByUTF8BytesIncludingNULsAndPrefixes() async throws {
        try expectOrderPreserved(Self.trickyStrings.map { .string($0) }) { a, b in
            guard case .string(let x) = a, case .string(let y) = b else { return 99 }
            return utf8Order(x, y)
        }
        let alphabet: [Character] = ["\0", "\u{1}", "a", "b", "\u{FF}", "é", "😀"]
        let generator = Gen.int(in: 0...(alphabet.count - 1)).array(of: 0...6).map { String($0.map { alphabet[$0] }) }
        await propertyCheck(count: 400, input: generator, generator) { x, y in
            #expect(throws: Never.self) {
                try expectOrderPreserved([.string(x), .string(y)]) { a, b in
                    guard case .string(let p) = a, case .string(let q) = b else { return 99 }
                    return utf8Order(p, q)
                }
            }
        }
    }

    @Test func bytesSortLexicographically() async throws {
        let fixed: [[UInt8]] = [[], [0], [0, 0], [0, 0xFF], [0, 0xFF, 0], [0, 1], [1], [0xFE], [0xFF], [0xFF, 0], [0xFF, 0xFF]]
        try expectOrderPreserved(fixed.map { .bytes($0) }) { a, b in
            guard case .bytes(let x) = a, case .bytes(let y) = b else { return 99 }
            return order(x, y)
        }
        let generator = Gen.int(in: 0...3).array(of: 0...6).map { $0.map { ([0x00, 0x01, 0xFE, 0xFF] as [UInt8])[$0] } }
        await propertyCheck(count: 400, input: generator, generator) { x, y in
            #expect(throws: Never.self) {
                let (ax, ay) = (try encode(.bytes(x)), try encode(.bytes(y)))
                let (dx, dy) = (try encode(.bytes(x), descending: true), try encode(.bytes(y), descending: true))
                #expect(order(ax, ay) == order(x, y))
                #expect(order(dx, dy) == order(y, x))
            }
        }
    }

    @Test func uuidsAndReferencesSortByTheirParts() throws {
        var uuids = (0..<30).map { _ in UUID() }
        uuids.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        uuids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        try expectOrderPreserved(uuids.map { .uuid($0) }) { a, b in
            guard case .uuid(let x) = a, case .uuid(let y) = b else { return 99 }
            return order(uuidBytes(x), uuidBytes(y))
        }
        var rng = SplitMix64(seed: 8)
        let references = (0..<40).map { i in
            RowReference(
                table: TableID(rawValue: [0, 1, 2, 256, .max].randomElement(using: &rng)!),
                key: i < 5 ? [Int64.min, -1, 0, 1, .max][i] : Int64.random(in: -1000...1000, using: &rng))
        }
        try expectOrderPreserved(references.map { .reference($0) }) { a, b in
            guard case .reference(let x) = a, case .reference(let y) = b else { return 99 }
            return order(x, y)
        }
    }

    @Test func toManyReferencesCannotBeIndexed() {
        var bytes: [UInt8] = []
        #expect {
            try IndexKey.append(.references([RowReference(table: TableID(rawValue: 1), key: 1)]), descending: false, to: &bytes)
        } throws: { error in
            guard case StorageError.invalidArgument(let message) = error else { return false }
            return message.contains("cannot be indexed")
        }
    }

    // MARK: Composites

    @Test func compositeKeysSortColumnByColumnInEachDirection() async throws {
        let strings = Array(Self.trickyStrings.prefix(14))
        let doubles: [Double] = [-0.0, 0.0, -1.5, 2.5, .infinity]
        let generator = zip(
            Gen.int(in: 0...(strings.count - 1)).map { strings[$0] }, Gen.int64(in: -3...3),
            Gen.int(in: 0...(doubles.count - 1)).map { doubles[$0] })
        for directions in [(false, false, false), (true, false, true), (false, true, false), (true, true, true)] {
            await propertyCheck(count: 150, input: generator, generator) { x, y in
                func key(_ t: (String, Int64, Double)) throws -> [UInt8] {
                    try IndexKey.make([(.string(t.0), directions.0), (.int(t.1), directions.1), (.double(t.2), directions.2)])
                }
                func directed(_ c: Int, _ descending: Bool) -> Int { descending ? -c : c }
                var expected = directed(utf8Order(x.0, y.0), directions.0)
                if expected == 0 { expected = directed(order(x.1, y.1), directions.1) }
                if expected == 0 { expected = directed(order(x.2, y.2), directions.2) }
                #expect(throws: Never.self) {
                    let (kx, ky) = (try key(x), try key(y))
                    #expect(order(kx, ky) == expected, "\(x) vs \(y) in directions \(directions)")
                }
            }
        }
    }

    @Test func indexEntriesEndWithTheirPrimaryKey() throws {
        var bytes = try IndexKey.make([(.string("a\0b"), false), (.null, true)])
        IndexKey.appendPrimaryKey(-42, to: &bytes)
        #expect(IndexKey.primaryKey(from: bytes) == -42)
    }

    // MARK: Prefix scans

    @Test func stringPrefixSelectsExactlyTheStringsWithThatPrefix() throws {
        let strings = Self.trickyStrings + ["abcdef", "ab\u{1}", "a\0\0\0", "日本人"]
        for descending in [false, true] {
            var tree = ByteTree(leafBytes: 64, fanout: 4)
            for (row, s) in strings.enumerated() {
                var key = try encode(.string(s), descending: descending)
                IndexKey.appendPrimaryKey(Int64(row), to: &key)
                tree.insert(key: key, value: [])
            }
            for prefix in ["", "a", "a\0", "ab", "日本", "\0", "\u{FFFF}", "zzz", "é"] {
                let lower = IndexKey.stringPrefix(prefix, descending: descending)
                let upper = ByteTree.prefixSuccessor(lower).map { ByteTree.Bound.exclusive($0) }
                var found: [String] = []
                tree.scan(from: .inclusive(lower), to: upper) { key, _ in
                    found.append(strings[Int(IndexKey.primaryKey(from: key))])
                    return true
                }
                let expected = strings.filter { Array($0.utf8).starts(with: Array(prefix.utf8)) }
                    .sorted { utf8Order($0, $1) * (descending ? -1 : 1) < 0 }
                #expect(found == expected, "prefix \(prefix.debugDescription), descending: \(descending)")
            }
        }
    }
}
