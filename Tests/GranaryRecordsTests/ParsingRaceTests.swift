import Foundation
import Granary
import GranaryRecords
import GranaryStack
import Testing

/// Two imports racing on two background contexts of one durable store (issue 20: "no duplicate ever,
/// also when … two imports race on two contexts").
@Suite struct ParsingRaceTests {
    /// One side of a race: the JSON it imports, tagged with its side so that every stored value says
    /// which import wrote it.
    struct Side {
        let tag: String
        let ids: [Int]
        let round: Int

        func json() -> [Any] {
            ids.map { n in
                [
                    "uuid": "r\(round)-u\(n)",
                    "name": "\(tag)\(round)",
                    "number_of_orders": tag == "A" ? 1 : 2,
                    // The same address ID from both sides: a nested upsert that can race too.
                    "address": ["id": round * 1_000 + n, "street": "\(tag) street"],
                    // Orders of this side only: a to-many is replaced, so the winner's set is all there is.
                    "orders": [["id": orderID(n), "total": Double(n)]],
                ] as [String: Any]
            }
        }

        func orderID(_ n: Int) -> Int { round * 1_000_000 + (tag == "A" ? 0 : 500_000) + n }
    }

    /// What the store holds for one user, read in a fresh context.
    struct Stored: Equatable {
        var name: String
        var numberOfOrders: Int
        var street: String?
        var orders: Set<Int>
    }

    func stored(_ manager: StoreManager, round: Int) async throws -> (users: [String: [Stored]], addresses: [Int: Int]) {
        let context = manager.newBackgroundContext()
        return try await context.perform {
            var users: [String: [Stored]] = [:]
            for user in try context.fetch(FetchRequest<User>()) where user.uuid.hasPrefix("r\(round)-") {
                users[user.uuid, default: []].append(Stored(name: user.name, numberOfOrders: user.numberOfOrders,
                                                             street: user.address?.street, orders: Set(user.orders.map(\.orderID))))
            }
            var addresses: [Int: Int] = [:]
            for address in try context.fetch(FetchRequest<Address>()) where address.id / 1_000 == round {
                addresses[address.id, default: 0] += 1
            }
            return (users, addresses)
        }
    }

    /// The values `side` writes for user `n`.
    func expected(_ side: Side, _ n: Int) -> Stored {
        Stored(name: "\(side.tag)\(side.round)", numberOfOrders: side.tag == "A" ? 1 : 2, street: "\(side.tag) street",
               orders: [side.orderID(n)])
    }

