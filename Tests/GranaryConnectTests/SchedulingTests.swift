import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Synchronization
import Testing

/// §4.1: lanes — one serial lane per entity, a concurrent lane for generic actions, suspend and resume,
/// cancel all, wait until idle.
@Suite struct SchedulingTests {
    /// Enter and exit times of actions, to check overlaps.
    final class Spans: Sendable {
        private let spans = Mutex<[(lane: String, enter: ContinuousClock.Instant, exit: ContinuousClock.Instant)]>([])
        private let running = Mutex<[String: Int]>([:])
        private let peak = Mutex<[String: Int]>([:])

        func run(_ lane: String, for duration: Duration) {
            let enter = ContinuousClock.now
            running.withLock { running in
                running[lane, default: 0] += 1
                let now = running[lane]!
                peak.withLock { $0[lane] = max($0[lane] ?? 0, now) }
            }
            Thread.sleep(forTimeInterval: Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds))
            running.withLock { $0[lane]! -= 1 }
            spans.withLock { $0.append((lane, enter, ContinuousClock.now)) }
        }

        func peak(_ lane: String) -> Int { peak.withLock { $0[lane] ?? 0 } }
        var all: [(lane: String, enter: ContinuousClock.Instant, exit: ContinuousClock.Instant)] { spans.withLock { $0 } }
    }

    @Test func oneHundredEntityActionsOnOneEntityNeverOverlap() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let spans = Spans()
        for _ in 0..<100 { try connect.execute(CustomerAction { _, _ in spans.run("Customer", for: .microseconds(300)) }) }
        await connect.waitUntilIdle()
        let sorted = spans.all.sorted { $0.enter < $1.enter }
        #expect(sorted.count == 100)
        for (a, b) in zip(sorted, sorted.dropFirst()) { #expect(a.exit <= b.enter, "two Customer actions overlapped") }
        #expect(spans.peak("Customer") == 1)
    }

    @Test func actionsOnDifferentEntitiesRunSideBySide() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let both = Gate()
        let customerIn = Gate(), purchaseIn = Gate()
        try connect.execute(CustomerAction { _, _ in customerIn.open(); _ = both.wait() })
        try connect.execute(PurchaseAction { _ in purchaseIn.open(); _ = both.wait() })
        #expect(await customerIn.arrived(), "the Customer action started")
        #expect(await purchaseIn.arrived(), "the Purchase action started while the Customer action ran")
        both.open(); both.open()
        await connect.waitUntilIdle()
    }

    @Test func genericActionsRunAtMostFiveAtATimeByDefault() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let spans = Spans()
        for _ in 0..<20 { connect.execute(BlockAction { _ in spans.run("generic", for: .milliseconds(20)) }) }
        await connect.waitUntilIdle()
        #expect(spans.peak("generic") == 5)
    }

    @Test func theGenericLimitIsConfigurable() async throws {
        let connect = try ConnectTestModel.makeConnect(options: ConnectOptions(maximumConcurrentGenericActions: 2))
        defer { try? connect.close() }
        let spans = Spans()
        for _ in 0..<10 { connect.execute(BlockAction { _ in spans.run("generic", for: .milliseconds(20)) }) }
        await connect.waitUntilIdle()
        #expect(spans.peak("generic") == 2)
    }

    @Test func suspendingHoldsNewActionsAndRunningOnesFinish() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        #expect(!connect.isSuspended)
        let gate = Gate()
        let running = connect.execute(BlockAction { _ in _ = gate.wait() })
        #expect(try await OutboxTests.waitFor { running.state == .executing })
        connect.suspend()
        #expect(connect.isSuspended)
        let held = connect.execute(BlockAction())
        gate.open()
        await running.waitUntilFinished()
        #expect(running.completionStatus == .successful)
        try await Task.sleep(for: .milliseconds(50))
        #expect(held.state == .pending)
        connect.resume()
        #expect(!connect.isSuspended)
        await held.waitUntilFinished()
        #expect(held.completionStatus == .successful)
    }

    @Test func cancelAllCancelsQueuedAndRunningActions() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let started = Gate()
        let running = try connect.execute(CustomerAction { _, action in
            started.open()
            while !action.canceled.isSet { Thread.sleep(forTimeInterval: 0.001) }
        })
        let queued = try (0..<5).map { _ in try connect.execute(CustomerAction()) }
        #expect(await started.arrived())
        connect.cancelAll()
        await connect.waitUntilIdle()
        #expect(running.completionStatus == .canceled)
        #expect(queued.allSatisfy { $0.completionStatus == .canceled && $0.statistics.startTime == nil })
        #expect(connect.activeActionCount == 0)
    }

    @Test func waitUntilIdleReturnsAfterEveryCompletion() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let completions = Recorder<Int>()
        for i in 0..<30 {
            connect.execute(BlockAction { _ in Thread.sleep(forTimeInterval: 0.001) }) { _ in completions.append(i) }
        }
        await connect.waitUntilIdle()
        #expect(completions.all.count == 30)
        await connect.waitUntilIdle()
    }
}
