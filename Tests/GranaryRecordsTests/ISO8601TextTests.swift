import Foundation
import Granary
@testable import GranaryRecords
import PropertyBased
import Testing

/// A class with a `Date` read by plain `<-`, to import date-times through the whole path (reader, node,
/// conversion).
final class StampedRecord: ManagedObject, Parsable {
    @Managed var key: Int
    @Managed var at: Date?
    static var idKeyPath: ReferenceWritableKeyPath<StampedRecord, Int> { \.key }

    func mapValues(from map: MappingValues) throws {
        try at <- map["at"]
    }
}

/// The ISO 8601 fast path against Foundation's parser: the same instant for every date-time it reads,
/// nil for everything else, and the `Date` conversion (fast path, then Foundation) accepting exactly what
/// Foundation accepts.
@Suite struct ISO8601TextTests {
    static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    static let utc: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }()

    /// What Foundation reads, in the order the conversion falls back to it.
    static func foundation(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: withFraction))
    }

    /// The date `<-` reads into a `Date` variable, or nil when it throws.
    static func converted(_ text: String, _ context: ManagedObjectContext) -> Date? {
        var date = Date.distantPast
        do { try date <- MappingValues(json: ["k": text], context: context)["k"] } catch { return nil }
        return date
    }

    static func makeContext() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeParsingModel())
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        return ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Fractions a Double holds exactly: Foundation reads them exactly, and so must the fast path.
    static let exactFractions = ["5", "25", "75", "125", "0625", "5000", "500000000", "000000000", "0"]

    /// A random date-time between 1900 and 2200 in a random zone, with its instant: whole seconds since 1970
    /// and the fraction's digits.
    static func randomStamp(_ g: inout SplitMixGenerator) -> (text: String, seconds: Int, fraction: String) {
        let seconds = Int.random(in: -2_208_988_800..<7_258_118_400, using: &g)
        // Foundation takes offsets up to ±18:00.
        let offsetMinutes = Int.random(in: 0..<4, using: &g) == 0 ? 0 : Int.random(in: -18 * 60...18 * 60, using: &g)
        let local = utc.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: TimeInterval(seconds + offsetMinutes * 60)))
        var text = String(local.year!) + "-" + twoDigits(local.month!) + "-" + twoDigits(local.day!) + "T"
            + twoDigits(local.hour!) + ":" + twoDigits(local.minute!) + ":" + twoDigits(local.second!)
        let fraction = Int.random(in: 0..<5, using: &g) == 0
            ? exactFractions.randomElement(using: &g)!
            : (0..<Int.random(in: 0...9, using: &g)).map { _ in String(Int.random(in: 0...9, using: &g)) }.joined()
        if !fraction.isEmpty { text += "." + fraction }
        let sign = offsetMinutes < 0 ? "-" : "+"
        let (h, m) = (twoDigits(abs(offsetMinutes) / 60), twoDigits(abs(offsetMinutes) % 60))
        switch Int.random(in: 0..<4, using: &g) {
        case 0 where offsetMinutes == 0: text += "Z"
        case 1: text += sign + h + m
        case 2 where abs(offsetMinutes) % 60 == 0: text += sign + h
        default: text += sign + h + ":" + m
        }
        return (text, seconds, fraction)
    }

    @Test func randomDateTimesReadAsFoundationReadsThem() async throws {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var g = SplitMixGenerator(seed: seed)
                for _ in 0..<10 {
                    let (text, seconds, fraction) = Self.randomStamp(&g)
                    let fast = try #require(ISO8601Text.date(text), "seed \(seed): \(text)")
                    let theirs = try #require(Self.foundation(text), "seed \(seed): Foundation refuses \(text)")
                    if fraction.isEmpty || Self.exactFractions.contains(fraction) {
                        #expect(fast == theirs, "seed \(seed): \(text) \(fast.timeIntervalSince1970) \(theirs.timeIntervalSince1970)")
                        let exact = Date(timeIntervalSinceReferenceDate: TimeInterval(seconds - 978_307_200) + (fraction.isEmpty ? 0 : Double("0." + fraction)!))
                        #expect(fast == exact, "seed \(seed): \(text)")
                    } else {
                        #expect(abs(fast.timeIntervalSince(theirs)) <= 1e-6,
                                "seed \(seed): \(text) \(fast.timeIntervalSince1970) \(theirs.timeIntervalSince1970)")
                        // And against the instant itself: whole seconds exactly, the fraction to the nearest Double.
                        let sinceWhole = fast.timeIntervalSinceReferenceDate - TimeInterval(seconds - 978_307_200)
                        #expect(abs(sinceWhole - Double("0." + fraction)!) <= 1e-6, "seed \(seed): \(text) \(sinceWhole)")
                    }
                }
            } catch {
                Issue.record("\(seed): \(error)")
            }
        }
    }

    @Test func fractionsAreReadToTheMicrosecond() throws {
        let cases: [(String, TimeInterval)] = [
            ("1970-01-01T00:00:00.5Z", 0.5), ("1970-01-01T00:00:00.000001Z", 0.000_001), ("1970-01-01T00:00:00.999999999Z", 0.999_999_999),
            ("2001-01-01T00:00:00.123456789Z", 978_307_200.123_456_789), ("1969-12-31T23:59:59.75Z", -0.25),
            ("2199-12-31T23:59:59.999999Z", 7_258_118_399.999_999), ("1900-01-01T00:00:00.000001+00:00", -2_208_988_799.999_999),
        ]
        for (text, expected) in cases {
            let fast = try #require(ISO8601Text.date(text), "\(text)")
            #expect(abs(fast.timeIntervalSince1970 - expected) <= 1e-6, "\(text): \(fast.timeIntervalSince1970)")
        }
    }

    /// Not date-times the fast path reads; the conversion leaves each to Foundation.
    static let refused: [String] = [
        "2026-13-02T03:04:05Z", "2026-00-02T03:04:05Z", "2026-01-00T03:04:05Z", "2026-01-32T03:04:05Z", "2026-02-30T03:04:05Z",
        "2026-02-29T03:04:05Z", "1900-02-29T03:04:05Z", "2100-02-29T03:04:05Z", "2024-04-31T03:04:05Z", "2026-01-02T24:00:00Z",
        "2026-01-02T03:60:05Z", "2026-01-02T03:04:60Z", "2026-01-02T23:59:60Z", "2026-01-02T03:04:05", "2026-01-02T03:04:05.123",
        "2026-01-02T03:04:05Zx", "2026-01-02T03:04:05Z ", " 2026-01-02T03:04:05Z", "2026-01-02T03:04:05+01:00x", "2026-01-02T03:04:05+01:00:00",
        "2026-01-02T03:04:05GMT", "2026-01-02T03:04:05 Z", "2026-01-02T03:04:05.Z", "2026-01-02 03:04:05Z", "2026-01-02T03:04Z",
        "20260102T030405Z", "2026-1-02T03:04:05Z", "2026-01-02T03:04:05+1:00", "2026-01-02T03:04:05+01:0", "2026-01-02T03:04:05+010",
        "2026-01-02T03:04:05+01:", "2026-01-02T03:04:05+", "2026-01-02T03:04:05+01:60", "2026-01-02T03:04:05+24:00",
        "2026-01-02T03:04:05+18:01", "2026-01-02T03:04:05-19:00", "2026-01-02T03:04:05+23:59", "2026-01-02t03:04:05Z",
        "2026-01-02T03:04:05,5Z", "2026-01-02T03:04:05.1234567891Z", "2026-01-02T03:04:05.123456789123Z",
        "２０２６-01-02T03:04:05Z", "2026-01-02T03:04:0５Z", "2026-01-02T03:04:05−01:00", "", "Z", "2026", "2026-01-02",
        "-2026-01-02T03:04:05Z", "+2026-01-02T03:04:05Z", "12026-01-02T03:04:05Z", "2026/01/02T03:04:05Z", "2026-01-02T03-04-05Z",
        // Julian in Foundation's calendar (the first found by theFastPathNeverReadsWhatFoundationRefuses).
        "0001-01-01T00:00:00Z", "0094-03-11T06:11:39.59900+16:48", "1000-06-15T12:00:00+02:00", "1582-10-04T23:59:59Z",
        "1582-10-15T00:00:00Z", "1582-12-31T23:59:59.5Z",
    ]

    @Test func invalidDateTimesAreNilAndTheConversionAgreesWithFoundation() throws {
        let context = try Self.makeContext()
        for text in Self.refused {
            #expect(ISO8601Text.date(text) == nil, "\(text) read as \(ISO8601Text.date(text)!.timeIntervalSince1970)")
            let converted = Self.converted(text, context)
            let theirs = Self.foundation(text)
            #expect(converted == theirs, "\(text): converted \(String(describing: converted)), Foundation \(String(describing: theirs))")
        }
    }

    /// The forms the fast path reads.
    static let read: [String] = [
        "2026-01-02T03:04:05Z", "2026-01-02T03:04:05z", "2026-01-02T03:04:05+01:00", "2026-01-02T03:04:05+0100",
        "2026-01-02T03:04:05+01", "2026-01-02T03:04:05-00:00", "2026-01-02T03:04:05+18:00", "2026-01-02T03:04:05-1800",
        "2026-01-02T03:04:05-05:45", "2026-01-02T03:04:05.5Z", "2026-01-02T03:04:05.123456789+05:30", "2000-02-29T00:00:00Z",
        "1900-01-01T00:00:00Z", "2199-12-31T23:59:59Z", "1969-12-31T23:59:59.999Z", "1583-01-01T00:00:00Z",
    ]

    @Test func theFormsItReadsAreFoundations() throws {
        for text in Self.read {
            let fast = try #require(ISO8601Text.date(text), "\(text)")
            let theirs = try #require(Self.foundation(text), "\(text)")
            #expect(abs(fast.timeIntervalSince(theirs)) <= 1e-6, "\(text): \(fast.timeIntervalSince1970) \(theirs.timeIntervalSince1970)")
        }
    }

    @Test func importsConvertDateTimesAsFoundationDoes() throws {
        let model = try ManagedObjectModel(version: "iso8601-1") {
            Entity("StampedRecord", as: StampedRecord.self) {
                Attribute("key", .integer64)
                Attribute("at", .date, optional: true)
                Unique("key")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let texts = Self.read + Self.refused
        let data = try JSONSerialization.data(withJSONObject: texts.enumerated().map { ["key": $0, "at": $1] })
        try context.performAndWait {
            let report = try StampedRecord.parseSkippingInvalid(jsonData: data, in: context)
            let imported = Dictionary(uniqueKeysWithValues: report.objects.map { ($0.key, $0.at) })
            for (i, text) in texts.enumerated() {
                if let theirs = Self.foundation(text) {
                    let at = imported[i] ?? nil
                    #expect(at.map { abs($0.timeIntervalSince(theirs)) <= 1e-6 } == true, "\(text): \(String(describing: at)), Foundation \(theirs)")
                } else {
                    #expect(report.skippedIndices.contains(i), "\(text) imported as \(String(describing: imported[i]))")
                }
            }
            context.rollback()
        }
    }

    @Test func leapDaysFollowTheGregorianRules() throws {
        for (year, isLeap) in [(1900, false), (2000, true), (2024, true), (2026, false), (2100, false), (2196, true)] {
            let text = "\(year)-02-29T12:00:00Z"
            #expect((ISO8601Text.date(text) != nil) == isLeap, "\(text)")
            if isLeap { #expect(ISO8601Text.date(text) == Self.foundation(text), "\(text)") }
            #expect(ISO8601Text.date("\(year)-02-28T12:00:00Z") == Self.foundation("\(year)-02-28T12:00:00Z"))
            #expect(ISO8601Text.date("\(year)-03-01T00:00:00Z")!.timeIntervalSince(ISO8601Text.date("\(year)-02-28T00:00:00Z")!)
                    == (isLeap ? 2 : 1) * 86_400, "\(year)")
        }
    }

    /// Damaged date-times: whatever the fast path reads, Foundation reads to the same instant, and the
    /// conversion gives what Foundation gives.
    @Test func theFastPathNeverReadsWhatFoundationRefuses() async throws {
        let context = try Self.makeContext()
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.damageAndCompare(seed: seed, context) }
        }
    }

    /// A random date-time with one or two characters changed, removed or inserted, read both ways.
    static func damageAndCompare(seed: Int, _ context: ManagedObjectContext) throws {
        let alphabet = Array("0123456789-+:.,TZtz x")
        var g = SplitMixGenerator(seed: seed)
        var text = Array(Self.randomStamp(&g).text)
        for _ in 0..<Int.random(in: 1...2, using: &g) {
            let at = Int.random(in: 0..<text.count, using: &g)
            switch Int.random(in: 0..<3, using: &g) {
            case 0: text[at] = alphabet.randomElement(using: &g)!
            case 1: text.remove(at: at)
            default: text.insert(alphabet.randomElement(using: &g)!, at: at)
            }
        }
        let damaged = String(text)
        let theirs = Self.foundation(damaged)
        if let fast = ISO8601Text.date(damaged) {
            let foundation = try #require(theirs, "seed \(seed): \(damaged) read, but Foundation refuses it")
            #expect(abs(fast.timeIntervalSince(foundation)) <= 1e-6, "seed \(seed): \(damaged)")
        }
        let converted = Self.converted(damaged, context)
        #expect(converted.map { d in theirs.map { abs(d.timeIntervalSince($0)) <= 1e-6 } ?? false } ?? (theirs == nil),
                "seed \(seed): \(damaged) converted \(String(describing: converted)), Foundation \(String(describing: theirs))")
    }
}
