import Foundation
import PropertyBased
import Testing
@testable import GranarySync

@Suite struct SyncValueTests {
    static func roundTrip(_ value: SyncValue?) throws -> SyncValue? {
        try EventPayloadCoding.decode(SyncValue?.self, from: EventPayloadCoding.encode(value), name: "t")
    }

    static func json(_ value: SyncValue?) throws -> String {
        String(decoding: try EventPayloadCoding.encode(value), as: UTF8.self)
    }

    static let dataName = CloudFileName.data(sha256: String(repeating: "ab", count: 32), store: StoreID(canonical: "6F1C0000-0000-4000-8000-000000000001")!)

    /// One value of every type, with the edges of each.
    static let edges: [SyncValue] = [
        .integer(0), .integer(-1), .integer(.max), .integer(.min), .integer(Int64(Int16.min)), .integer(9_007_199_254_740_993),
        .double(0), .double(-0.0), .double(.infinity), .double(-.infinity), .double(.nan), .double(-.nan),
        .double(Double(bitPattern: 0x7FF0_0000_0000_0001)), .double(Double(bitPattern: 0x7FF8_DEAD_BEEF_0001)),
        .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(0.1),
        .float(-0.0), .float(.nan), .float(Float(bitPattern: 0x7FC0_1234)), .float(.infinity), .float(.leastNonzeroMagnitude),
        .decimal(Decimal(string: "3.14159265358979323846264338327950288")!), .decimal(-Decimal(string: "0.000001")!),
        .decimal(0), .decimal(Decimal.greatestFiniteMagnitude), .decimal(.nan),
        .boolean(true), .boolean(false),
        .string(""), .string("Solaris"), .string("quote \" backslash \\ slash / newline \n nul \u{0} emoji 👩🏽‍🚀"),
        .string("e\u{301}"), .string("\u{e9}"),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -0.0)),
        .date(Date(timeIntervalSinceReferenceDate: 1_795_778_400.25)), .date(.distantPast), .date(.distantFuture),
        .date(Date(timeIntervalSinceReferenceDate: .nan)),
        .data(Data()), .data(Data([0, 255, 1, 254])), .data(Data(repeating: 7, count: 10_000)),
        .dataFile(dataName),
        .uuid(UUID()), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
        .uri(URL(string: "https://example.com/a%20b?q=1#f")!), .uri(URL(string: "x-granary://6F1C/Book/p12")!),
        .uri(URL(fileURLWithPath: "/tmp/a b")),
    ]

    @Test func everyTypeRoundTripsExactly() throws {
        for value in Self.edges {
            let back = try #require(try Self.roundTrip(value), "\(value)")
            #expect(back == value, "\(value) came back as \(back)")
        }
        #expect(try Self.roundTrip(nil) == nil)
        #expect(try Self.json(nil) == "null")
    }

    @Test func floatingPointValuesKeepTheirBitPatterns() throws {
        let patterns: [UInt64] = [0, 1 << 63, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000,
                                  0xFFF8_0000_0000_0001, 0x7FF0_0000_DEAD_BEEF, 0x0000_0000_0000_0001, 0x8000_0000_0000_0001]
        for bits in patterns {
            guard case let .double(back)? = try Self.roundTrip(.double(Double(bitPattern: bits))) else {
                Issue.record("not a double")
                continue
            }
            #expect(back.bitPattern == bits, "0x\(String(bits, radix: 16)) came back as 0x\(String(back.bitPattern, radix: 16))")
            guard case let .date(date)? = try Self.roundTrip(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))) else {
                Issue.record("not a date")
                continue
            }
            #expect(date.timeIntervalSinceReferenceDate.bitPattern == bits)
        }
        // −0 and 0 are different values, a NaN equals itself: equality is by representation.
        #expect(SyncValue.double(-0.0) != .double(0))
        #expect(SyncValue.double(.nan) == .double(.nan))
        #expect(SyncValue.double(.nan) != .double(Double(bitPattern: 0x7FF8_0000_0000_0001)))
        #expect(SyncValue.float(-0.0) != .float(0))
        #expect(SyncValue.string("e\u{301}") != .string("\u{e9}"), "canonically equivalent strings are still different bytes")
    }

    @Test func theWireFormIsATagAndAString() throws {
        #expect(try Self.json(.double(1)) == #"["d","3ff0000000000000"]"#)
        #expect(try Self.json(.float(1)) == #"["f","3f800000"]"#)
        #expect(try Self.json(.integer(.max)) == #"["i","9223372036854775807"]"#)
        #expect(try Self.json(.boolean(true)) == #"["b",true]"#)
        #expect(try Self.json(.uuid(UUID(uuidString: "6f1c0000-0000-4000-8000-000000000001")!)) == #"["u","6F1C0000-0000-4000-8000-000000000001"]"#)
        #expect(try Self.json(.decimal(Decimal(string: "12.5")!)) == #"["m","12.5"]"#)
        #expect(try Self.json(.data(Data([1, 2, 3]))) == #"["x","AQID"]"#)
        #expect(try Self.json(.uri(URL(string: "https://a.b/c")!)) == #"["r","https://a.b/c"]"#)
    }

    @Test func randomValuesRoundTripBitExact() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            var values: [SyncValue?] = []
            for _ in 0..<20 {
                let value: SyncValue? = switch Int.random(in: 0...10, using: &g) {
                case 0: .integer(Int64(bitPattern: g.next()))
                case 1: .double(Double(bitPattern: g.next()))
                case 2: .float(Float(bitPattern: UInt32(truncatingIfNeeded: g.next())))
                case 3: .decimal(Decimal(Int64(bitPattern: g.next())) / Decimal(sign: .plus, exponent: Int.random(in: 0...20, using: &g), significand: 1))
                case 4: .boolean(Bool.random(using: &g))
                case 5: .string(String((0..<Int.random(in: 0...30, using: &g)).compactMap { _ in
                    Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &g)).map(Character.init) }))
                case 6: .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: g.next())))
                case 7: .data(g.bytes(Int.random(in: 0...200, using: &g)))
                case 8: .uuid(g.storeID().uuid)
                case 9: nil
                default: .uri(URL(string: "https://example.com/\(g.next())?v=\(g.next())")!)
                }
                values.append(value)
            }
            let decoded = try? EventPayloadCoding.decode([SyncValue?].self, from: EventPayloadCoding.encode(values), name: "t")
            #expect(decoded == values, "seed \(seed)")
        }
    }

    @Test func malformedValuesAreRefusedWithTheirPath() throws {
        let cases = [
            #"[["i","+5"]]"#, #"[["i","05"]]"#, #"[["i","-0"]]"#, #"[["i","9223372036854775808"]]"#, #"[["i",5]]"#,
            #"[["d","3FF0000000000000"]]"#, #"[["d","3ff00000"]]"#, #"[["d",1.0]]"#, #"[["f","3f80000"]]"#,
            #"[["t","xyz"]]"#, #"[["u","6f1c0000-0000-4000-8000-000000000001"]]"#, #"[["x","AQI"]]"#, #"[["x","A Q I D"]]"#,
            #"[["m","twelve"]]"#, #"[["r","not a url with spaces"]]"#, #"[["F","abc.gsdata"]]"#,
            #"[["q","1"]]"#, #"[["s"]]"#, #"[["s","a","b"]]"#, #"[["b","true"]]"#, #"[[]]"#, #"["s"]"#,
        ]
        for text in cases {
            do {
                _ = try EventPayloadCoding.decode([SyncValue?].self, from: Data(text.utf8), name: "1_X_1.gsevent")
                Issue.record("\(text) was accepted")
            } catch {
                guard case let .malformedPayload(name, path, _) = error else {
                    Issue.record("\(text): \(error)")
                    continue
                }
                #expect(name == "1_X_1.gsevent")
                #expect(path.hasPrefix("[0]"), "\(text): path \(path)")
                #expect(error.description.contains("1_X_1.gsevent"))
            }
        }
    }
}
