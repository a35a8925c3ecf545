import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Testing

/// Entity actions against a real web service on 127.0.0.1 (Server/feed_server.py).
@Suite(.serialized) struct WebServiceActionTests {
    /// The README's entity action: read the server's customers and merge them into the store.
    final class RefreshCustomers: AsyncEntityAction {
        typealias ManagedObjectType = Customer
        let service: WebService
        let reports = Recorder<FeedMergeReport>()
        init(service: WebService) { self.service = service }

        func execute(context: ActionContext) async throws {
            let feed = FeedRecords(try await service.getJSONArray("customers"))
            let report = try await context.perform { try context.merge(feed.records) }
            reports.append(report)
        }

        func cancel() {}
    }

    struct FeedRecords: @unchecked Sendable {
        let records: [[String: Any]]
        init(_ records: [[String: Any]]) { self.records = records }
    }

    static func count(_ connect: some Connect) async throws -> Int {
        try await connect.performBackgroundTask { try $0.count(for: Customer.fetchRequest()) }
    }

    @Test func aFeedOf40000ObjectsIsMergedInOneAction() async throws {
        let server = try TestWebServer()
        defer { server.stop() }
        try await server.seed(count: 40_000)
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let action = RefreshCustomers(service: server.service)
        let proxy = try await connect.run(action)
        #expect(proxy.completionStatus == .successful, "\(proxy)")
        #expect(action.reports.all.first?.inserted == 40_000)
        #expect(try await Self.count(connect) == 40_000)
        #expect(proxy.statistics.contextStatistics?.inserts == 40_000)

        // The server changes 10%, adds 1%, drops 1%.
        var feed: [[String: Any]] = (0..<40_000).filter { $0 % 100 != 7 }.map { i in
            ["uuid": String(format: "c%06d", i), "name": i % 10 == 0 ? "renamed \(i)" : "name \(i)", "score": i]
        }
        feed += (0..<400).map { ["uuid": String(format: "n%06d", $0), "name": "new \($0)", "score": 0] }
        try await server.seed(feed)
        let second = try await connect.run(action)
        #expect(second.completionStatus == .successful, "\(second)")
        let report = try #require(action.reports.all.last)
        #expect(report.inserted == 400)
        #expect(report.deleted == 400)
        #expect(report.updated == 4_000, "every tenth name changed")
        #expect(try await Self.count(connect) == 40_000)
    }

    @Test func aServerThatDiesMidAnswerFailsTheActionWithTheServersErrorAndSavesNothing() async throws {
        let server = try TestWebServer()
        defer { server.stop() }
        try await server.seed(count: 2_000)
        try await server.setMode(["die_after_bytes": 10_000])
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(RefreshCustomers(service: server.service))
        #expect(proxy.completionStatus == .failed)
        let failure = try #require(proxy.error as? WebService.Failure, "\(String(describing: proxy.error))")
        #expect(failure.url.path == "/customers")
        #expect(try await Self.count(connect) == 0, "nothing half-saved")
    }

    @Test func aServerAnsweringAnErrorStatusFailsTheActionNamingIt() async throws {
        let server = try TestWebServer()
        defer { server.stop() }
        try await server.setMode(["fail": 503])
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(RefreshCustomers(service: server.service))
        #expect(proxy.completionStatus == .failed)
        #expect((proxy.error as? WebService.Failure)?.status == 503)
    }

    @Test func cancellingASlowRequestCancelsTheAction() async throws {
        let server = try TestWebServer()
        defer { server.stop() }
        try await server.seed(count: 10)
        try await server.setMode(["delay": 900])
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try connect.execute(RefreshCustomers(service: server.service))
        #expect(try await OutboxTests.waitFor { proxy.state == .executing })
        try await Task.sleep(for: .milliseconds(100))      // the request is on its way
        proxy.cancel()
        await proxy.waitUntilFinished()
        #expect(proxy.completionStatus == .canceled)
        #expect(proxy.statistics.executionTime < 600, "the request was cancelled, not waited out")
        #expect(try await Self.count(connect) == 0)
    }
}
