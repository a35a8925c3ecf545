import Foundation
import Granary
import GranaryRecords
import GranaryStack
import Logging
import Synchronization
import Testing

/// Counts, across threads, what a test's closures saw.
final class Probe: Sendable {
    private let values = Mutex<[String]>([])
    func record(_ value: String) { values.withLock { $0.append(value) } }
    var all: [String] { values.withLock { $0 } }
}

/// Notices two closures running at once.
final class Gate: Sendable {
    private let inside = Mutex(0)
    /// Whether no one else was inside.
    func enter() -> Bool { inside.withLock { $0 += 1; return $0 == 1 } }
    func leave() { inside.withLock { $0 -= 1 } }
}

/// services.md §4.2 "Writes", one test per statement, on durable stores in temporary directories.
@Suite struct StoreManagerWriteTests {
    /// The users' names and order counts in the store, read by a fresh context (what a new reader sees).
    func storedUsers(_ manager: StoreManager) async throws -> [String: [String]] {
        let context = manager.newBackgroundContext()
        return try await context.perform {
            var users: [String: [String]] = [:]
            for user in try context.fetch(FetchRequest<User>(entityName: "User")) {
                users[user.uuid, default: []].append("\(user.name)/\(user.numberOfOrders)")
            }
            return users
        }
    }

    func count(_ entity: String, _ manager: StoreManager) async throws -> Int {
        let context = manager.newBackgroundContext()
        return try await context.perform { try context.count(for: FetchRequest<ManagedObject>(entityName: entity)) }
    }

    // F: All writes go through one serial writer; two updates enqueued back to back apply in order, the
    // second seeing the first; the main context sees the result without manual merging.
    @Test func twoEnqueuedUpdatesApplyInOrder() async throws {
        let manager = try RecordsTestModel.makeManager()
        let id = try await User.create(in: manager) { user, _ in user.uuid = "u1"; user.numberOfOrders = 0 }
        let main = manager.mainContext
        try await main.perform {
            guard let user = try main.existingObject(with: id) as? User else { throw RecordsError.noDefaultStore }
            user.update(in: manager) { user, _ in user.numberOfOrders = 1 }
            user.update(in: manager) { user, _ in user.numberOfOrders = user.numberOfOrders * 10 + 2 }
        }
        await manager.waitForWrites()
        let seen = try await main.perform { (try main.existingObject(with: id) as? User)?.numberOfOrders }
        #expect(seen == 12)
        #expect(try await storedUsers(manager) == ["u1": ["/12"]])
    }

