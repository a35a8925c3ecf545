import Foundation
import GranaryConnect
import Synchronization

/// The tests' real web service: `Server/feed_server.py` run by python3 on 127.0.0.1, on a port the
/// kernel picks, stopped by `stop()` (or killed, for the tests where the server dies).
final class TestWebServer: Sendable {
    let url: URL
    let journal: URL?
    private let process: Process

    /// Starts the server; with `journal`, the outbox keys it applies survive its restarts in that file.
    init(journal: URL? = nil, port: Int = 0) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Server/feed_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", "\(port)"] + (journal.map { ["--journal", $0.path] } ?? [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw TestFailure(text: "the test server did not start (is python3 installed?)")
        }
        self.process = process
        self.journal = journal
        url = URL(string: "http://127.0.0.1:\(port)/")!
    }

    var service: WebService { WebService(baseURL: url, timeout: 5) }

    var isRunning: Bool { process.isRunning }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }

    // MARK: Controls

    func seed(count: Int, prefix: String = "c") async throws {
        try await service.post("admin/seed", json: ["count": count, "prefix": prefix])
    }

    func seed(_ feed: [[String: Any]]) async throws {
        try await service.post("admin/seed", json: feed)
    }

    func setMode(_ mode: [String: Any]) async throws {
        try await service.post("admin/mode", json: mode)
    }

    /// The outbox entries the server applied, in order, and how many arrived again.
    func received() async throws -> (applied: [String], duplicates: Int, entries: [[String: Any]]) {
        let data = try await service.get("admin/received")
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return (object["applied"] as? [String] ?? [], object["duplicates"] as? Int ?? 0, object["entries"] as? [[String: Any]] ?? [])
    }
}
