import Foundation
import Testing
@testable import GranaryStorage

/// Runs the real `granary` executable: bad paths and damaged stores must give a one-line message and
/// a non-zero exit, never a crash trace.
@Suite struct CommandLineToolTests {
    static var tool: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("granary")
    }

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = Self.tool
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    func makeStore() throws -> URL {
        let dir = temporaryDirectory("cli")
        let engine = try Engine.open(.directory(dir))
        try makePeople(engine)
        try engine.close()
        return dir
    }

    @Test func infoVerifyDumpAndCheckpointOnASoundStore() throws {
        let dir = try makeStore()
        let info = try run(["info", dir.path])
        #expect(info.status == 0)
        #expect(info.out.contains("table person: 8 rows"))
        #expect(info.out.contains("index byName: 8 entries"))
        let verify = try run(["verify", dir.path])
        #expect(verify.status == 0 && verify.out.contains("the store is sound"))
        let dump = try run(["dump", dir.path, "--table", "person"])
        let lines = dump.out.split(separator: "\n")
        #expect(dump.status == 0 && lines.count == 8)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect((first?["values"] as? [String: Any])?["name"] as? String == "Ada")
        let checkpoint = try run(["checkpoint", dir.path])
        #expect(checkpoint.status == 0 && checkpoint.out.contains("snapshot"))
        #expect(try run(["verify", dir.path]).status == 0)
    }

    @Test func badPathsGetAMessageAndExitStatusOne() throws {
        let missing = try run(["info", "/nonexistent/Nothing.granary"])
        #expect(missing.status == 1)
        #expect(missing.err.contains("does not exist"))
        let file = temporaryDirectory("file").appendingPathComponent("plain.txt")
        try Data("hello".utf8).write(to: file)
        let notDirectory = try run(["verify", file.path])
        #expect(notDirectory.status == 1 && notDirectory.err.contains("not a store directory"))
        let empty = try run(["info", temporaryDirectory("empty").path])
        #expect(empty.status == 1 && empty.err.contains("not a Granary store"))
        let unknownTable = try run(["dump", try makeStore().path, "-t", "nope"])
        #expect(unknownTable.status == 1 && unknownTable.err.contains("no table named 'nope'"))
        for result in [missing, notDirectory, empty, unknownTable] {
            #expect(!result.err.contains("Fatal error") && !result.err.contains("Stack dump"))
        }
    }

    @Test func damagedStoreFailsVerifyWithTheFileAndOffset() throws {
        let dir = try makeStore()
        let engine = try Engine.open(.directory(dir))
        try engine.checkpoint()
        try engine.close()
        let snap = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasSuffix(".snap") })
        var bytes = try Data(contentsOf: dir.appendingPathComponent(snap))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: dir.appendingPathComponent(snap))
        let verify = try run(["verify", dir.path])
        #expect(verify.status == 1)
        #expect(verify.err.contains(snap) && verify.err.contains("offset"))
    }

    @Test func lockedStoreIsReportedNotCorrupted() throws {
        let dir = try makeStore()
        let engine = try Engine.open(.directory(dir))
        let checkpoint = try run(["checkpoint", dir.path])
        #expect(checkpoint.status == 1 && checkpoint.err.contains("already open"))
        try engine.close()
        #expect(try run(["verify", dir.path]).status == 0)
    }
}
