import Foundation
import Testing
@testable import Granary

/// Foundation also declares a `PredicateParseError`; ours is the module's.
private typealias PredicateParseError = Granary.PredicateParseError

/// An object with an attribute of every type, for values from outside.
final class HostileSample: ManagedObject {
    @Managed var at: Date?
    @Managed var plainAt: Date?
}

/// A transformable value whose coding fails with an error that holds the date it could not code.
struct HostileStamp: Codable, Sendable {
    struct Unencodable: Error { var when: Date }
    var when: Date

    func encode(to encoder: any Encoder) throws {
        guard when.timeIntervalSinceReferenceDate.isFinite else { throw Unencodable(when: when) }
        var container = encoder.singleValueContainer()
        try container.encode(when.timeIntervalSinceReferenceDate)
    }
}

/// NaN and infinite dates and doubles, and very long values, through every public entry that describes
/// or compares a value: setting attributes and relationships, validation on save, predicate constants
/// and arguments, fetches, batch requests, uniqueness, migration. Foundation's `Date.description` traps on
/// a NaN date, so every error message about one used to kill the process.
@Suite struct HostileValueTests {
    static let nanDate = Date(timeIntervalSinceReferenceDate: .nan)
    static let nanText = "Date(timeIntervalSinceReferenceDate: nan)"
    static let cutNote = "… (cut at \(SafeDescription.maximumLength) characters)"

