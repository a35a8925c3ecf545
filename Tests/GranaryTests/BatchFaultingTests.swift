import Foundation
import Testing

@testable import Granary

/// Faults load a batch at a time (`BatchFaulter`). Whatever order code touches a relationship's
/// members or a batched fetch's objects in, the loads must stay linear in their number: a bounded
/// window of loaded batches touched out of order reloaded a batch on nearly every touch (issue 16).
@Suite struct BatchFaultingTests {
    static let memberCount = 5_000

    /// A saved company with `memberCount` employees, named so that name order is neither ID order nor
    /// hash order; a new context on the same store, with nothing loaded, for each check.
    static func makeCompany() throws -> (PersistentStoreCoordinator, expected: [String: Int]) {
        let (coordinator, context) = try makeStack()
        var expected: [String: Int] = [:]
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Big"
            for i in 0..<memberCount {
                let e = Employee(context: context)
                e.name = "E\((i * 7_919) % memberCount)"
                e.salary = i
                e.company = company
                expected[e.name] = i
            }
            try context.save()
        }
        return (coordinator, expected)
    }

    /// Fetches the company in a new context and returns its employees as the relationship hands them
    /// out, the context, and the fault statistics before any member was touched.
    static func members(_ coordinator: PersistentStoreCoordinator) throws -> (Set<Employee>, ManagedObjectContext) {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let members = try context.performAndWait {
            let company = try #require(try context.fetch(FetchRequest<Company>()).first)
            return company.employees
        }
        return (members, context)
    }

    static var batchLoads: Int { (memberCount + BatchFaulter.relationshipBatchSize - 1) / BatchFaulter.relationshipBatchSize }

    @Test func iteratingARelationshipAsASetLoadsEachBatchOnce() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (members, context) = try Self.members(coordinator)
        context.performAndWait {
            #expect(members.count == Self.memberCount && members.allSatisfy(\.isFault))
            let before = context.faultStatistics
            for e in members { #expect(e.salary == expected[e.name]) }
            let loads = context.faultStatistics.loads - before.loads
            #expect(loads <= Self.batchLoads + 1, "\(loads) loads for \(Self.batchLoads) batches")
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects == Self.memberCount)
            #expect(members.allSatisfy { !$0.isFault })
        }
    }

    @Test func iteratingARelationshipSortedByAPropertyLoadsEachBatchOnce() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (members, context) = try Self.members(coordinator)
        context.performAndWait {
            let before = context.faultStatistics
            let sorted = members.sorted { $0.name < $1.name }
            for e in sorted { #expect(e.salary == expected[e.name]) }
            #expect(sorted.map(\.name) == expected.keys.sorted())
            let loads = context.faultStatistics.loads - before.loads
            #expect(loads <= Self.batchLoads + 1, "\(loads) loads for \(Self.batchLoads) batches")
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects == Self.memberCount)
        }
    }

    @Test func touchingARelationshipsMembersAtRandomLoadsEachBatchOnce() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (members, context) = try Self.members(coordinator)
        context.performAndWait {
            var random = FetchingPlannerPropertyTests.Random(state: 16)
            let all = Array(members)
            let before = context.faultStatistics
            // Twice as many touches as members, repeats included.
            for _ in 0..<(2 * Self.memberCount) {
                let e = random.pick(all)
                #expect(e.salary == expected[e.name])
            }
            let loads = context.faultStatistics.loads - before.loads
            #expect(loads <= Self.batchLoads + 1, "\(loads) loads for \(Self.batchLoads) batches")
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects <= Self.memberCount)
        }
    }

    @Test func aPartialWalkOfARelationshipLoadsOnlyTheBatchItWalks() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (members, context) = try Self.members(coordinator)
        context.performAndWait {
            let before = context.faultStatistics
            for e in members.prefix(20) { #expect(e.salary == expected[e.name]) }
            #expect(context.faultStatistics.loads - before.loads == 1)
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects == BatchFaulter.relationshipBatchSize)
        }
    }

    /// The company's employees through a batched fetch, sorted by salary (the order they were made
    /// in, so a pass over the result goes through the batches in order).
    static func batchedFetch(_ coordinator: PersistentStoreCoordinator, batchSize: Int) throws -> ([Employee], ManagedObjectContext) {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let result = try context.performAndWait {
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.fetchBatchSize = batchSize
            return try context.fetch(request)
        }
        return (result, context)
    }

    @Test func aPassInOrderOverABatchedFetchLoadsEachObjectOnceAndKeepsTheWindow() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (result, context) = try Self.batchedFetch(coordinator, batchSize: 50)
        context.performAndWait {
            #expect(result.count == Self.memberCount && result.allSatisfy(\.isFault))
            let before = context.faultStatistics
            for e in result { #expect(e.salary == expected[e.name]) }
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects == Self.memberCount)
            #expect(context.faultStatistics.loads - before.loads == Self.memberCount / 50)
            #expect(result.count { !$0.isFault } <= 50 * BatchFaulter.residentBatches)
        }
    }

    @Test func twoPassesInOrderOverABatchedFetchKeepTheWindow() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (result, context) = try Self.batchedFetch(coordinator, batchSize: 50)
        context.performAndWait {
            let before = context.faultStatistics
            // Forwards, then backwards: the second pass reloads nearly every batch, jumping only once.
            for pass in [result, result.reversed()] {
                for e in pass { #expect(e.salary == expected[e.name]) }
                #expect(result.count { !$0.isFault } <= 50 * BatchFaulter.residentBatches)
            }
            #expect(context.faultStatistics.fulfilledObjects - before.fulfilledObjects <= 2 * Self.memberCount)
        }
    }

    @Test func touchingABatchedFetchAtRandomLoadsAtMostTwiceTheResult() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (result, context) = try Self.batchedFetch(coordinator, batchSize: 50)
        context.performAndWait {
            var random = FetchingPlannerPropertyTests.Random(state: 61)
            let before = context.faultStatistics
            for _ in 0..<(4 * Self.memberCount) {
                let e = random.pick(result)
                #expect(e.salary == expected[e.name])
            }
            let fulfilled = context.faultStatistics.fulfilledObjects - before.fulfilledObjects
            // A window of 3 batches of 50 reloaded 50 objects on nearly every one of 20,000 touches.
            // Now jumps give random access away after about half the result, then each batch loads
            // once more: about one and a half times the result.
            #expect(fulfilled <= 2 * Self.memberCount, "\(fulfilled) objects loaded for \(Self.memberCount)")
        }
    }

    @Test func sortingABatchedFetchByAPropertyLoadsAtMostThreeTimesTheResult() throws {
        let (coordinator, expected) = try Self.makeCompany()
        let (result, context) = try Self.batchedFetch(coordinator, batchSize: 50)
        context.performAndWait {
            let before = context.faultStatistics
            let sorted = result.sorted { $0.name < $1.name }
            for e in sorted { #expect(e.salary == expected[e.name]) }
            #expect(sorted.map(\.name) == expected.keys.sorted())
            let fulfilled = context.faultStatistics.fulfilledObjects - before.fulfilledObjects
            #expect(fulfilled <= 3 * Self.memberCount + 50, "\(fulfilled) objects loaded for \(Self.memberCount)")
        }
    }
}
