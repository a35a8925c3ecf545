import Foundation
import Granary
import GranaryRecords
import Testing

/// services.md §4.2 "Parsing" and the relationship lines of "The `<-` operator", on a durable store.
@Suite struct ParsingImportTests {
    func users(_ coordinator: PersistentStoreCoordinator) throws -> [String: StoredUser] {
        try storedUsers(coordinator)
    }

    func count<T: ManagedObject>(_: T.Type, _ coordinator: PersistentStoreCoordinator) throws -> Int {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait { try reader.fetch(FetchRequest<T>()).count }
    }

    @Test func insertsUpdatesInPlaceAndTheLaterDuplicateWins() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: [["uuid": "a", "age": 1], ["uuid": "b", "age": 2]], in: context)
            try context.save()
            let result = try PUser.parse(jsonArray: [
                ["uuid": "c", "age": 3], ["uuid": "a", "age": 10, "first_name": "Ann"], ["uuid": "c", "age": 30],
            ], in: context)
            // B: input order, and one object for the repeated ID.
            #expect(result.map(\.uuid) == ["c", "a", "c"])
            #expect(result[0] === result[2])
            try context.save()
        }
        let stored = try users(coordinator)
        #expect(stored.count == 3)
        #expect(stored["a"]?.age == 10 && stored["a"]?.firstName == "Ann")
        #expect(stored["b"]?.age == 2)
        #expect(stored["c"]?.age == 30)     // the later element wins
    }

    @Test func reimportingWhatTheStoreHoldsChangesNothing() throws {
        let (_, _, context) = try makeParsingStack()
        let json = Data(#"[{"uuid": "a", "age": 1, "first_name": "Ann"}, {"uuid": "b", "age": 2, "first_name": null}]"#.utf8)
        try context.performAndWait {
            try PUser.parse(jsonData: json, in: context)
            try context.save()
            // The same values again: found, mapped, and left unchanged (a plain setter would mark them).
            let again = try PUser.parse(jsonData: json, in: context)
            #expect(again.count == 2)
            #expect(!context.hasChanges && context.updatedObjects.isEmpty)
            // One value differs: that object alone is updated.
            try PUser.parse(jsonData: Data(#"[{"uuid": "a", "age": 5}, {"uuid": "b", "age": 2}]"#.utf8), in: context)
            #expect(context.updatedObjects.map { ($0 as? PUser)?.uuid } == ["a"])
            try context.save()
            // Outside an import, an equal write still marks the object, as Core Data does.
            again[1].age = 2
            #expect(context.hasChanges)
        }
    }

    @Test func aLargeArrayWithExistingIDsLeavesNoDuplicates() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            // More than two IN batches of existing IDs.
            try PUser.parse(jsonArray: (0..<2_500).map { ["uuid": "u\($0)", "age": $0] }, in: context)
            try context.save()
            try PUser.parse(jsonArray: (1_000..<4_000).map { ["uuid": "u\($0)", "age": -$0] }, in: context)
            try context.save()
        }
        let stored = try users(coordinator)
        #expect(stored.count == 4_000)
        #expect(stored["u5"]?.age == 5)
        #expect(stored["u2000"]?.age == -2_000)
        #expect(stored["u3999"]?.age == -3_999)
    }

    @Test func everyAttributeTypeFromJSONData() throws {
        let (_, coordinator, context) = try makeParsingStack()
        let token = UUID()
        let json = """
        [{"uuid": "u1", "first_name": "Mark", "last_name": null, "age": "42", "level": 7, "points": "70000",
          "big": 9007199254740993, "score": 2.5, "rating": "1.5", "balance": "10.25", "is_active": 1,
          "birth_date": "1954-03-10", "token": "\(token.uuidString)", "homepage": "https://example.com",
          "avatar": "AAEC", "status": "suspended"}]
        """
        try context.performAndWait {
            try PUser.parse(jsonData: Data(json.utf8), in: context)
            try context.save()
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let u = try #require(try reader.fetch(FetchRequest<PUser>()).first)
            #expect(u.firstName == "Mark" && u.lastName == nil)
            #expect(u.age == 42 && u.level == 7 && u.points == 70_000 && u.big == 9_007_199_254_740_993)
            #expect(u.score == 2.5 && u.rating == 1.5 && u.balance == Decimal(string: "10.25"))
            #expect(u.isActive)
            #expect(u.birthDate == Date(timeIntervalSince1970: -499_046_400))
            #expect(u.token == token && u.homepage == URL(string: "https://example.com") && u.avatar == Data([0, 1, 2]))
            #expect(u.status == .suspended)
        }
    }

    @Test func jsonKeyDefaultsToTheIDPropertyAndMayBeCustomOrDotted() throws {
        let (_, _, context) = try makeParsingStack()
        #expect(PUser.jsonKey == "uuid")     // read from the live model the class is bound to
        #expect(POrder.jsonKey == "id")
        try context.performAndWait {
            let events = try PEvent.parse(jsonArray: [["meta": ["id": 7], "title": "Launch"], ["meta": ["id": "7"], "title": "Again"]], in: context)
            #expect(events.count == 2 && events[0] === events[1])
            #expect(events[0].code == 7 && events[0].title == "Again")
            try context.save()
            let orders = try POrder.parse(jsonArray: [["id": 5, "total": "9.99"]], in: context)
            #expect(orders[0].number == 5 && orders[0].total == Decimal(string: "9.99"))
        }
    }

    @Test func toOneFromANestedObjectAnIDOrAOneElementArray() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: [
                ["uuid": "u1", "address": ["id": "a1", "city": "Split"]],
                ["uuid": "u2", "address": "a1"],                          // links the same address
                ["uuid": "u3", "address": ["a2"]],                        // a stub holding only the ID
                ["uuid": "u4", "address": ["id": "a1", "street": "Riva"]], // upserts a1, mapped again
            ], in: context)
            try context.save()
        }
        var stored = try users(coordinator)
        #expect(stored["u1"]?.addressID == "a1" && stored["u2"]?.addressID == "a1")
        #expect(stored["u1"]?.addressCity == "Split" && stored["u1"]?.addressStreet == "Riva")
        #expect(stored["u3"]?.addressID == "a2" && stored["u3"]?.addressCity == nil)
        #expect(try count(PAddress.self, coordinator) == 2)
        // A null clears an optional to-one; an absent key leaves it.
        try context.performAndWait {
            try PUser.parse(jsonArray: [["uuid": "u1", "address": NSNull()], ["uuid": "u2"]], in: context)
            try context.save()
        }
        stored = try users(coordinator)
        #expect(stored["u1"]?.addressID == nil)
        #expect(stored["u2"]?.addressID == "a1")
    }

    @Test func toManyReplacesTheSetFromObjectsIDsOrASingleOne() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: [
                ["uuid": "u1", "orders": [["id": 1, "total": 5], ["id": 2]]],
                ["uuid": "u2", "orders": [3, "4"]],
                ["uuid": "u3", "orders": ["id": 5]],
                ["uuid": "u4", "orders": 6],
            ], in: context)
            try context.save()
        }
        var stored = try users(coordinator)
        #expect(stored["u1"]?.orders == [1, 2])
        #expect(stored["u1"]?.orderTotals[1] == 5)
        #expect(stored["u2"]?.orders == [3, 4])
        #expect(stored["u3"]?.orders == [5])
        #expect(stored["u4"]?.orders == [6])
        try context.performAndWait {
            try PUser.parse(jsonArray: [["uuid": "u1", "orders": [2, 7]], ["uuid": "u2", "orders": NSNull()]], in: context)
            try context.save()
        }
        stored = try users(coordinator)
        #expect(stored["u1"]?.orders == [2, 7])   // replaced, not added to
        #expect(stored["u2"]?.orders == [])                         // null empties
        #expect(try count(POrder.self, coordinator) == 7)
    }

    @Test func orderedToManyKeepsTheJSONOrder() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: [["uuid": "u1", "tags": ["c", ["slug": "a"], "b", "c"]]], in: context)
            try context.save()
        }
        #expect(try users(coordinator)["u1"]?.tags == ["c", "a", "b"])
        try context.performAndWait {
            try PUser.parse(jsonArray: [["uuid": "u1", "tags": ["b", "z"]]], in: context)
            try context.save()
        }
        #expect(try users(coordinator)["u1"]?.tags == ["b", "z"])
    }

    @Test func aToOneNamingItsOwnIDTerminates() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            let result = try PUser.parse(jsonArray: [
                ["uuid": "u1", "first_name": "Outer", "manager": ["uuid": "u1", "first_name": "Inner", "manager": "u1"]],
                ["uuid": "u2", "manager": ["uuid": "u3", "manager": ["uuid": "u2", "age": 5]]],
            ], in: context)
            #expect(result[0].manager === result[0])
            try context.save()
        }
        let stored = try users(coordinator)
        #expect(stored.count == 3)
        #expect(stored["u1"]?.managerID == "u1")
        // Keys are read in `mapValues` order: `manager` after `first_name`, so the nested copy's name stays.
        #expect(stored["u1"]?.firstName == "Inner")
        #expect(stored["u2"]?.managerID == "u3" && stored["u3"]?.managerID == "u2" && stored["u2"]?.age == 5)
    }
}

