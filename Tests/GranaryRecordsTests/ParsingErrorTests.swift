import Foundation
import Granary
import GranaryRecords
import Testing

/// Bad JSON of every kind gives a typed error naming index, key and value, and leaves the store (and the
/// context) as they were; the skipping mode imports the rest and reports the bad indices.
@Suite struct ParsingErrorTests {
    /// A store holding u0 (age 1) with address a0, and a context on it without changes.
    func seeded() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(json: ["uuid": "u0", "age": 1, "address": ["id": "a0", "city": "Zadar"]], in: context)
            try context.save()
        }
        return (coordinator, context)
    }

    func expectUnchanged(_ coordinator: PersistentStoreCoordinator, _ context: ManagedObjectContext,
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try storedUsers(coordinator)
        #expect(Array(stored.keys) == ["u0"], sourceLocation: sourceLocation)
        #expect(stored["u0"]?.age == 1 && stored["u0"]?.addressCity == "Zadar", sourceLocation: sourceLocation)
        context.performAndWait { #expect(!context.hasChanges, "the context was not rolled back", sourceLocation: sourceLocation) }
    }

    func failure(_ array: [Any], _ context: ManagedObjectContext) -> ParsingError? {
        context.performAndWait {
            do {
                try PUser.parse(jsonArray: array, in: context)
                try context.save()
                return nil
            } catch let e as ParsingError { return e } catch { return nil }
        }
    }

    @Test func anUnconvertibleValueFailsTheCallWithIndexKeyAndValue() throws {
        let (coordinator, context) = try seeded()
        let error = try #require(failure([["uuid": "u1", "age": 2], ["uuid": "u0", "age": 5], ["uuid": "u2", "age": "abc"]], context))
        #expect(error.reason == .unconvertible(expected: "Int"))
        #expect(error.index == 2 && error.key == "age" && error.value == "\"abc\"" && error.entity == "User")
        #expect(String(describing: error).contains("element 2"))
        try expectUnchanged(coordinator, context)
        // 3.7 into Int: not silently 0.
        let fraction = try #require(failure([["uuid": "u0", "age": 3.7]], context))
        #expect(fraction.index == 0 && fraction.key == "age" && fraction.value == "3.7")
        try expectUnchanged(coordinator, context)
    }

    @Test func wrongTypesOfEveryKind() throws {
        let (coordinator, context) = try seeded()
        let cases: [(json: [String: Any], key: String)] = [
            (["uuid": "u1", "is_active": "maybe"], "is_active"),
            (["uuid": "u1", "score": ["x"]], "score"),
            (["uuid": "u1", "first_name": ["a": 1]], "first_name"),
            (["uuid": "u1", "birth_date": "yesterday"], "birth_date"),
            (["uuid": "u1", "token": 12], "token"),
            (["uuid": "u1", "avatar": "%%%"], "avatar"),
            (["uuid": "u1", "status": "unknown"], "status"),
            (["uuid": "u1", "level": 1_000_000], "level"),
            (["uuid": "u1", "address": ["id": "a9", "city": 3.5, "street": ["x"]]], "address.street"),
            (["uuid": "u1", "address": [["id": "a1"], ["id": "a2"]]], "address"),
            (["uuid": "u1", "orders": [1, ["id": "x"]]], "orders.1.id"),
            (["uuid": "u1", "orders": [1, true]], "orders.1"),
        ]
        for (json, key) in cases {
            let error = try #require(failure([["uuid": "u0", "age": 9], json], context), "\(json)")
            #expect(error.index == 1 && error.key == key, "\(json): \(error)")
            try expectUnchanged(coordinator, context)
        }
    }

    @Test func missingIDsAndIDsOfTheWrongType() throws {
        let (coordinator, context) = try seeded()
        let missing = try #require(failure([["uuid": "u0", "age": 3], ["age": 4]], context))
        #expect(missing.reason == .missingID && missing.index == 1 && missing.key == "uuid")
        try expectUnchanged(coordinator, context)
        let null = try #require(failure([["uuid": NSNull()]], context))
        #expect(null.reason == .missingID && null.index == 0)
        let wrong = try #require(failure([["uuid": ["nested"]]], context))
        #expect(wrong.reason == .invalidID(expected: "String") && wrong.index == 0)
        // A nested object without its ID, and an Int ID given as text that is no number.
        let nested = try #require(failure([["uuid": "u0", "address": ["city": "Pula"]]], context))
        #expect(nested.reason == .missingID && nested.key == "address.id" && nested.entity == "Address")
        let orderID = try #require(failure([["uuid": "u0", "orders": [["id": "seven"]]]], context))
        #expect(orderID.reason == .invalidID(expected: "Int") && orderID.key == "orders.0.id")
        let notObject = try #require(failure([["uuid": "u0"], "u1"], context))
        #expect(notObject.reason == .notAnObject && notObject.index == 1)
        try expectUnchanged(coordinator, context)
    }

    @Test func runawayNestingIsAnErrorNotACrash() throws {
        let (coordinator, context) = try seeded()
        var json: [String: Any] = ["uuid": "deep"]
        for i in 0..<200 { json = ["uuid": "m\(i % 3)", "manager": json] }
        let error = try #require(failure([json], context))
        #expect(error.reason == .nestingTooDeep(limit: 64) && error.index == 0)
        try expectUnchanged(coordinator, context)
    }

    @Test func tenMegabyteStringsGiveAShortTypedError() throws {
        let (coordinator, context) = try seeded()
        let huge = String(repeating: "9x", count: 5_000_000)
        let error = try #require(failure([["uuid": "u0", "age": huge]], context))
        #expect(error.key == "age" && error.index == 0)
        #expect((error.value?.count ?? .max) < 200 && error.value?.contains("10000000 bytes") == true)
        try expectUnchanged(coordinator, context)
        // As an Int ID.
        let order = try #require(failure([["uuid": "u0", "orders": [huge]]], context))
        #expect(order.reason == .invalidID(expected: "Int"))
        try expectUnchanged(coordinator, context)
    }

    @Test func dataThatIsNotJSON() throws {
        let (coordinator, context) = try seeded()
        for text in ["{\"uuid\": ", "42", "\"x\"", "[1, 2", ""] {
            let error = context.performAndWait { () -> ParsingError? in
                do { try PUser.parse(jsonData: Data(text.utf8), in: context); return nil } catch let e as ParsingError { return e } catch { return nil }
            }
            guard case .invalidJSON? = error?.reason else {
                Issue.record("\(text): \(String(describing: error))")
                continue
            }
        }
        try expectUnchanged(coordinator, context)
    }

    @Test func aContextWithUnsavedChangesIsRefusedAndKept() throws {
        let (coordinator, context) = try seeded()
        try context.performAndWait {
            let other = try context.fetch(FetchRequest<PUser>())[0]
            other.age = 77
            #expect(throws: ParsingError(.contextHasUnsavedChanges, entity: "PUser")) {
                try PUser.parse(jsonArray: [["uuid": "u5"]], in: context)
            }
            #expect(other.age == 77 && context.hasChanges)
            context.rollback()
        }
        try expectUnchanged(coordinator, context)
    }

    @Test func theSkippingModeImportsTheRestAndReportsTheBadIndices() throws {
        let (coordinator, context) = try seeded()
        let report = try context.performAndWait {
            let report = try PUser.parseSkippingInvalid(jsonArray: [
                ["uuid": "u1", "age": 10],
                ["age": 11],                                            // no ID
                ["uuid": "u2", "age": "abc", "address": ["id": "a7"]],  // fails after linking a new address
                "junk",
                ["uuid": "u0", "age": 12],
                ["uuid": true],                                          // an ID of the wrong type
                ["uuid": "u3", "orders": [["total": 1]]],               // a nested object without ID
            ], in: context)
            try context.save()
            return (objects: report.objects.map(\.uuid), skipped: report.skippedIndices, errors: report.skipped)
        }
        #expect(report.objects == ["u1", "u0"])
        #expect(report.skipped == [1, 2, 3, 5, 6])
        #expect(report.errors.first { $0.index == 2 }?.key == "age")
        let stored = try storedUsers(coordinator)
        #expect(Set(stored.keys) == ["u0", "u1"])
        #expect(stored["u0"]?.age == 12 && stored["u1"]?.age == 10)
        // The half-mapped element left nothing behind: no address a7, no order.
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (addresses, orders) = try reader.performAndWait { () throws -> ([String], Int) in
            (try reader.fetch(FetchRequest<PAddress>()).map(\.id), try reader.fetch(FetchRequest<POrder>()).count)
        }
        #expect(addresses == ["a0"] && orders == 0)
    }
}
