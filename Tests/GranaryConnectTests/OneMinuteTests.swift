import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Granary
import GranaryConnect
import GranaryStack
import Testing

// The README's "Connect and actions in one minute", run against the test web service.

// snippet: connect-one-minute-actions
final class MyGenericAction: GenericAction {
    let canceled = CancellationFlag()

    func execute() throws {
        guard !canceled.isSet else { return }
        // Perform work here
    }

    func cancel() { canceled.set() }
}

final class MyEntityAction: EntityAction {
    typealias ManagedObjectType = Customer
    let canceled = CancellationFlag()
    private let webService: WebService
    private let minimumScore: Int

    init(webService: WebService, minimumScore: Int) {
        self.webService = webService
        self.minimumScore = minimumScore
    }

    func execute(context: ActionContext) throws {
        guard !canceled.isSet else { return }
        let (data, response, error) = webService.execute(request: webService.request("customers"))
        guard !canceled.isSet else { return }
        if let error { throw error }
        if let response = response as? HTTPURLResponse, response.statusCode == 200, let data {
            let feed = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
            try context.merge(feed.filter { ($0["score"] as? Int ?? 0) >= minimumScore })  // update, insert, delete; one save
        }
    }

    func cancel() { canceled.set() }
}
// end-snippet

@Suite(.serialized) struct OneMinuteTests {
    @Test func theReadmeExampleRunsAgainstARealServer() async throws {
        let server = try TestWebServer()
        defer { server.stop() }
        try await server.seed(count: 100)       // customers c000000… with scores 0…99
        let shopModel = ConnectTestModel.model
        let shop = server.service
        var options = ConnectOptions()
        options.stack.storeDirectory = ConnectTestModel.scratchDirectory()
        let inserted = Recorder<Int>()

        // snippet: connect-one-minute
        let connect = GenericConnect<MixedStrategy>(name: "Shop", managedObjectModel: shopModel, options: options)
        try connect.attachPersistentStore(for: StoreConfiguration(options: .init(persistentHistoryTracking: true)))
        try connect.start()

        let proxy = try connect.execute(MyEntityAction(webService: shop, minimumScore: 10)) { proxy in
            print(proxy.completionStatus, proxy.statistics.contextStatistics!.inserts)   // successful 90
            inserted.append(proxy.statistics.contextStatistics!.inserts)
        }
        connect.execute(MyGenericAction())                  // up to five generic actions at a time
        await connect.waitUntilIdle()

        // Edits saved while the server is away are kept in the store and reach it once each, in order.
        let outbox = try connect.enableOutbox(transport: WebServiceOutboxTransport(service: shop, path: "outbox"))
        try await connect.performBackgroundTask { context in
            let customer = Customer(context: context)
            customer.uuid = "walk-in"
            customer.name = "Ada"
            try context.save()                              // the save and its outbox entry: one commit
        }
        // end-snippet

        #expect(proxy.completionStatus == .successful, "\(proxy)")
        #expect(inserted.all == [90])
        #expect(try await OutboxTests.waitFor { try outbox.pendingCount() == 0 })
        let received = try await server.received()
        #expect(received.entries.count == 1)
        #expect((received.entries.first?["values"] as? [String: Any])?["name"] as? String == "Ada")
        try connect.close()
    }
}
