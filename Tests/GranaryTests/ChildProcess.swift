import Foundation
import Synchronization

/// Runs one of the package's executables (built beside the test binary) as a real process, for the
/// command-line and crash tests: optionally killed with SIGKILL after a delay or once it has printed a
/// line.
enum ChildProcess {
    struct Outcome {
        var status: Int32
        var reason: Process.TerminationReason
        var out: String
        var err: String
    }

    /// An executable of this package, by product name.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
    }

    static func run(_ name: String, _ arguments: [String], killAfter delay: Double? = nil,
                    killOnceItPrints line: String? = nil) throws -> Outcome {
        let process = Process()
        process.executableURL = executable(name)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // Both pipes are drained as data arrives, so a chatty child never blocks on a full pipe, each on
        // a thread of its own that reads to the end of the pipe.
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
        if let line {
            let deadline = Date(timeIntervalSinceNow: 60)
            while process.isRunning && Date() < deadline && !collected.withLock({ String(decoding: $0.out, as: UTF8.self).contains(line) }) {
                Thread.sleep(forTimeInterval: 0.005)
            }
            kill(process.processIdentifier, SIGKILL)
        } else if let delay {
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        // Read to the end, not only what had arrived at the exit: a readability handler that was still
        // reading the last chunk when it was removed dropped that chunk (once, a migration test got no
        // output from a child that had exited normally). Bounded, in case a child another test
        // launched inherited a pipe's write end and outlives this one.
        _ = drained.wait(timeout: .now() + 10)
        return collected.withLock {
            Outcome(status: process.terminationStatus, reason: process.terminationReason,
                    out: String(decoding: $0.out, as: UTF8.self), err: String(decoding: $0.err, as: UTF8.self))
        }
    }
}
