import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Synchronization
import Testing

/// §4.1: states, completion statuses, cancellation at every state, statistics, notifications.
@Suite struct ActionLifecycleTests {
    @Test func aProxyMovesFromCreatedThroughPendingAndExecutingToFinished() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let gate = Gate()
        connect.suspend()                          // held in its lane: pending
        let proxy = connect.execute(BlockAction { _ in _ = gate.wait() })
        let updates = proxy.stateUpdates           // the current state first, then each change
        let watcher = Task { var seen: [ActionState] = []; for await state in updates { seen.append(state) }; return seen }
        connect.resume()
        #expect(try await OutboxTests.waitFor { proxy.state == .executing })
        gate.open()
        let states = await watcher.value
        #expect(states == [.pending, .executing, .finished])
        #expect(proxy.completionStatus == .successful)
        #expect(proxy.error == nil)
    }

    @Test func aQueuedActionIsPendingNotCreated() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        connect.suspend()
        let proxy = connect.execute(BlockAction())
        #expect(proxy.state == .pending, "Coherence never set pending; Granary does")
        connect.resume()
        await proxy.waitUntilFinished()
        #expect(proxy.state == .finished)
    }

    @Test func aThrowingActionFailsWithItsError() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = await connect.run(BlockAction { _ in throw TestFailure(text: "server said no") })
        #expect(proxy.completionStatus == .failed)
        #expect(proxy.error as? TestFailure == TestFailure(text: "server said no"))
    }

    @Test func cancelledBeforeItStartsItNeverRunsAndTheCompletionComesOnce() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        connect.suspend()
        let ran = Recorder<Int>()
        let completions = Recorder<ActionCompletionStatus>()
        let proxy = connect.execute(BlockAction { _ in ran.append(1) }) { completions.append($0.completionStatus) }
        proxy.cancel()
        proxy.cancel()
        await proxy.waitUntilFinished()
        #expect(proxy.state == .finished)
        #expect(proxy.completionStatus == .canceled)
        connect.resume()
        await connect.waitUntilIdle()
        #expect(ran.all.isEmpty)
        #expect(completions.all == [.canceled])
        #expect(proxy.statistics.startTime == nil)
    }

    @Test func cancelledWhileRunningItEndsCancelledAndAThrownErrorIsKept() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let started = Gate()
        let cancelled = Gate()
        let returning = connect.execute(BlockAction { action in
            started.open()
            _ = cancelled.wait()
            #expect(action.canceled.isSet, "cancel() reached the action")
        })
        #expect(await started.arrived())
        returning.cancel()
        cancelled.open()
        await returning.waitUntilFinished()
        #expect(returning.completionStatus == .canceled)
        #expect(returning.error == nil)

        let throwing = connect.execute(BlockAction { _ in
            started.open()
            _ = cancelled.wait()
            throw TestFailure(text: "stopped")
        })
        #expect(await started.arrived())
        throwing.cancel()
        cancelled.open()
        await throwing.waitUntilFinished()
        #expect(throwing.completionStatus == .canceled, "cancelled, not failed")
        #expect(throwing.error as? TestFailure == TestFailure(text: "stopped"))
    }

    @Test func cancellingAFinishedActionChangesNothing() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let completions = Recorder<Int>()
        let proxy = connect.execute(BlockAction()) { _ in completions.append(1) }
        await proxy.waitUntilFinished()
        proxy.cancel()
        try await Task.sleep(for: .milliseconds(20))
        #expect(proxy.completionStatus == .successful)
        #expect(completions.all.count == 1)
    }

    @Test func anAsyncActionSeesTaskCancellation() async throws {
        final class Sleeper: AsyncGenericAction {
            let sleeping = Gate()
            func execute() async throws {
                sleeping.open()
                try await Task.sleep(for: .seconds(900))
            }
            func cancel() {}
        }
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let sleeper = Sleeper()
        let proxy = connect.execute(sleeper)
        #expect(await sleeper.sleeping.arrived())
        proxy.cancel()
        await proxy.waitUntilFinished()
        #expect(proxy.statistics.executionTime < 600, "the sleep was cancelled, not waited out")
        #expect(proxy.completionStatus == .canceled)
        #expect(proxy.error is CancellationError)
    }

    @Test func executionTimeIsFinishMinusStartAndExcludesTheCompletion() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = connect.execute(BlockAction { _ in Thread.sleep(forTimeInterval: 0.05) }) { _ in Thread.sleep(forTimeInterval: 0.3) }
        await proxy.waitUntilFinished()
        let statistics = proxy.statistics
        let start = try #require(statistics.startTime)
        let finish = try #require(statistics.finishTime)
        #expect(statistics.createdTime <= start)
        #expect(start <= finish)
        #expect(abs(statistics.executionTime - finish.timeIntervalSince(start)) < 1e-9)
        #expect(statistics.executionTime >= 0.05)
        #expect(statistics.executionTime < 0.3, "the completion's 0.3 s is not counted")
        #expect(statistics.contextStatistics == nil)
    }

    @Test func entityActionsCountTheirContextsInsertsUpdatesDeletesAndFetches() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(CustomerAction { context, _ in
            for i in 0..<3 {
                let customer = Customer(context: context.managedObjectContext)
                customer.uuid = "c\(i)"
            }
            try context.save()
            let all = try context.fetch(Customer.fetchRequest())
            all[0].name = "changed"
            context.delete(all[1])
            try context.save()
        })
        #expect(proxy.completionStatus == .successful)
        let statistics = try #require(proxy.statistics.contextStatistics)
        #expect(statistics.inserts == 3)
        #expect(statistics.updates == 1)
        #expect(statistics.deletes == 1)
        #expect(statistics.fetches == 3)
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.contextBlockTime > 0)
        #expect(statistics.contextBlockTime >= statistics.fetchTime + statistics.saveTime)
    }

    @Test func anEntityActionsSaveReachesTheViewContext() async throws {
        let connect = try ConnectTestModel.makeConnect(MixedStrategy.self)
        defer { try? connect.close() }
        let proxy = try await connect.run(CustomerAction { context, _ in
            let customer = Customer(context: context.managedObjectContext)
            customer.uuid = "seen"
            try context.save()
        })
        #expect(proxy.completionStatus == .successful)
        try await connect.flush()
        let names = try await connect.viewContext.perform {
            try connect.viewContext.fetch(Customer.fetchRequest()).map(\.uuid)
        }
        #expect(names == ["seen"])
    }

    @Test func startAndFinishAreNotifiedWithTheConnectAndTheProxy() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let seen = Recorder<(String, ActionState)>()
        let observers = [Notification.Name.actionDidStartExecuting, .actionDidFinishExecuting].map { name in
            NotificationCenter.default.addObserver(forName: name, object: connect, queue: nil) { note in
                guard let proxy = note.userInfo?[ActionNotificationKey.actionProxy] as? ActionProxy else { return }
                seen.append((note.name.rawValue, proxy.state))
            }
        }
        defer { for observer in observers { NotificationCenter.default.removeObserver(observer) } }
        _ = await connect.run(BlockAction())
        #expect(try await OutboxTests.waitFor { seen.all.count >= 2 })
        #expect(seen.all.map(\.0) == ["GranaryConnect.ActionDidStartExecuting", "GranaryConnect.ActionDidFinishExecuting"])
    }

    @Test func aSlowObserverDoesNotDelayTheNextAction() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let observer = NotificationCenter.default.addObserver(forName: .actionDidStartExecuting, object: connect, queue: nil) { _ in
            Thread.sleep(forTimeInterval: 1)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        // Two actions in one serial lane: the second starts when the first finished, not when the
        // observer of the first one's start wakes up.
        let first = try connect.execute(CustomerAction())
        let second = try connect.execute(CustomerAction())
        await second.waitUntilFinished()
        let gap = try #require(second.statistics.startTime).timeIntervalSince(try #require(first.statistics.finishTime))
        #expect(gap < 0.5, "the second action waited \(gap) s")
    }

    @Test func theProxyIsReadFromEightThreadsDuringExecution() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let gate = Gate()
        let proxy = connect.execute(BlockAction { _ in _ = gate.wait() })
        let reads = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<2_000 {
                let snapshot = proxy.snapshot
                // A snapshot is consistent: a finished action has a status, an unfinished one none.
                #expect((snapshot.state == .finished) == (snapshot.completionStatus != .unknown))
                _ = proxy.statistics.executionTime
                if thread == 0, i == 1_000 { gate.open() }
                reads.add(1, ordering: .relaxed)
            }
        }
        await proxy.waitUntilFinished()
        #expect(reads.load(ordering: .relaxed) == 16_000)
        #expect(proxy.completionStatus == .successful)
    }

    @Test func anEntityActionUsesTheRecordsModulesImportOnItsContext() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let json = Data(#"[{"uuid": "j1", "name": "Ada", "score": "4"}, {"uuid": "j2", "name": "Bob", "score": 2}]"#.utf8)
        let proxy = try await connect.run(CustomerAction { context, _ in
            let imported = try Customer.parse(jsonData: json, in: context.managedObjectContext)
            #expect(imported.map(\.score) == [4, 2])
            try context.save()
            let again = try Customer(entityID: "j1", context: context.managedObjectContext)
            #expect(again.name == "Ada", "find-or-create by unique ID finds it")
        })
        #expect(proxy.completionStatus == .successful, "\(proxy)")
        #expect(proxy.statistics.contextStatistics?.inserts == 2)
    }

    @Test func lanesAreKeyedByEntityNameNotClassName() async throws {
        final class PurchasesByName: EntityAction {
            typealias ManagedObjectType = ManagedObject
            static var entityName: String? { "Purchase" }
            func execute(context: ActionContext) throws { #expect(context.entityName == "Purchase") }
            func cancel() {}
        }
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(PurchasesByName())
        #expect(proxy.entityName == "Purchase")
        #expect(proxy.completionStatus == .successful)
    }

    @Test func notificationsAreDeliveredOffTheActionsThread() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let bodyRan = Gate()
        let observed = Recorder<Bool>()
        // The observer waits for the action's body: were the notification posted on the action's thread
        // before the body, it would wait in vain.
        let observer = NotificationCenter.default.addObserver(forName: .actionDidStartExecuting, object: connect, queue: nil) { _ in
            observed.append(bodyRan.wait(seconds: 3))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = await connect.run(BlockAction { _ in bodyRan.open() })
        #expect(try await OutboxTests.waitFor { !observed.all.isEmpty })
        #expect(observed.all == [true])
    }
}
