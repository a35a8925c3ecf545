import Foundation
import Testing
@testable import GranaryStorage

/// The text error messages show for values from outside: never a trap (Foundation's `Date.description`
/// traps on a NaN interval, wherever the date is nested), never megabytes.
@Suite struct SafeDescriptionTests {
    static let nan = Date(timeIntervalSinceReferenceDate: .nan)
    static let infinite = Date(timeIntervalSinceReferenceDate: .infinity)
    static let nanText = "Date(timeIntervalSinceReferenceDate: nan)"

    struct Holder { var name = "x"; var when = SafeDescriptionTests.nan }
    enum Event { case at(Date), never }
    struct Failure: Error { var when: Date }

    @Test func datesFoundationCannotDescribeAreWrittenByTheirInterval() {
        #expect(SafeDescription.of(Self.nan) == Self.nanText)
        #expect(SafeDescription.of(Self.infinite) == "Date(timeIntervalSinceReferenceDate: inf)")
        #expect(SafeDescription.of(Date(timeIntervalSinceReferenceDate: -.infinity)) == "Date(timeIntervalSinceReferenceDate: -inf)")
        // Far from 2001 Foundation writes "<description unavailable>", and ISO 8601 clamps to a year.
        #expect(SafeDescription.of(Date(timeIntervalSinceReferenceDate: 1e300)) == "Date(timeIntervalSinceReferenceDate: 1e+300)")
        #expect(SafeDescription.iso8601(Self.nan) == Self.nanText)
        // Dates Foundation describes keep their usual text.
        #expect(SafeDescription.of(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01 00:00:00 +0000")
        #expect(SafeDescription.iso8601(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        #expect(SafeDescription.of(NSDate(timeIntervalSinceReferenceDate: .nan)) == Self.nanText)
    }

    @Test func datesNestedAnywhereAreFound() {
        let optional: Date? = Self.nan
        #expect(SafeDescription.of(optional) == Self.nanText)
        #expect(SafeDescription.of(Optional<Date>.none) == "nil")
        #expect(SafeDescription.of(nil) == "nil")
        #expect(SafeDescription.of([Self.nan, Date(timeIntervalSinceReferenceDate: 0)]) == "[\(Self.nanText), 2001-01-01 00:00:00 +0000]")
        #expect(SafeDescription.of(Set([Self.infinite])) == "[Date(timeIntervalSinceReferenceDate: inf)]")
        #expect(SafeDescription.of(["k": Self.nan]) == "[k: \(Self.nanText)]")
        #expect(SafeDescription.of((1, when: Self.nan)) == "(1, when: \(Self.nanText))")
        #expect(SafeDescription.of(Holder()) == "Holder(name: x, when: \(Self.nanText))")
        #expect(SafeDescription.of(Event.at(Self.nan)) == "Event.at(\(Self.nanText))")
        #expect(SafeDescription.of(Event.never) == "never")
        #expect(SafeDescription.of(Failure(when: Self.nan)) == "Failure(when: \(Self.nanText))")
        #expect(SafeDescription.of(Value.date(Self.nan)) == Self.nanText)
        #expect(Value.date(Self.nan).description == Self.nanText)
        let error = NSError(domain: "Test", code: 7, userInfo: ["when": Self.nan])
        #expect(SafeDescription.of(error) == "Test error 7 [when: \(Self.nanText)]")
    }

    @Test func numbersAndOrdinaryValuesReadAsStringDescribingHasThem() {
        #expect(SafeDescription.of(Double.nan) == "nan")
        #expect(SafeDescription.of(-Double.infinity) == "-inf")
        #expect(SafeDescription.of(Float.nan) == "nan")
        #expect(SafeDescription.of(42) == "42")
        #expect(SafeDescription.of("text") == "text")
        #expect(SafeDescription.of(Decimal(string: "1.5")!) == "1.5")
        #expect(SafeDescription.of(URL(string: "https://example.com/a")!) == "https://example.com/a")
        #expect(SafeDescription.of(Data([1, 2, 3])) == "3 bytes")
        #expect(SafeDescription.of(Holder(when: Date(timeIntervalSinceReferenceDate: 0))) == String(describing: Holder(when: Date(timeIntervalSinceReferenceDate: 0))))
    }

    @Test func longValuesAreCutWithANote() {
        let limit = SafeDescription.maximumLength
        let note = "… (cut at \(limit) characters)"
        let long = String(repeating: "é", count: 1_000_000)
        #expect(SafeDescription.of(long) == String(repeating: "é", count: limit) + note)
        #expect(SafeDescription.of(Value.string(long)) == "\"" + String(repeating: "é", count: limit - 1) + note)
        let many = SafeDescription.of(Array(0..<1_000_000))
        #expect(many == "[" + (0..<16).map(String.init).joined(separator: ", ") + ", … (1000000 elements in all)]")
        let dates = SafeDescription.of(Array(repeating: Self.nan, count: 100))
        #expect(dates.hasSuffix(note) && dates.count == limit + note.count)
        var nested: Any = 1
        for _ in 0..<100 { nested = [nested] }
        #expect(SafeDescription.of(nested) == String(repeating: "[", count: 8) + "[…]" + String(repeating: "]", count: 8))
        #expect(SafeDescription.of(Value.references((0..<100_000).map { RowReference(table: TableID(rawValue: 1), key: $0) }))
            .hasSuffix(", … (100000 elements in all)]"))
    }
}
