import Foundation
import Granary
@testable import GranaryConnect
import GranaryStack
import Synchronization
import Testing

/// §4.1 B: store and forward restored — local edits kept durably, sent in order once each, protected
/// from feed merges until the server has them.
@Suite(.serialized) struct OutboxTests {
    /// A transport recording what it is given, failing while `failing` is set.
    final class RecordingTransport: OutboxTransport {
        let sent = Recorder<OutboxEntry>()
        let failing = Atomic<Bool>(false)
        func send(_ entry: OutboxEntry) async throws {
            if failing.load(ordering: .relaxed) { throw TestFailure(text: "offline") }
            sent.append(entry)
        }
    }

    static func edit(_ connect: some Connect, _ body: @escaping @Sendable (ManagedObjectContext) throws -> Void) async throws {
        try await connect.performBackgroundTask { context in
            try body(context)
            try context.save()
        }
    }

    static func customer(_ uuid: String, in context: ManagedObjectContext) throws -> Customer? {
        var request = Customer.fetchRequest()
        request.filter = (FetchPredicate.key("uuid") == uuid).node
        return try context.fetch(request).first
    }

    /// Polls `condition` until it holds, for at most `seconds`: generous, since in a full run long tests
    /// of other suites can hold Swift's cooperative threads (and the timers on them) for minutes.
    static func waitFor(_ condition: @Sendable () throws -> Bool, seconds: Double = 300) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return try condition()
    }

    @Test func editsAreEntriesInSaveOrderAndActionSavesAreNot() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let transport = RecordingTransport()
        let outbox = try connect.enableOutbox(transport: transport, flushesAutomatically: false)
        try await Self.edit(connect) { context in
            let customer = Customer(context: context)
            customer.uuid = "a"
            customer.name = "Ada"
        }
        try await Self.edit(connect) { try Self.customer("a", in: $0)?.score = 5 }
        try await Self.edit(connect) { context in context.delete(try Self.customer("a", in: context)!) }
        // An action's save is the server's data, not an edit to send.
        _ = try await connect.run(CustomerAction { context, _ in
            Customer(context: context.managedObjectContext).uuid = "from-server"
            try context.save()
        })
        let entries = try outbox.pendingEntries()
        #expect(entries.map(\.kind) == [.insert, .update, .delete])
        #expect(entries.allSatisfy { $0.key == ["uuid": .string("a")] })
        #expect(entries[1].changedProperties == ["score"])
        #expect(Set(entries.map(\.idempotencyKey)).count == 3)
        try await outbox.send()
        // The insert and update of an object deleted before the send are folded into its delete.
        #expect(transport.sent.all.map(\.kind) == [.delete])
        #expect(try outbox.pendingCount() == 0)
    }

    @Test func editsMadeWhileTheServerIsDownReachItOnceEachWhenItIsBack() async throws {
        let journal = ConnectTestModel.scratchDirectory().appendingPathExtension("journal")
        try FileManager.default.createDirectory(at: journal.deletingLastPathComponent(), withIntermediateDirectories: true)
        var server = try TestWebServer(journal: journal)
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let outbox = try connect.enableOutbox(transport: WebServiceOutboxTransport(service: server.service, path: "outbox"),
                                              retryPolicy: OutboxRetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)))
        let url = server.url
        server.stop()
        for i in 0..<20 {
            try await Self.edit(connect) { context in
                let customer = Customer(context: context)
                customer.uuid = "offline-\(i)"
                customer.score = i
            }
        }
        #expect(try await Self.waitFor { outbox.consecutiveFailures > 0 })
        #expect(try outbox.pendingCount() == 20)
        // The server comes back on the same port, with what it applied before.
        server = try TestWebServer(journal: journal, port: url.port!)
        defer { server.stop() }
        #expect(try await Self.waitFor { try outbox.pendingCount() == 0 })
        let received = try await server.received()
        #expect(received.applied.count == 20)
        #expect(Set(received.applied).count == 20)
        let uuids = received.entries.compactMap { ($0["key"] as? [String: Any])?["uuid"] as? String }
        #expect(uuids == (0..<20).map { "offline-\($0)" }, "in save order")
    }

    @Test func aFeedMergeKeepsALocalEditUntilTheServerHasIt() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let transport = RecordingTransport()
        let outbox = try connect.enableOutbox(transport: transport, flushesAutomatically: false)
        _ = try await FeedMergeTests.merge((0..<10).map { ["uuid": "r\($0)", "name": "server \($0)"] }, on: connect)
        try await Self.edit(connect) { try Self.customer("r7", in: $0)?.name = "local" }
        try await Self.edit(connect) { context in context.delete(try Self.customer("r3", in: context)!) }

        let feed: [[String: Any]] = (0..<10).map { ["uuid": "r\($0)", "name": "server changed \($0)"] }
        let report = try await FeedMergeTests.merge(feed, on: connect)
        #expect(report.protectedByOutbox == 2, "r7 not overwritten, r3 not brought back")
        var stored = try await FeedMergeTests.customers(connect)
        #expect(stored["r7"]?.name == "local")
        #expect(stored["r3"] == nil)
        #expect(stored["r1"]?.name == "server changed 1")

        try await outbox.send()
        #expect(transport.sent.all.map(\.kind) == [.update, .delete])
        _ = try await FeedMergeTests.merge(feed, on: connect)
        stored = try await FeedMergeTests.customers(connect)
        #expect(stored["r7"]?.name == "server changed 7", "acknowledged: the server's value wins again")
        #expect(stored["r3"]?.name == "server changed 3", "the server still lists it: back")
    }

    @Test func aFailedSendKeepsTheEntryAndLaterOnesAndRetriesWithBackoff() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let transport = RecordingTransport()
        transport.failing.store(true, ordering: .relaxed)
        let outbox = try connect.enableOutbox(transport: transport,
                                              retryPolicy: OutboxRetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(40)))
        try await Self.edit(connect) { Customer(context: $0).uuid = "x" }
        try await Self.edit(connect) { Customer(context: $0).uuid = "y" }
        #expect(try await Self.waitFor { outbox.consecutiveFailures >= 3 }, "retried on its own")
        #expect(outbox.lastError as? TestFailure == TestFailure(text: "offline"))
        #expect(try outbox.pendingCount() == 2)
        transport.failing.store(false, ordering: .relaxed)
        #expect(try await Self.waitFor { try outbox.pendingCount() == 0 })
        #expect(transport.sent.all.map { $0.key["uuid"] } == [.string("x"), .string("y")])
        #expect(outbox.consecutiveFailures == 0)
    }

    @Test func theRetryDelayGrowsToItsMaximum() {
        let policy = OutboxRetryPolicy(initialDelay: .seconds(1), multiplier: 2, maximumDelay: .seconds(10))
        #expect((1...6).map { policy.delay(afterFailures: $0) } == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
    }

    @Test func theOutboxNeedsHistoryAndKeysKeptOnDeletion() throws {
        let directory = ConnectTestModel.scratchDirectory()
        let plain = GenericConnect<DirectStrategy>(name: "Plain", managedObjectModel: ConnectTestModel.model,
                                                   options: ConnectOptions(stack: StackOptions(storeDirectory: directory)))
        try plain.start()
        defer { try? plain.close() }
        #expect(throws: ConnectError.self) { try plain.enableOutbox(transport: RecordingTransport()) }

        let model = try ManagedObjectModel {
            Entity("Thing") { Attribute("id", .integer64); Unique("id") }
        }
        let unkept = GenericConnect<DirectStrategy>(name: "Unkept", managedObjectModel: model,
                                                    options: ConnectOptions(stack: StackOptions(storeDirectory: directory)))
        try unkept.attachPersistentStore(for: StoreConfiguration(options: .init(persistentHistoryTracking: true)))
        try unkept.start()
        defer { try? unkept.close() }
        #expect {
            try unkept.enableOutbox(transport: RecordingTransport())
        } throws: { error in
            guard case .outboxUnavailable(let reason) = error as? ConnectError else { return false }
            return reason.contains("Thing.id")
        }
    }

    @Test func theCursorSurvivesAReopen() async throws {
        let directory = ConnectTestModel.scratchDirectory()
        let transport = RecordingTransport()
        do {
            let connect = try ConnectTestModel.makeConnect(directory: directory)
            let outbox = try connect.enableOutbox(transport: transport, flushesAutomatically: false)
            try await Self.edit(connect) { Customer(context: $0).uuid = "sent" }
            try await outbox.send()
            try await Self.edit(connect) { Customer(context: $0).uuid = "unsent" }
            try connect.close()
        }
        let connect = try ConnectTestModel.makeConnect(directory: directory)
        defer { try? connect.close() }
        let outbox = try connect.enableOutbox(transport: transport, flushesAutomatically: false)
        #expect(try outbox.pendingEntries().map { $0.key["uuid"] } == [.string("unsent")])
    }
}
