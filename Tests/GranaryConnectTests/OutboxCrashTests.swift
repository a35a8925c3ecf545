import Foundation
import Synchronization
import Testing

/// The outbox across SIGKILLs: a child process (`granary-crashtest connect-outbox`) saves edits that
/// its outbox sends to the test web service, and is killed at random moments — in a save, in a send,
/// between the server's answer and the cursor's commit. A last run flushes what is left. Every edit the
/// child acknowledged must reach the server as an entry applied once (by idempotency key), in order per
/// object; an entry carries the object's values when it is sent, so the server ends with the last edit.
@Suite(.serialized) struct OutboxCrashTests {
    static var crashtest: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("granary-crashtest")
    }

    /// Runs the child until it printed `lines` lines (or exited), waits `delay`, kills it; returns its lines.
    static func runAndKill(_ arguments: [String], afterLines lines: Int, delay: Double) throws -> [String] {
        let process = Process()
        process.executableURL = crashtest
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let collected = Mutex(Data())
        try process.run()
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty { collected.withLock { $0.append(chunk) } }
            drained.signal()
        }
        func count() -> Int { collected.withLock { $0.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } } }
        let deadline = Date(timeIntervalSinceNow: 60)
        while process.isRunning, count() < lines, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        Thread.sleep(forTimeInterval: delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = drained.wait(timeout: .now() + 10)
        return collected.withLock { String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init) }
    }

    @Test func everyAcknowledgedEditReachesTheServerOnceAcrossKills() async throws {
        let directory = ConnectTestModel.scratchDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try TestWebServer(journal: directory.appendingPathComponent("journal"))
        defer { server.stop() }
        var random = SystemRandomNumberGenerator()
        var acknowledged: [String: Int] = [:]      // uuid → last edit number the child saved
        for run in 0..<6 {
            let lines = try Self.runAndKill(["connect-outbox", directory.appendingPathComponent("store").path, server.url.absoluteString, "\(run + 1)"],
                                            afterLines: Int.random(in: 5...40, using: &random),
                                            delay: Double.random(in: 0...0.02, using: &random))
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(lines.filter { $0.hasPrefix("error") })")
            for line in lines where line.hasPrefix("saved ") {
                let parts = line.split(separator: " ")
                acknowledged[String(parts[1])] = Int(parts[2])!
            }
        }
        #expect(!acknowledged.isEmpty)
        // Flush what is left, without new edits.
        let flush = try Self.runAndKill(["connect-outbox", directory.appendingPathComponent("store").path, server.url.absoluteString, "0", "flush"],
                                        afterLines: 1, delay: 0)
        #expect(flush.contains("flushed"), "\(flush)")

        let received = try await server.received()
        #expect(Set(received.applied).count == received.applied.count, "no key applied twice")
        // Per object: the edits the server applied, in order.
        var seen: [String: [Int]] = [:]
        for entry in received.entries {
            guard let uuid = (entry["key"] as? [String: Any])?["uuid"] as? String else { continue }
            let values = entry["values"] as? [String: Any] ?? [:]
            if entry["kind"] as? String == "insert" { seen[uuid, default: []].append(0) } else if let edit = values["edit"] as? Int {
                seen[uuid, default: []].append(edit)
            }
        }
        for (uuid, last) in acknowledged {
            let edits = seen[uuid] ?? []
            #expect(edits.first == 0, "\(uuid): its insert arrived first")
            #expect(edits == edits.sorted(), "\(uuid): in order, \(edits)")
            #expect(edits.last.map { $0 >= last } == true, "\(uuid): the acknowledged edit \(last) arrived (\(edits))")
            #expect(edits.count >= last + 1, "\(uuid): one entry per saved edit (\(edits))")
        }
        for uuid in seen.keys { #expect(acknowledged[uuid] != nil || uuid.hasPrefix("s"), "\(uuid) was never made") }
    }
}
