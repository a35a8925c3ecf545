import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Testing

/// §4.1: merging a server's listing into an entity by its key (Coherence's `ActionContext.merge` tests,
/// and the B statements: tuples for composite keys, bounded objects for long feeds).
@Suite struct FeedMergeTests {
    static func customers(_ connect: some Connect) async throws -> [String: (name: String, score: Int)] {
        try await connect.performBackgroundTask { context in
            var result: [String: (String, Int)] = [:]
            for customer in try context.fetch(Customer.fetchRequest()) { result[customer.uuid] = (customer.name, customer.score) }
            return result
        }.mapValues { (name: $0.0, score: $0.1) }
    }

    static func merge(_ feed: [[String: Any]], on connect: some Connect, ignore: Set<String> = [], subset: FetchPredicate? = nil,
                      condition: FetchPredicate? = nil, batchSize: Int = 1_000) async throws -> FeedMergeReport {
        let report = Recorder<FeedMergeReport>()
        let feedBox = FeedBox(feed)
        let proxy = try await connect.run(CustomerAction { context, _ in
            report.append(try context.merge(feedBox.records, ignoreAttributes: ignore, subsetFilter: subset, condition: condition,
                                            batchSize: batchSize))
        })
        if let error = proxy.error { throw error }
        return try #require(report.all.first)
    }

    /// Feed records are plain values made in the test; handing them to the action's thread shares nothing mutable.
    struct FeedBox: @unchecked Sendable {
        let records: [[String: Any]]
        init(_ records: [[String: Any]]) { self.records = records }
    }

