import Foundation
import Granary
import GranaryRecords
import Testing

/// services.md §4.2 "The `<-` operator": each conversion, read with `<-` into plain variables.
@Suite struct MappingConversionTests {
    let context: ManagedObjectContext

    init() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeParsingModel())
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    func map(_ json: [String: Any]) -> MappingValues { MappingValues(json: json, context: context) }

    /// The value `<-` reads into a variable starting at `start`.
    func read<T: JSONConvertible>(_ value: Any, into start: T) throws -> T {
        var v = start
        try v <- map(["k": value])["k"]
        return v
    }

    func conversionError<T: JSONConvertible>(_ value: Any, _ start: T) -> ParsingError? {
        var v = start
        do { try v <- map(["k": value])["k"] } catch let e as ParsingError { return e } catch { return nil }
        return nil
    }

    @Test func integersFromNumbersAndNumericStrings() throws {
        #expect(try read(27, into: 0) == 27)
        #expect(try read("27", into: 0) == 27)
        #expect(try read("27.0", into: 0) == 27)          // F: "27.0" into Int gives 27
        #expect(try read(3.0, into: 0) == 3)
        #expect(try read("-5", into: Int16(0)) == -5)
        #expect(try read(70_000, into: Int32(0)) == 70_000)
        #expect(try read("9007199254740993", into: Int64(0)) == 9_007_199_254_740_993)
        #expect(try read(NSNumber(value: 12), into: 0) == 12)
    }

    @Test func unconvertibleIntegersAreTypedErrorsAndLeaveTheValue() throws {
        // B: the original wrote 0.
        for bad: Any in ["abc", 3.7, "3.7", true, [1], ["a": 1], "12abc"] {
            let error = try #require(conversionError(bad, 41))
            #expect(error.key == "k")
            #expect(error.reason == .unconvertible(expected: "Int"))
        }
        #expect(conversionError(70_000, Int16(0))?.reason == .unconvertible(expected: "Int16"))   // out of range
        var v = 41
        #expect(throws: ParsingError.self) { try v <- map(["k": "abc"])["k"] }
        #expect(v == 41)
    }

    @Test func floatingPointAndDecimal() throws {
        #expect(try read(2.5, into: 0.0) == 2.5)
        #expect(try read(2, into: 0.0) == 2)
        #expect(try read("2.5", into: 0.0) == 2.5)
        #expect(try read("1.5", into: Float(0)) == 1.5)
        #expect(try read("12.34", into: Decimal(0)) == Decimal(string: "12.34"))
        #expect(try read(0.1, into: Decimal(0)) == Decimal(string: "0.1"))
        #expect(try read(7, into: Decimal(0)) == 7)
        #expect(conversionError("x", 0.0) != nil)
        #expect(conversionError("12abc", Decimal(0)) != nil)
        #expect(conversionError(1e300, Float(0)) != nil)
    }

    @Test func boolsFromOneZeroAndStrings() throws {
        #expect(try read(1, into: false) == true)      // F: 1 into Bool gives true
        #expect(try read(0, into: true) == false)
        #expect(try read("true", into: false) == true)  // F: "true" into Bool gives true
        #expect(try read("false", into: true) == false)
        #expect(try read(true, into: false) == true)
        #expect(conversionError("yes", false) != nil)
        #expect(conversionError(2, false) != nil)
    }

    @Test func stringsFromStringsAndNumbers() throws {
        #expect(try read(42, into: "") == "42")         // F: 42 into String gives "42"
        #expect(try read(2.5, into: "") == "2.5")
        #expect(try read("x", into: "") == "x")
        #expect(conversionError(["a"], "") != nil)
    }

    @Test func datesFromISO8601UnixSecondsAndFormats() throws {
        #expect(try read("1970-01-02T00:00:00Z", into: Date.distantPast) == Date(timeIntervalSince1970: 86_400))
        #expect(try read("1970-01-01T00:00:01.500Z", into: Date.distantPast) == Date(timeIntervalSince1970: 1.5))
        #expect(try read("1970-01-01T02:00:00+02:00", into: Date.distantPast) == Date(timeIntervalSince1970: 0))
        #expect(try read(86_400, into: Date.distantPast) == Date(timeIntervalSince1970: 86_400))
        #expect(try read(1.25, into: Date.distantPast) == Date(timeIntervalSince1970: 1.25))
        #expect(conversionError("10.03.1954", Date.distantPast) != nil)

        // F: dateFormats ["yyyy-MM-dd"] parses "1954-03-10"; B: in UTC and the POSIX locale.
        var d = Date.distantPast
        try d <- (map(["k": "1954-03-10"])["k"], dateFormats: ["dd.MM.yyyy", "yyyy-MM-dd"])
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        #expect(d == utc.date(from: DateComponents(year: 1954, month: 3, day: 10)))
        // A string that fails every format leaves a non-optional date unchanged, with an error.
        #expect(throws: ParsingError.self) { try d <- (map(["k": "March 10"])["k"], dateFormats: ["yyyy-MM-dd"]) }
        #expect(d == utc.date(from: DateComponents(year: 1954, month: 3, day: 10)))
        // Another time zone when asked.
        var paris: Date? = nil
        try paris <- (map(["k": "2020-01-01 12:00"])["k"], dateFormats: ["yyyy-MM-dd HH:mm"], timeZone: TimeZone(identifier: "Europe/Paris")!)
        #expect(paris == utc.date(from: DateComponents(year: 2020, month: 1, day: 1, hour: 11)))
        // Month names read in English whatever the host locale.
        try d <- (map(["k": "10 Mar 1954"])["k"], dateFormats: ["dd MMM yyyy"])
        #expect(d == utc.date(from: DateComponents(year: 1954, month: 3, day: 10)))
    }

    @Test func uuidURLAndBase64Data() throws {
        let id = UUID()
        #expect(try read(id.uuidString, into: UUID()) == id)
        #expect(try read("https://example.com/a?b=1", into: URL(string: "x:")!) == URL(string: "https://example.com/a?b=1"))
        #expect(try read("AAEC/w==", into: Data()) == Data([0, 1, 2, 255]))
        #expect(conversionError("not-a-uuid", UUID()) != nil)
        #expect(conversionError("***", Data()) != nil)
        #expect(conversionError(3, URL(string: "x:")!) != nil)
    }

    @Test func enumsByRawValue() throws {
        var status = UserStatus.active
        try status <- map(["k": "suspended"])["k"]
        #expect(status == .suspended)
        #expect(throws: ParsingError.self) { try status <- map(["k": "gone"])["k"] }
        #expect(status == .suspended)
        var optional: UserStatus? = .active
        try optional <- map(["k": NSNull()])["k"]
        #expect(optional == nil)
    }

    @Test func absentKeysAndNulls() throws {
        // F: absent key: optional and non-optional unchanged; null: optional nil, non-optional unchanged.
        var name: String? = "kept"
        var age = 7
        try name <- map([:])["k"]
        try age <- map([:])["k"]
        #expect(name == "kept" && age == 7)
        try name <- map(["k": NSNull()])["k"]
        try age <- map(["k": NSNull()])["k"]
        #expect(name == nil && age == 7)
    }

    @Test func arraysAndDictionaries() throws {
        #expect(try read([1, "2", 3.0], into: [Int]()) == [1, 2, 3])
        #expect(try read(["a": 1, "b": "2"], into: [String: Int]()) == ["a": 1, "b": 2])
        #expect(conversionError([1, "x"], [Int]()) != nil)
        // B: a missing key does not clear a non-optional array or dictionary.
        var list = [1, 2]
        var dict = ["a": 1]
        try list <- map([:])["k"]
        try dict <- map([:])["k"]
        #expect(list == [1, 2] && dict == ["a": 1])
    }

    @Test func customTransformsFallBackToTheDefault() throws {
        var n = 0
        try n <- (map(["k": "x7"])["k"], { ($0 as? String).flatMap { Int($0.dropFirst()) } })
        #expect(n == 7)
        try n <- (map(["k": 9])["k"], { _ in nil })
        #expect(n == 9)
    }

    @Test func dottedPathsAndIntermediatesThatAreNotObjects() throws {
        let m = map(["a": ["b": ["c": 5]], "x": 3])
        var v = 0
        try v <- m["a.b.c"]
        #expect(v == 5)
        #expect(m.isKeyPresent("a.b"))
        // B: a non-dictionary intermediate is a missing key (the original walked on from the parent).
        #expect(!m.isKeyPresent("x.a"))
        #expect(!m.isKeyPresent("a.b.c.d"))
        var ran = false
        m.keyExists("a.b") { _ in ran = true }
        m.keyExists("nope") { _ in Issue.record("ran for an absent key") }
        #expect(ran)
        #expect(MappingValues(json: ["n": NSNull()], context: context)["n"].isNull)
    }

    /// Values as `JSONSerialization` hands them over (`NSNumber`s on Linux) convert as Swift values do.
    @Test func valuesFromJSONSerialization() throws {
        let text = #"{"t": true, "f": false, "one": 1, "frac": 3.7, "whole": 4.0, "big": 9007199254740993, "neg": -2}"#
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let m = map(json)
        var b = false, i = 0, s = "", d = 0.0, i64 = Int64(0)
        try b <- m["t"]; #expect(b)
        try b <- m["f"]; #expect(!b)
        try b <- m["one"]; #expect(b)
        try i <- m["whole"]; #expect(i == 4)
        try i <- m["neg"]; #expect(i == -2)
        try s <- m["one"]; #expect(s == "1")
        try d <- m["frac"]; #expect(d == 3.7)
        try i64 <- m["big"]; #expect(i64 == 9_007_199_254_740_993)
        #expect(throws: ParsingError.self) { try i <- m["frac"] }
        #expect(throws: ParsingError.self) { try i <- m["t"] }
        #expect(throws: ParsingError.self) { try s <- m["t"] }
        #expect(i == -2 && s == "1")
    }
}
