import Foundation
import Synchronization
import Testing
@testable import GranaryStorage

/// Kills a real writer process with SIGKILL at random moments and checks, after each kill, that every
/// commit it acknowledged is in the store and that no commit is partly there.
@Suite(.serialized) struct CrashTests {
    static var childExecutable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("granary-crashtest")
    }

    /// Runs the child until it has said `ready`, lets it commit for `millis`, kills it, and returns the
    /// commits it acknowledged.
    func runAndKill(store: URL, threads: Int, millis: Int) throws -> [Int64] {
        let process = Process()
        process.executableURL = Self.childExecutable
        process.arguments = [store.path, String(threads), String(48 << 10)]
        let pipe = Pipe()
        process.standardOutput = pipe
        let output = Mutex(Data())
        try process.run()
        // Read to the end of the pipe on a thread of its own: a readability handler removed while it
        // was still reading dropped the last chunk, and with it acknowledged commits to check.
        let drained = DispatchSemaphore(value: 0)
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread {
            while case let chunk = handle.availableData, !chunk.isEmpty { output.withLock { $0.append(chunk) } }
            drained.signal()
        }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !output.withLock({ String(decoding: $0, as: UTF8.self).contains("ready") }) && Date() < deadline && process.isRunning {
            Thread.sleep(forTimeInterval: 0.002)
        }
        Thread.sleep(forTimeInterval: Double(millis) / 1000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Bounded, in case a process another test launched inherited the pipe's write end.
        _ = drained.wait(timeout: .now() + 10)
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
        #expect(!text.contains("error"), "child failed: \(text.suffix(300))")
        #expect(process.terminationReason == .uncaughtSignal)
        // Only complete lines count: a line cut by the kill was never fully acknowledged.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line in
            line.hasPrefix("ack ") ? Int64(line.dropFirst(4)) : nil
        }
    }

    func checkConsistent(_ store: URL, acknowledged: Set<Int64>) throws -> Int64 {
        let engine = try Engine.open(.directory(store))
        defer { try? engine.close() }
        let s = engine.read()
        let ledger = try s.count(in: "ledger")
        let audit = try s.count(in: "audit")
        guard case .int(let counter)? = try s.row(in: "counter", key: 1)?[0] else {
            Issue.record("counter row missing")
            return 0
        }
        #expect(Int64(ledger) == counter, "ledger has \(ledger) rows but the counter says \(counter)")
        #expect(audit == ledger, "audit has \(audit) rows, ledger \(ledger): a commit is half there")
        #expect(try s.count(IndexQuery(table: "ledger", index: "byN")) == ledger)
        for n in acknowledged {
            #expect(try s.contains(in: "ledger", key: n), "acknowledged commit \(n) is lost")
        }
        // Commits are numbered 1, 2, 3…: any hole would be a lost commit.
        var expected: Int64 = 1
        try s.forEachRow(in: "ledger") { key, row in
            #expect(key == expected && row[0] == .int(key))
            expected += 1
            return true
        }
        return counter
    }

    @Test(.timeLimit(.minutes(5)))
    func killedWriterLosesNoAcknowledgedCommit() throws {
        let store = temporaryDirectory()
        var acknowledged = Set<Int64>()
        var rng = SystemRandomNumberGenerator()
        var last: Int64 = 0
        let rounds = 14
        for round in 0..<rounds {
            let threads = round % 3 == 2 ? 2 : 1
            let acks = try runAndKill(store: store, threads: threads, millis: Int.random(in: 5...350, using: &rng))
            acknowledged.formUnion(acks)
            let count = try checkConsistent(store, acknowledged: acknowledged)
            #expect(count >= last, "the store went backwards from \(last) to \(count) commits")
            last = count
        }
        // The child checkpoints every 97 commits and past 48 KiB of log, so many kills land around one.
        #expect(last > 100, "too few commits (\(last)) to have exercised checkpoints")
    }
}