/// A user as the store holds it, read in a context of its own (objects die with their context).
struct StoredUser: Equatable {
    var age: Int
    var firstName: String?
    var addressID: String?
    var addressCity: String?
    var addressStreet: String?
    var orders: Set<Int>
    var orderTotals: [Int: Decimal]
    var tags: [String]
    var managerID: String?
}

func storedUsers(_ coordinator: PersistentStoreCoordinator) throws -> [String: StoredUser] {
    let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    return try reader.performAndWait {
        var result: [String: StoredUser] = [:]
        for u in try reader.fetch(FetchRequest<PUser>()) {
            result[u.uuid] = StoredUser(
                age: u.age, firstName: u.firstName, addressID: u.address?.id, addressCity: u.address?.city,
                addressStreet: u.address?.street, orders: Set(u.orders.map(\.number)),
                orderTotals: Dictionary(uniqueKeysWithValues: u.orders.map { ($0.number, $0.total) }),
                tags: u.tags.map(\.slug), managerID: u.manager?.uuid)
        }
        return result
    }
}

@Suite struct MappingValuesOutsideParseTests {
    @Test func aMapOverADirtyContextFindsItsPendingInserts() throws {
        let (_, _, context) = try makeParsingStack()
        try context.performAndWait {
            let pending = PAddress(context: context)
            pending.id = "a1"
            let user = PUser(context: context)
            user.uuid = "u1"
            let map = MappingValues(json: ["address": "a1", "orders": [1, 2]], context: context)
            try user.address <- map["address"]
            try user.orders <- map["orders"]
            #expect(user.address === pending)       // not a second a1
            #expect(Set(user.orders.map(\.number)) == [1, 2])
            #expect(map.context === context)
        }
    }
}