    // F + B: create with an existing ID updates it in place (no duplicate), running the closure once.
    @Test func createWithExistingIDUpdatesInPlaceRunningTheClosureOnce() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.create(in: manager) { user, _ in user.uuid = "u1"; user.name = "Ada"; user.numberOfOrders = 5 }
        let runs = Probe()
        let second = try await User.create(in: manager) { user, _ in
            runs.record("run")
            user.uuid = "u1"
            user.name = "Grace"
        }
        #expect(runs.all.count == 1)
        // The count stays 1, the new value landed, the value the closure left alone is kept.
        #expect(try await storedUsers(manager) == ["u1": ["Grace/5"]])
        let main = manager.mainContext
        let name = try await main.perform { (try main.existingObject(with: second) as? User)?.name }
        #expect(name == "Grace")
    }

    // F + B: with updateIfEntityExists false the existing row is untouched and an error says so.
    @Test func createWithoutUpdateOfAnExistingIDFailsAndWritesNothing() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.create(in: manager) { user, _ in user.uuid = "u1"; user.name = "Ada" }
        await #expect {
            try await User.create(in: manager, updateIfEntityExists: false) { user, context in
                user.uuid = "u1"
                user.name = "Grace"
                user.address = try Address(entityID: 3, context: context)
            }
        } throws: { error in
            guard case RecordsError.entityExists(let entity, let id) = error else { return false }
            return entity == "User" && id == "u1"
        }
        #expect(try await storedUsers(manager) == ["u1": ["Ada/0"]])
        #expect(try await count("Address", manager) == 0)
    }

    // The closure form hands the failure to its completion, on the main context.
    @Test func closureCreateReportsTheExistingIDToItsCompletion() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.create(in: manager) { user, _ in user.uuid = "u1" }
        let outcome: String = await withCheckedContinuation { continuation in
            User.create(in: manager, updateIfEntityExists: false, update: { user, _ in user.uuid = "u1" }) { result in
                switch result {
                case .success: continuation.resume(returning: "success")
                case .failure(let error): continuation.resume(returning: "\(Thread.isMainThread || manager.mainContext.isOnQueue) \(error)")
                }
            }
        }
        #expect(outcome.hasPrefix("true entity 'User': an object with ID u1 exists"))
    }

    // F: find-or-create in a writer context returns the existing object, or a new one holding only the
    // ID; twice in one context, the same object.
    @Test func findOrCreateReturnsTheExistingOrOneNewObject() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await Address.create(in: manager) { address, _ in address.id = 9; address.street = "Main St" }
        let probe = Probe()
        try await User.create(in: manager) { user, context in
            user.uuid = "u1"
            let existing = try Address(entityID: 9, context: context)
            probe.record(existing.street)
            let first = try Address(entityID: 7, context: context)
            let again = try Address(entityID: 7, context: context)
            probe.record("\(first === again) \(first.id) \(first.street.isEmpty)")
            user.address = first
        }
        #expect(probe.all == ["Main St", "true 7 true"])
        #expect(try await count("Address", manager) == 2)
    }

    // B: on the view context, find-or-create is a thrown error, not an assertion or a dead object.
    @Test func findOrCreateOnTheViewContextThrows() async throws {
        let manager = try RecordsTestModel.makeManager()
        let main = manager.mainContext
        let message = try await main.perform { () -> String in
            do {
                _ = try Address(entityID: 1, context: main)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message.contains("'Address'") && message.contains("view context"))
        #expect(try await count("Address", manager) == 0)
    }

    // F: createTemporary never persists anything, relationship stubs included.
    @Test func createTemporaryPersistsNothing() async throws {
        let manager = try RecordsTestModel.makeManager()
        let name = try await User.createTemporary(in: manager) { user, context in
            user.uuid = "tmp"
            user.name = "Scratch"
            user.address = try Address(entityID: 99, context: context)
            try context.obtainPermanentIDs(for: [user])
            return user.name
        }
        #expect(name == "Scratch")
        try await User.create(in: manager) { user, _ in user.uuid = "real" }
        #expect(try await storedUsers(manager).keys.sorted() == ["real"])
        #expect(try await count("Address", manager) == 0)
    }

    // F: delete(with: predicate, offset) removes exactly the matching rows, honouring the offset under
    // the sort.
    @Test func deleteWithPredicateSortAndOffsetRemovesExactlyThoseRows() async throws {
        let manager = try RecordsTestModel.makeManager()
        for total in [3.0, 1.0, 5.0, 2.0, 4.0] {
            try await Order.create(in: manager) { order, _ in order.orderID = Int(total); order.total = total }
        }
        let options = DeleteOptions(predicate: FetchPredicate.key("total") >= 2.0, comparisonClauses: [SortKey("total", ascending: true)], offset: 1)
        let deleted = try await Order.delete(from: manager, with: options)
        #expect(deleted == 3)
        let main = manager.mainContext
        let left = try await main.perform {
            try Order.getAll(comparisonClauses: [SortKey("total")], from: manager).map(\.orderID)
        }
        #expect(left == [1, 2])
    }

    // B: every live context observes the deletion; the completion reports success.
    @Test func deletionReachesEveryLiveContext() async throws {
        let manager = try RecordsTestModel.makeManager()
        let id = try await Order.create(in: manager) { order, _ in order.orderID = 1; order.total = 10 }
        let reader = manager.newBackgroundContext()
        let main = manager.mainContext
        let loaded = try await reader.perform { (try reader.existingObject(with: id) as? Order)?.total }
        _ = try await main.perform { (try main.existingObject(with: id) as? Order)?.total }
        #expect(loaded == 10)
        let outcome: Int? = await withCheckedContinuation { continuation in
            Order.delete(from: manager, with: DeleteOptions(predicate: FetchPredicate.key("orderID") == 1)) { result in
                continuation.resume(returning: try? result.get())
            }
        }
        #expect(outcome == 1)
        let inReader = try await reader.perform { reader.registeredObject(for: id).map { !$0.isDeleted } ?? false }
        let inMain = try await main.perform { main.registeredObject(for: id).map { !$0.isDeleted } ?? false }
        #expect(!inReader && !inMain)
        #expect(try await count("Order", manager) == 0)
    }

    // B: the completion reports failure rather than always firing as if it worked.
    @Test func deletingAnObjectAlreadyGoneReportsFailure() async throws {
        let manager = try RecordsTestModel.makeManager()
        let id = try await Order.create(in: manager) { order, _ in order.orderID = 1 }
        let main = manager.mainContext
        let outcomes: [String] = try await withCheckedThrowingContinuation { continuation in
            main.schedule {
                guard let order = try? main.existingObject(with: id) as? Order else { return continuation.resume(throwing: RecordsError.noDefaultStore) }
                let results = Probe()
                order.delete(from: manager) { results.record((try? $0.get()) == nil ? "failure" : "success") }
                order.delete(from: manager) {
                    results.record((try? $0.get()) == nil ? "failure" : "success")
                    continuation.resume(returning: results.all)
                }
            }
        }
        #expect(outcomes == ["success", "failure"])
    }

    // The collection form deletes many in one write.
    @Test func collectionDeleteRemovesEveryElement() async throws {
        let manager = try RecordsTestModel.makeManager()
        for n in 1...4 { try await Order.create(in: manager) { order, _ in order.orderID = n } }
        let main = manager.mainContext
        try await main.perform {
            let orders = try Order.get(using: FetchPredicate.key("orderID") <= 3, from: manager)
            orders.delete(from: manager)
        }
        await manager.waitForWrites()
        #expect(try await count("Order", manager) == 1)
        let remaining = try await main.perform { try Order.get(entityID: 4, from: manager)?.orderID }
        #expect(remaining == 4)
    }

    // Concurrency: writes enqueued from many tasks at once all land, each on its context's queue.
    @Test func concurrentWritesRunOneAtATimeOnTheirContextQueue() async throws {
        let manager = try RecordsTestModel.makeManager()
        let offQueue = Probe()
        let running = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for n in 0..<10 {
                        try await User.create(in: manager) { user, context in
                            if !running.enter() { offQueue.record("overlap") }
                            if !context.isOnQueue { offQueue.record("off queue") }
                            user.uuid = "w\(writer)-\(n % 5)"
                            user.numberOfOrders += 1
                            running.leave()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(offQueue.all.isEmpty)
        let users = try await storedUsers(manager)
        #expect(users.count == 20)
        #expect(users.values.allSatisfy { $0.count == 1 })
    }
}
