import Foundation
import Granary
import GranaryRecords
import Testing

/// An import of more than one batch (1,000 IDs) of existing objects reads the batches on another thread
/// while it maps the elements before them. What it saves must be what an import read all at once saves.
@Suite struct ParsingPipelineTests {
    /// 3,000 saved users u0…u2999, ages 0…2999.
    func storeWithUsers(_ n: Int = 3_000) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: (0..<n).map { ["uuid": "u\($0)", "age": $0] }, in: context)
            try context.save()
        }
        // A fresh context: the import must read the users from the store, not find them registered.
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }

    @Test func aRelationshipToAnElementOfALaterBatchFindsTheStoredObject() throws {
        let (coordinator, context) = try storeWithUsers()
        // Element 0 names u2999 as its manager before the batch holding u2999 has been made; a new user
        // names u2500; u2999's own element comes last and changes its age.
        var json: [[String: Any]] = [["uuid": "u0", "age": -1, "manager": "u2999"], ["uuid": "new", "age": 7, "manager": "u2500"]]
        json += (1..<3_000).map { ["uuid": "u\($0)", "age": -$0] }
        try context.performAndWait {
            let objects = try PUser.parse(jsonArray: json, in: context)
            #expect(objects.count == json.count)
            #expect(objects[0].manager === objects.last)
            #expect(Set(objects.map(ObjectIdentifier.init)).count == 3_001)
            try context.save()
        }
        let stored = try storedUsers(coordinator)
        #expect(stored.count == 3_001)
        #expect(stored["u0"]?.managerID == "u2999")
        #expect(stored["new"]?.managerID == "u2500")
        #expect(stored["u2999"]?.age == -2_999)
        #expect(stored["u1234"]?.age == -1_234)
    }

    @Test func aBadElementAfterSeveralBatchesLeavesTheStoreAndContextAsTheyWere() throws {
        let (coordinator, context) = try storeWithUsers()
        var json: [[String: Any]] = (0..<3_000).map { ["uuid": "u\($0)", "age": $0 + 10_000] }
        json[2_500]["age"] = "many"
        context.performAndWait {
            #expect {
                try PUser.parse(jsonArray: json, in: context)
            } throws: { error in
                (error as? ParsingError)?.index == 2_500 && (error as? ParsingError)?.key == "age"
            }
            #expect(!context.hasChanges)
        }
        #expect(try storedUsers(coordinator)["u2999"]?.age == 2_999)
        // The same context imports again at once, the bad element fixed.
        json[2_500]["age"] = 1
        try context.performAndWait {
            try PUser.parse(jsonArray: json, in: context)
            try context.save()
        }
        let stored = try storedUsers(coordinator)
        #expect(stored.count == 3_000)
        #expect(stored["u2500"]?.age == 1)
        #expect(stored["u2999"]?.age == 12_999)
    }

    @Test func existingObjectsAlreadyRegisteredKeepTheirIdentityAndNewIDsAreInserted() throws {
        let (coordinator, context) = try storeWithUsers()
        try context.performAndWait {
            // Users registered before the import: the batches must hand back these very objects.
            let held = try context.fetch(FetchRequest<PUser>(predicate: #Predicate { $0.age < 5 }))
            #expect(held.count == 5)
            let json: [[String: Any]] = (0..<4_500).map { ["uuid": "u\($0)", "first_name": "n\($0)"] }
            let objects = try PUser.parse(jsonArray: json, in: context)
            for user in held { #expect(objects[user.age] === user) }
            #expect(objects[4_000].objectID.isTemporaryID)
            #expect(!objects[2_000].objectID.isTemporaryID)
            try context.save()
        }
        let stored = try storedUsers(coordinator)
        #expect(stored.count == 4_500)
        #expect(stored["u3"]?.firstName == "n3" && stored["u3"]?.age == 3)
        #expect(stored["u4499"]?.firstName == "n4499")
    }

    @Test func twoLargeImportsRacingLeaveOneObjectPerID() async throws {
        let (coordinator, _) = try storeWithUsers(2_000)
        let json: [Any] = (0..<4_000).map { ["uuid": "u\($0)", "age": $0 * 2] }
        let payload = JSONList(elements: json)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                    try context.performAndWait { _ = try PUser.parseAndSave(jsonArray: payload.elements, in: context) }
                }
            }
            try await group.waitForAll()
        }
        let stored = try storedUsers(coordinator)
        #expect(stored.count == 4_000)
        #expect(stored["u3999"]?.age == 7_998 && stored["u10"]?.age == 20)
    }
}

/// JSON made once and only read afterwards, handed to tasks.
private struct JSONList: @unchecked Sendable {
    let elements: [Any]
}
