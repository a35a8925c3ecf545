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

    /// Users, addresses and orders of the store as text, read in a context of its own.
    func snapshot(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait {
            let users = try reader.fetch(FetchRequest<PUser>()).map {
                "user \($0.uuid) \($0.firstName ?? "-") \($0.age) \($0.address?.id ?? "-") \($0.manager?.uuid ?? "-")"
            }
            let addresses = try reader.fetch(FetchRequest<PAddress>()).map {
                "address \($0.id) \($0.city ?? "-") \($0.users.map(\.uuid).sorted())"
            }
            return (users + addresses + (try reader.fetch(FetchRequest<POrder>()).map { "order \($0.number)" })).sorted()
        }
    }

    // Cycles of IDs through nested objects: JSON is a tree, so a cycle is an object nested (at some depth)
    // inside an object of the same ID. A finite one is a correct import, not an error: one object per ID,
    // every link of the cycle made, and each key's value the one mapped last, in `mapValues` order
    // (the nested copy's keys come after the keys its parent maps before the relationship).
    @Test func aFiniteCycleOfIDsImportsOneObjectPerIDWithEveryLink() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            let result = try PUser.parse(jsonArray: [
                // A user whose nested address's nested user is the same user.
                ["uuid": "u1", "first_name": "Outer", "age": 1,
                 "address": ["id": "a1", "city": "Split", "users": [["uuid": "u1", "first_name": "Inner", "address": "a1"]]]],
                // A → B → A through the manager relationship, with a value only the nested A sets.
                ["uuid": "A", "first_name": "A outer", "manager": ["uuid": "B", "manager": ["uuid": "A", "age": 9]]],
            ], in: context)
            #expect(result[0].address?.users.contains(result[0]) == true)
            try context.save()
        }
        #expect(try snapshot(coordinator) == [
            "address a1 Split [\"u1\"]",
            "user A A outer 9 - B",
            "user B - 0 - A",
            "user u1 Inner 1 a1 -",
        ])
    }

    // A cycle that goes on (a copy of the same objects nested again and again) stops at the depth limit
    // with a typed error naming the element, and nothing is written; so does a bad value deep in a cycle.
    @Test func anEndlessOrBadCycleIsATypedErrorAndWritesNothing() throws {
        let (coordinator, context) = try seeded()
        let before = try snapshot(coordinator)
        var json: [String: Any] = ["uuid": "u0"]
        for _ in 0..<100 { json = ["uuid": "u0", "address": ["id": "a0", "users": [json]]] }
        let deep = try #require(failure([["uuid": "u7"], json], context))
        #expect(deep.reason == .nestingTooDeep(limit: 64) && deep.index == 1)
        #expect(deep.key?.hasPrefix("address.users.0.address.users.0.") == true)
        let bad = try #require(failure([["uuid": "u0", "address": ["id": "a0", "users": [["uuid": "u0", "age": "old"]]]]], context))
        #expect(bad.reason == .unconvertible(expected: "Int") && bad.index == 0 && bad.key == "address.users.0.age" && bad.entity == "User")
        try expectUnchanged(coordinator, context)
        #expect(try snapshot(coordinator) == before)
    }

    // IDs of the wrong JSON type: what converts exactly to the ID's type is that ID ("7" and 7.0 for an
    // Int, 42 for a String); the rest is `.invalidID` naming the key and the value.
    @Test func idsOfEveryWrongType() throws {
        let (coordinator, context) = try seeded()
        for (value, expected) in [(3.5, "Int"), (true, "Int"), ("", "Int"), ("7x", "Int"), ([7], "Int"), (["id": 7], "Int")] as [(Any, String)] {
            let error = try #require(failure([["uuid": "u0", "orders": [["id": value]]]], context), "\(value)")
            #expect(error.reason == .invalidID(expected: expected) && error.key == "orders.0.id" && error.entity == "Order", "\(value): \(error)")
        }
        for value in [true, false, [1], NSNull()] as [Any] {
            let error = try #require(failure([["uuid": value]], context), "\(value)")
            #expect(error.index == 0 && error.key == "uuid", "\(value): \(error)")
        }
        try expectUnchanged(coordinator, context)
        try context.performAndWait {
            let orders = try POrder.parse(jsonArray: [["id": 7], ["id": "7"], ["id": 7.0]], in: context)
            #expect(orders[0] === orders[1] && orders[1] === orders[2])
            context.rollback()
            let users = try PUser.parse(jsonArray: [["uuid": 42], ["uuid": "42"]], in: context)
            #expect(users[0] === users[1] && users[0].uuid == "42")
            context.rollback()
        }
    }

    // 10 MB strings: into a String property they are ordinary values (stored and read back whole);
    // anywhere they do not convert, a typed error whose value is a short preview.
    @Test func tenMegabyteStringsInEveryKindOfProperty() throws {
        let (coordinator, context) = try seeded()
        let huge = String(repeating: "9x", count: 5_000_000)
        // ("9x9x…" is valid base64, so `avatar` takes it as data.)
        for key in ["level", "score", "balance", "is_active", "birth_date", "token", "status"] {
            // Not `#require(failure(…))`: a failing expectation would print the 10 MB argument.
            guard let error = failure([["uuid": "u0", key: huge]], context) else {
                Issue.record("\(key): imported")
                continue
            }
            #expect(error.key == key && error.value?.contains("10000000 bytes") == true && (error.value?.count ?? .max) < 200, "\(key)")
            #expect(String(describing: error).count < 400, "\(key)")
        }
        let nested = try #require(failure([["uuid": "u0", "address": ["id": [huge], "city": 1]]], context) as ParsingError?)
        #expect(nested.reason == .invalidID(expected: "String") && nested.key == "address.id")
        try expectUnchanged(coordinator, context)
        // The same string as a name is a value like any other.
        try context.performAndWait {
            try PUser.parse(jsonData: Data(#"[{"uuid": "u0", "first_name": "\#(huge)"}]"#.utf8), in: context)
            try context.save()
        }
        let stored = try storedUsers(coordinator)
        let name = stored["u0"]?.firstName
        #expect(name?.utf8.count == 10_000_000)
        #expect(name == huge, "the name read back differs")
    }

    // Every kind of bad JSON, through `parseAndSave` too: a typed error, and the store as it was.
    @Test func parseAndSaveRefusesBadJSONOfEveryKindAndWritesNothing() throws {
        let (coordinator, context) = try seeded()
        let before = try snapshot(coordinator)
        let bad: [[Any]] = [
            [["uuid": "u1", "age": 2], ["uuid": "u2", "age": "abc"]],                   // a wrong type
            [["uuid": "u1"], ["age": 4]],                                              // no ID
            [["uuid": "u1", "orders": [["id": "seven"]]]],                             // a nested ID of the wrong type
            [["uuid": "u1", "address": ["id": "a0", "users": [["uuid": "u1", "level": 99_999]]]]],   // bad inside a cycle
            [["uuid": "u1"], 17],                                                      // not an object
        ]
        for array in bad {
            context.performAndWait {
                #expect(throws: ParsingError.self, "\(array)") { try PUser.parseAndSave(jsonArray: array, in: context) }
                #expect(!context.hasChanges)
            }
        }
        #expect(try snapshot(coordinator) == before)
    }
}