    static let attributeTypes: [(String, AttributeType)] = [
        ("i16", .integer16), ("i32", .integer32), ("i64", .integer64), ("decimal", .decimal), ("double", .double),
        ("float", .float), ("string", .string), ("flag", .boolean), ("plainAt", .date), ("bytes", .binaryData),
        ("id", .uuid), ("link", .uri), ("stamp", .transformable(HostileStamp.self, name: "HostileStamp")),
    ]

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("HostileSample", as: HostileSample.self) {
                for (name, type) in attributeTypes { Attribute(name, type, optional: true) }
                Attribute("at", .date, optional: true)
                Attribute("score", .double, optional: true)
                Attribute("plainScore", .double, optional: true)
                Attribute("uniqueAt", .date, optional: true)
                // Bounds of the other kind: comparing an infinite double with a decimal made a Decimal of it.
                Attribute("boundedDouble", .double, optional: true, validation: [.range(min: .decimal(0), max: .decimal(10))])
                Attribute("boundedDecimal", .decimal, optional: true, validation: [.range(min: .double(-.infinity), max: .double(.infinity))])
                Attribute("boundedAt", .date, optional: true, validation: [.range(min: .date(Date(timeIntervalSinceReferenceDate: 0)), max: nil)])
                Relationship("friend", to: "HostileSample", inverse: "friendOf")
                Relationship("friendOf", toMany: "HostileSample", inverse: "friend")
                Index("byAt", "at")
                Index("byScore", "score")
                Unique("uniqueAt")
            }
        }
    }

    static func makeContext() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .inMemory)
        return ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    /// What a call did: "ok", or the error's description.
    static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "ok"
        } catch {
            return "\(error)"
        }
    }

    struct Holder { var when: Date }

    static var hostileValues: [(String, Any?)] { [
        ("NaN date", nanDate), ("+inf date", Date(timeIntervalSinceReferenceDate: .infinity)),
        ("-inf date", Date(timeIntervalSinceReferenceDate: -.infinity)), ("optional NaN date", Optional(nanDate)),
        ("NaN double", Double.nan), ("+inf double", Double.infinity), ("-inf double", -Double.infinity),
        ("NaN float", Float.nan), ("+inf float", Float.infinity), ("dates", [nanDate]), ("dictionary", ["when": nanDate]),
        ("struct", Holder(when: nanDate)), ("long string", String(repeating: "x", count: 1_000_000)),
        ("stamp", HostileStamp(when: nanDate)),
    ] }

    @Test func settingAnyPropertyToAHostileValueStoresItOrThrowsAMessageThatNamesIt() throws {
        let context = try Self.makeContext()
        var outcomes: [String: String] = [:]
        context.performAndWait {
            let object = HostileSample(context: context)
            for key in Self.attributeTypes.map(\.0) + ["at", "friend", "friendOf"] {
                for (label, value) in Self.hostileValues {
                    outcomes["\(key) ← \(label)"] = Self.outcome { try object.setValue(value, forKey: key) }
                }
            }
            context.rollback()
        }
        for (attempt, outcome) in outcomes {
            #expect(outcome.count < 2 * SafeDescription.maximumLength + 200, "\(attempt): \(outcome.prefix(300))")
            if attempt.hasSuffix("NaN date") && outcome != "ok" { #expect(outcome.contains(Self.nanText), "\(attempt): \(outcome)") }
            if attempt.hasSuffix("long string") && outcome != "ok" { #expect(outcome.contains(Self.cutNote), "\(attempt): \(outcome)") }
        }
        // Dates and doubles that are not finite are values like any other where the type takes them.
        #expect(outcomes["plainAt ← NaN date"] == "ok" && outcomes["at ← +inf date"] == "ok")
        #expect(outcomes["double ← NaN double"] == "ok" && outcomes["float ← -inf double"] == "ok")
        #expect(outcomes["i64 ← NaN date"] == "HostileSample.i64 cannot hold \(Self.nanText): integer64 attribute 'HostileSample.i64' cannot hold a value of type Date")
        #expect(outcomes["friend ← dates"] == "HostileSample.friend cannot hold [\(Self.nanText)]: expected a managed object or nil")
        #expect(outcomes["friendOf ← struct"] == "HostileSample.friendOf cannot hold Holder(when: \(Self.nanText)): expected a set or array of managed objects")
        #expect(outcomes["decimal ← +inf double"]?.hasPrefix("HostileSample.decimal cannot hold inf: inf does not fit") == true)
        #expect(outcomes["stamp ← stamp"] == "HostileSample.stamp cannot hold HostileStamp(when: \(Self.nanText)): coding a value of attribute 'HostileSample.stamp' (transformable 'HostileStamp') failed: "
            + "Unencodable(when: \(Self.nanText))")
    }

    @Test func savingValidatesNonFiniteValuesAgainstBoundsOfEveryKind() throws {
        let context = try Self.makeContext()
        let messages = try context.performAndWait { () -> [String] in
            var messages: [String] = []
            for (key, value) in [("boundedDouble", Double.infinity as Any), ("boundedDouble", -Double.infinity), ("boundedDouble", Double.nan),
                                 ("boundedDecimal", Decimal(5)), ("boundedAt", Date(timeIntervalSinceReferenceDate: -.infinity))] {
                let object = HostileSample(context: context)
                try object.setValue(value, forKey: key)
                messages.append(Self.outcome { try context.save() })
                context.rollback()
            }
            return messages
        }
        #expect(messages == [
            "1 validation error(s): 'HostileSample.boundedDouble' is inf, above the maximum 10",
            "1 validation error(s): 'HostileSample.boundedDouble' is -inf, below the minimum 0",
            "1 validation error(s): 'HostileSample.boundedDouble' is nan, above the maximum 10",
            "ok",
            "1 validation error(s): 'HostileSample.boundedAt' is Date(timeIntervalSinceReferenceDate: -inf), below the minimum 2001-01-01T00:00:00Z",
        ])
    }

    @Test func predicateArgumentsAndConstantsThatAreNotFiniteAreDescribedAndReadBack() throws {
        let nan = Self.nanDate
        #expect(throws: PredicateParseError.argument(message: "%K needs a key path string, got \(Self.nanText) of type Date", offset: 0)) {
            try PredicateParser.parse("%K == 1", arguments: [nan])
        }
        #expect(throws: PredicateParseError.argument(message: "%d needs an integer, got [\(Self.nanText)] of type Array<Date>", offset: 5)) {
            try PredicateParser.parse("at > %d", arguments: [[nan]])
        }
        for date in [nan, Date(timeIntervalSinceReferenceDate: .infinity), Date(timeIntervalSinceReferenceDate: -.infinity)] {
            let node = try PredicateParser.parse("at == %@", arguments: [date])
            let interval = date.timeIntervalSinceReferenceDate
            #expect(node.description == "at == CAST('\(interval)', \"NSDate\")")
            #expect(try PredicateParser.parse(node.description).description == node.description)
            #expect((FetchPredicate.key("at") < date).description == "at < CAST('\(interval)', \"NSDate\")")
        }
        let lowered = PredicateNode.lower(#Predicate<HostileSample> { $0.at == nan }) { _ in ["at"] }
        #expect(lowered?.description == "at == CAST('nan', \"NSDate\")")
    }

    /// An index holds NaN after +inf, where evaluation finds it equal to nothing and unordered: a NaN
    /// constant used to bind an index column as null (`d.isNaN ? nil : v` made `Value.null` of the
    /// literal), so `score == NaN` found the objects without a score.
    @Test func fetchesWithNonFiniteDatesAndDoublesAgreeWithAndWithoutAnIndex() throws {
        let context = try Self.makeContext()
        let intervals: [Double?] = [.nan, .infinity, -.infinity, 0, 100, nil]
        let results = try context.performAndWait { () -> [String: [String]] in
            for interval in intervals {
                let object = HostileSample(context: context)
                for key in ["at", "plainAt"] { try object.setValue(interval.map(Date.init(timeIntervalSinceReferenceDate:)), forKey: key) }
                for key in ["score", "plainScore"] { try object.setValue(interval, forKey: key) }
            }
            try context.save()
            var results: [String: [String]] = [:]
            for key in ["at", "plainAt", "score", "plainScore"] {
                let isDate = key.lowercased().hasSuffix("at")
                func constant(_ d: Double) -> Value { isDate ? .date(Date(timeIntervalSinceReferenceDate: d)) : .double(d) }
                func fetch(_ filter: PredicateNode?, sorted: Bool = false) throws -> [String] {
                    var request = FetchRequest<HostileSample>()
                    request.filter = filter
                    if sorted { request.sortKeys = [SortKey(key)] }
                    let values = try context.fetch(request).map { object -> Double? in
                        let value = try object.value(forKey: key)
                        return (value as? Date)?.timeIntervalSinceReferenceDate ?? value as? Double
                    }
                    return (sorted ? values : values.sorted { ($0 ?? -1e300) < ($1 ?? -1e300) }).map { $0.map { "\($0)" } ?? "nil" }
                }
                let name = key.hasPrefix("plain") ? "plain" : "indexed"
                let kind = isDate ? "date" : "double"
                results["\(name) \(kind) == NaN"] = try fetch(.compare([key], .equal, .value(constant(.nan))))
                results["\(name) \(kind) IN {NaN}"] = try fetch(.isIn([key], [constant(.nan)]))
                results["\(name) \(kind) > 50"] = try fetch(.compare([key], .greater, .value(constant(50))))
                results["\(name) \(kind) sorted"] = try fetch(nil, sorted: true)
                var request = FetchRequest<HostileSample>()
                request.filter = .compare([key], .greaterOrEqual, .value(constant(.nan)))
                results["\(name) \(kind) count"] = ["\(try context.count(for: request))"]
                results["\(name) \(kind) explain"] = [try context.explain(request).explain]
            }
            return results
        }
        for kind in ["date", "double"] {
            for question in ["== NaN", "IN {NaN}", "> 50", "sorted", "count"] {
                #expect(results["indexed \(kind) \(question)"] == results["plain \(kind) \(question)"], "\(kind) \(question)")
            }
            #expect(results["indexed \(kind) == NaN"] == [] && results["indexed \(kind) > 50"] == ["100.0", "inf"])
            // Null first, NaN after +inf, as the index orders them.
            #expect(results["indexed \(kind) sorted"] == ["nil", "-inf", "0.0", "100.0", "inf", "nan"])
        }
        #expect(results["indexed date explain"] == ["SCAN HostileSample, RESIDUAL at >= CAST('nan', \"NSDate\")"])
    }

    @Test func batchRequestsDescribeValuesOnlyWhenRefusingThem() throws {
        let context = try Self.makeContext()
        let outcomes = try context.performAndWait { () -> [String] in
            _ = HostileSample(context: context)
            try context.save()
            return [
                // Describing every value up front made a NaN date trap even where it was valid.
                Self.outcome { _ = try context.execute(BatchUpdateRequest(entityName: "HostileSample", propertiesToUpdate: ["plainAt": Self.nanDate])) },
                Self.outcome { _ = try context.execute(BatchInsertRequest(entityName: "HostileSample", objects: [["plainAt": Self.nanDate]])) },
                Self.outcome { _ = try context.execute(BatchInsertRequest(entityName: "HostileSample", objects: [["string": Self.nanDate]])) },
                Self.outcome { _ = try context.execute(BatchUpdateRequest(entityName: "HostileSample", propertiesToUpdate: ["friend": [Self.nanDate]])) },
            ]
        }
        #expect(outcomes == [
            "ok", "ok",
            "object 0 of the batch insert: HostileSample.string cannot hold \(Self.nanText): string attribute 'HostileSample.string' cannot hold a value of type Date",
            "HostileSample.friend cannot hold [\(Self.nanText)]: batch requests set attributes only; set relationships on managed objects",
        ])
    }

    @Test func aUniquenessViolationOnANaNDateNamesIt() throws {
        let context = try Self.makeContext()
        let message = try context.performAndWait { () -> String in
            for _ in 0..<2 { try HostileSample(context: context).setValue(Self.nanDate, forKey: "uniqueAt") }
            return Self.outcome { try context.save() }
        }
        #expect(message.hasPrefix("uniqueness constraint (uniqueAt) of HostileSample is violated by \(Self.nanText)"), "\(message)")
    }

    @Test func aCustomMigrationThatThrowsAnErrorHoldingANaNDateIsReported() throws {
        let v1 = try ManagedObjectModel(version: "1") { Entity("Person") { Attribute("at", .date, optional: true) } }
        let v2 = try ManagedObjectModel(version: "2") { Entity("Person") { Attribute("at", .date, optional: true); Attribute("note", .string, optional: true) } }
        let store = MigrationHarness()
        try store.write(v1) { context in try context.insert("Person", ["at": Self.nanDate]) }
        struct Refused: Error { var when: Date }
        var options = PersistentStore.Options()
        options.migration.steps = [MigrationStep(from: v1, to: v2) {
            EntityMigration.transform("Person") { old, _ in throw Refused(when: old["at"] as? Date ?? Date()) }
        }]
        let message = Self.outcome { try store.open(v2, options: options) { _, _ in } }
        #expect(message.hasSuffix("failed: Refused(when: \(Self.nanText))"), "\(message)")
    }
}