    // Each round: some IDs already stored (updates that race), two random overlapping ID sets imported
    // at the same time on two background contexts (or one and the manager's writer), each one call and
    // one save. Afterwards every ID is
    // stored once, and every object both imports named holds the values of the import that committed
    // last — whole: its attributes, its nested address and its replaced to-many — because that import
    // is re-run on top of the other's committed rows when its save meets them.
    @Test func twoImportsRacingOnTwoContextsLeaveOneObjectPerIDWithTheLaterImportsValues() async throws {
        let manager = try RecordsTestModel.makeManager()
        var g = SplitMixGenerator(seed: 20)
        let pool = 0..<24
        let runs = Probe()
        var writerRounds = 0
        for round in 0..<50 {
            let existing = pool.filter { _ in Int.random(in: 0..<4, using: &g) == 0 }
            if !existing.isEmpty {
                let seed = Side(tag: "S", ids: existing, round: round)
                try await User.parse(jsonArray: seed.json(), in: manager)
            }
            let a = Side(tag: "A", ids: pool.filter { _ in Bool.random(using: &g) }.shuffled(using: &g), round: round)
            let b = Side(tag: "B", ids: pool.filter { _ in Bool.random(using: &g) }.shuffled(using: &g), round: round)
            let contexts = [manager.newBackgroundContext(), manager.newBackgroundContext()]
            // Every fifth round B goes through the manager's writer instead of a context of its own.
            let viaWriter = round % 5 == 4
            if viaWriter { writerRounds += 1 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (side, context) in zip([a, b], contexts) {
                    let payload = JSONPayloadBox(side.json())
                    group.addTask {
                        if viaWriter && side.tag == "B" {
                            try await User.parse(jsonArray: payload.elements, in: manager)
                            return
                        }
                        try await context.perform {
                            _ = try context.importAndSave {
                                runs.record(side.tag)
                                return try User.parse(jsonArray: payload.elements, in: context)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let (users, addresses) = try await stored(manager, round: round)
            let named = Set(existing + a.ids + b.ids)
            #expect(Set(users.keys) == Set(named.map { "r\(round)-u\($0)" }), "round \(round)")
            #expect(users.values.allSatisfy { $0.count == 1 }, "round \(round): a duplicate")
            #expect(addresses.count == named.count && addresses.values.allSatisfy { $0 == 1 }, "round \(round): \(addresses)")
            // Both imports named these: all of them hold one import's values, the same import for all.
            let both = Set(a.ids).intersection(b.ids)
            let winners = Set(both.compactMap { n -> String? in
                let value = users["r\(round)-u\(n)"]?.first
                if value == expected(a, n) { return "A" }
                if value == expected(b, n) { return "B" }
                Issue.record("round \(round) u\(n): \(String(describing: value)) is neither import's")
                return nil
            })
            #expect(winners.count <= 1, "round \(round): objects of both imports won \(winners)")
            for n in Set(a.ids).subtracting(b.ids) { #expect(users["r\(round)-u\(n)"]?.first == expected(a, n), "round \(round) u\(n)") }
            for n in Set(b.ids).subtracting(a.ids) { #expect(users["r\(round)-u\(n)"]?.first == expected(b, n), "round \(round) u\(n)") }
            for n in Set(existing).subtracting(a.ids).subtracting(b.ids) {
                #expect(users["r\(round)-u\(n)"]?.first?.name == "S\(round)", "round \(round) u\(n)")
            }
        }
        // The imports did race: in some rounds one of them met the other's save and ran again (in
        // practice one import in every round does).
        #expect(runs.all.count > 100 - writerRounds, "no import met the other's save: the test no longer races")
    }

    /// The users of the store by ID: name, order count and order IDs.
    func users(_ manager: StoreManager) async throws -> [String: String] {
        let context = manager.newBackgroundContext()
        return try await context.perform {
            var result: [String: String] = [:]
            for user in try context.fetch(FetchRequest<User>()) {
                result[user.uuid, default: ""] += "\(user.name)/\(user.numberOfOrders)/\(user.orders.map(\.orderID).sorted())"
            }
            return result
        }
    }

    // The interleaving forced: B saves the same IDs after A's import read the store and before A saves.
    // A's save meets B's rows (u2 inserted, u1 changed), so A runs again on top of them and wins whole;
    // a key only B sent (u2's number_of_orders, its orders) keeps B's value.
    @Test func anImportWhoseSaveMeetsAnotherImportsSaveRunsAgainOnTopOfIt() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.parse(jsonArray: [["uuid": "u1", "name": "S", "orders": [1]]], in: manager)
        let a = manager.newBackgroundContext()
        let b = manager.newBackgroundContext()
        let runs = try a.performAndWait { () throws -> Int in
            var runs = 0
            let users = try a.importAndSave { () throws -> [User] in
                runs += 1
                let users = try User.parse(jsonArray: [["uuid": "u1", "name": "A", "orders": [2]], ["uuid": "u2", "name": "A"]], in: a)
                if runs == 1 {
                    try b.performAndWait {
                        _ = try User.parseAndSave(jsonArray: [["uuid": "u2", "name": "B", "number_of_orders": 7, "orders": [3]],
                                                          ["uuid": "u1", "name": "B", "orders": [4]]], in: b)
                    }
                }
                return users
            }
            #expect(!a.hasChanges && users.allSatisfy { !$0.objectID.isTemporaryID && $0.managedObjectContext === a })
            return runs
        }
        #expect(runs == 2)
        #expect(try await users(manager) == ["u1": "A/0/[2]", "u2": "A/7/[3]"])
    }

    // A conflict still there after the last attempt is thrown, the context rolled back; a context with
    // changes is refused untouched; an error of the import rolls the context back.
    @Test func importAndSaveGivesUpAfterItsAttemptsAndRefusesADirtyContext() async throws {
        let manager = try RecordsTestModel.makeManager()
        let a = manager.newBackgroundContext()
        let b = manager.newBackgroundContext()
        a.performAndWait {
            #expect {
                try a.importAndSave(attempts: 1) {
                    try User.parse(jsonArray: [["uuid": "u1", "name": "A"]], in: a)
                    try b.performAndWait { _ = try User.parseAndSave(jsonArray: [["uuid": "u1", "name": "B"]], in: b) }
                }
            } throws: { error in
                guard case ContextError.constraintConflicts(let conflicts) = error else { return false }
                return conflicts.first?.entityName == "User"
            }
            #expect(!a.hasChanges)

            let stray = User(context: a)
            stray.uuid = "stray"
            #expect(throws: ParsingError.self) { try User.parseAndSave(jsonArray: [["uuid": "u2"]], in: a) }
            #expect(a.hasChanges && stray.managedObjectContext === a)
            a.rollback()

            #expect(throws: ParsingError.self) {
                try a.importAndSave {
                    try User.parse(jsonArray: [["uuid": "u3"]], in: a)
                    try Order.parse(jsonArray: [["id": "not a number"]], in: a)
                }
            }
            #expect(!a.hasChanges)
        }
        #expect(try await users(manager) == ["u1": "B/0/[]"])
    }
}

/// JSON handed to another task (immutable once made).
struct JSONPayloadBox: @unchecked Sendable {
    let elements: [Any]
    init(_ elements: [Any]) { self.elements = elements }
}