    @Test func newKeysAreInserted() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let report = try await Self.merge([["uuid": "a", "name": "Ada", "score": 3], ["uuid": "b", "name": "Bob"]], on: connect)
        #expect(report.inserted == 2 && report.saved)
        let stored = try await Self.customers(connect)
        #expect(stored["a"]?.name == "Ada" && stored["a"]?.score == 3)
        #expect(stored["b"]?.name == "Bob" && stored["b"]?.score == 0)
    }

    @Test func reversedInputGivesTheSameStore() async throws {
        let feed: [[String: Any]] = (0..<50).map { ["uuid": "k\($0)", "name": "n\($0)", "score": $0] }
        let forward = try ConnectTestModel.makeConnect(label: "forward")
        let backward = try ConnectTestModel.makeConnect(label: "backward")
        defer { try? forward.close(); try? backward.close() }
        _ = try await Self.merge(feed, on: forward)
        _ = try await Self.merge(feed.reversed(), on: backward)
        let a = try await Self.customers(forward), b = try await Self.customers(backward)
        #expect(a.count == 50)
        #expect(a.mapValues { "\($0.name)/\($0.score)" } == b.mapValues { "\($0.name)/\($0.score)" })
    }

    @Test func storedKeysAreUpdatedInPlaceExceptIgnoredAttributes() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        _ = try await Self.merge([["uuid": "a", "name": "Ada", "score": 1], ["uuid": "b", "name": "Bob", "score": 2]], on: connect)
        let report = try await Self.merge([["uuid": "a", "name": "Ada L.", "score": 10], ["uuid": "b", "name": "Bob", "score": 2]],
                                          on: connect, ignore: ["score"])
        #expect(report.updated == 1)
        #expect(report.unchanged == 1)
        #expect(report.inserted == 0 && report.deleted == 0)
        let stored = try await Self.customers(connect)
        #expect(stored["a"]?.name == "Ada L.")
        #expect(stored["a"]?.score == 1, "score is ignored")
    }

    @Test func nothingIsSavedWhenNothingChanged() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let feed: [[String: Any]] = [["uuid": "a", "name": "Ada"]]
        _ = try await Self.merge(feed, on: connect)
        let before = connect.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let report = try await Self.merge(feed, on: connect)
        #expect(!report.saved)
        #expect(report.unchanged == 1)
        #expect(connect.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == before, "no transaction")
    }

    @Test func anEmptyFeedDeletesEveryStoredObject() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        _ = try await Self.merge((0..<10).map { ["uuid": "k\($0)"] }, on: connect)
        let report = try await Self.merge([], on: connect)
        #expect(report.deleted == 10)
        #expect(try await Self.customers(connect).isEmpty)
    }

    @Test func deletesStayWithinTheSubsetAndTheCondition() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        _ = try await Self.merge((0..<10).map { ["uuid": "k\($0)", "score": $0] }, on: connect)
        // Only the feed's page "score < 5" is listed; k7 is outside it and stays.
        let page: [[String: Any]] = [["uuid": "k0", "score": 0], ["uuid": "k1", "score": 1]]
        let report = try await Self.merge(page, on: connect, subset: FetchPredicate.key("score") < 5,
                                          condition: FetchPredicate.key("score") != 4)
        #expect(report.deleted == 2, "k2 and k3; k4 fails the condition")
        let stored = try await Self.customers(connect)
        #expect(Set(stored.keys) == ["k0", "k1", "k4", "k5", "k6", "k7", "k8", "k9"])
    }

    @Test func theConditionGuardsUpdates() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        _ = try await Self.merge([["uuid": "a", "name": "old", "score": 1], ["uuid": "b", "name": "old", "score": 5]], on: connect)
        let report = try await Self.merge([["uuid": "a", "name": "new"], ["uuid": "b", "name": "new"]], on: connect,
                                          condition: FetchPredicate.key("score") < 3)
        #expect(report.updated == 1)
        let stored = try await Self.customers(connect)
        #expect(stored["a"]?.name == "new")
        #expect(stored["b"]?.name == "old")
    }

    @Test func compositeKeysCompareAsTuplesNotConcatenatedStrings() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let rows = Recorder<String>()
        let proxy = try await connect.run(PurchaseAction { context in
            let feed: [[String: Any]] = [["customerID": "1", "number": 23, "total": 1.0], ["customerID": "12", "number": 3, "total": 2.0]]
            let report = try context.merge(feed)
            rows.append("\(report.inserted)")
            let again = try context.merge([["customerID": "1", "number": 23, "total": 5.0], ["customerID": "12", "number": 3, "total": 2.0]])
            rows.append("\(again.updated)/\(again.unchanged)")
            for purchase in try context.fetch(Purchase.fetchRequest()).sorted(by: { $0.customerID < $1.customerID }) {
                rows.append("\(purchase.customerID)|\(purchase.number)|\(purchase.total)")
            }
        })
        #expect(proxy.error == nil)
        #expect(rows.all == ["2", "1/1", "1|23|5.0", "12|3|2.0"])
    }

    @Test func aRepeatedKeyIsOneObjectAndTheLaterRecordWins() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let report = try await Self.merge([["uuid": "a", "name": "first"], ["uuid": "a", "name": "second"]], on: connect, batchSize: 1)
        #expect(report.inserted == 1 && report.repeatedKeys == 1)
        #expect(try await Self.customers(connect)["a"]?.name == "second")
    }

    @Test func aRecordWithoutItsKeyIsATypedErrorNamingItAndNothingIsSaved() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        await #expect {
            try await Self.merge([["uuid": "a"], ["name": "no key"]], on: connect)
        } throws: { error in
            guard case .invalidFeedRecord("Customer", 1, let reason) = error as? ConnectError else { return false }
            return reason.contains("uuid")
        }
        await #expect(throws: ConnectError.self) { try await Self.merge([["uuid": "a", "colour": "red"]], on: connect) }
        #expect(try await Self.customers(connect).isEmpty)
    }

    @Test func mergingIntoAnUnmanagedEntityFails() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(CustomerAction { context, _ in
            _ = try context.merge([["text": "x"]], into: "Memo")
        })
        guard case .unmanagedEntity("Memo", _)? = proxy.error as? ConnectError else {
            Issue.record("expected unmanagedEntity, got \(String(describing: proxy.error))")
            return
        }
    }

    @Test func aLongFeedKeepsOnlyABatchOfObjectsRegistered() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let feed: [[String: Any]] = (0..<5_000).map { ["uuid": String(format: "k%05d", $0), "score": $0] }
        _ = try await Self.merge(feed, on: connect)
        let peak = Recorder<Int>()
        let box = FeedBox(feed.map { var r = $0; if ($0["score"] as! Int) % 100 == 0 { r["name"] = "changed" }; return r })
        let proxy = try await connect.run(CustomerAction { context, _ in
            let report = try context.merge(box.records, batchSize: 500)
            #expect(report.updated == 50)
            #expect(report.unchanged == 4_950)
            peak.append(context.managedObjectContext.registeredObjects.count)
        })
        #expect(proxy.error == nil)
        #expect(try #require(peak.all.first) < 1_000, "unchanged objects were turned back into faults")
        let statistics = try #require(proxy.statistics.contextStatistics)
        #expect(statistics.updates == 50)
        #expect(statistics.fetches >= 5_000)
    }
}
