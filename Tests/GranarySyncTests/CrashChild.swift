import Foundation
import Synchronization

/// Runs `granary-crashtest` with `arguments` (its mode first) and kills it with SIGKILL `delay` seconds
/// after it printed `line`: the crash tests of the event store and of uploads share it.
enum CrashChild {
    struct Outcome {
        var killed: Bool
        var lines: [String]
        var err: String
    }

    static func runAndKill(_ arguments: [String], afterLine line: String, delay: Double) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("granary-crashtest")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let collected = Mutex((out: Data(), err: Data()))
        try process.run()
        let drained = DispatchGroup()
        for (handle, isOut) in [(out.fileHandleForReading, true), (err.fileHandleForReading, false)] {
            drained.enter()
            Thread.detachNewThread {
                while case let chunk = handle.availableData, !chunk.isEmpty {
                    collected.withLock { isOut ? $0.out.append(chunk) : $0.err.append(chunk) }
                }
                drained.leave()
            }
        }
        let deadline = Date(timeIntervalSinceNow: 60)
        while process.isRunning && Date() < deadline
            && !collected.withLock({ String(decoding: $0.out, as: UTF8.self).split(separator: "\n").contains { $0 == line } }) {
            Thread.sleep(forTimeInterval: 0.001)
        }
        Thread.sleep(forTimeInterval: delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = drained.wait(timeout: .now() + 10)
        return collected.withLock {
            Outcome(killed: process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                    lines: String(decoding: $0.out, as: UTF8.self).split(separator: "\n").map(String.init),
                    err: String(decoding: $0.err, as: UTF8.self))
        }
    }
}
