import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Testing

/// Actions scheduled to keep a cache fresh: every N, never piling up, only while a condition holds.
@Suite struct ScheduledActionTests {
    @Test func aScheduledActionRunsAgainAndStopsWhenCancelled() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let runs = Recorder<Int>()
        let schedule = connect.schedule(every: .milliseconds(10)) { BlockAction { _ in runs.append(1) } }
        #expect(try await OutboxTests.waitFor { runs.all.count >= 3 })
        schedule.cancel()
        await connect.waitUntilIdle()
        let stopped = runs.all.count
        try await Task.sleep(for: .milliseconds(60))
        #expect(runs.all.count == stopped)
        #expect(schedule.runCount == stopped)
    }

    @Test func aSlowRunIsNotStartedAgainBeforeItFinished() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let gate = Gate()
        let runs = Recorder<Int>()
        let schedule = connect.schedule(every: .milliseconds(5)) { BlockAction { _ in runs.append(1); _ = gate.wait() } }
        #expect(try await OutboxTests.waitFor { runs.all.count == 1 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(runs.all.count == 1, "twenty more ticks, still one run: it has not finished")
        schedule.cancel()
        gate.open()
        await connect.waitUntilIdle()
    }

    @Test func aFalseConditionHoldsRunsBack() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let runs = Recorder<Int>()
        let schedule = connect.schedule(every: .milliseconds(5), when: .when { false }) { BlockAction { _ in runs.append(1) } }
        try await Task.sleep(for: .milliseconds(60))
        #expect(runs.all.isEmpty)
        schedule.cancel()
    }

    @Test func anEntityActionOnAnUnmanagedEntityCannotBeScheduled() throws {
        final class MemoAction: EntityAction {
            typealias ManagedObjectType = Memo
            func execute(context: ActionContext) throws {}
            func cancel() {}
        }
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        #expect(throws: ConnectError.self) { try connect.schedule(every: .seconds(1)) { MemoAction() } }
    }

    @Test func theOutboxFlushesOnScheduleOnlyWhileEntriesWait() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let transport = OutboxTests.RecordingTransport()
        let outbox = try connect.enableOutbox(transport: transport, flushesAutomatically: false)
        let schedule = try #require(outbox.flush(every: .milliseconds(10)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(schedule.runCount == 0, "nothing waited")
        try await OutboxTests.edit(connect) { Customer(context: $0).uuid = "scheduled" }
        #expect(try await OutboxTests.waitFor { transport.sent.all.count == 1 })
        #expect(schedule.runCount >= 1)
        schedule.cancel()
    }

    @Test func stoppingTheConnectCancelsItsSchedules() async throws {
        let connect = try ConnectTestModel.makeConnect()
        let schedule = connect.schedule(every: .milliseconds(10)) { BlockAction() }
        try connect.stop()
        #expect(schedule.isCancelled)
    }
}
