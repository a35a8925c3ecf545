import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// The contract of `CloudFileSystem`, run against every implementation: what an ensemble relies on
/// must hold for a folder exactly as it does in memory.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, localDirectory

    var testDescription: String { rawValue }

    /// A fresh, connected file system and a scratch directory for local files; `cleanup` removes both.
    func make() async throws -> (fileSystem: any CloudFileSystem, scratch: URL, cleanup: @Sendable () -> Void) {
        let scratch = try makeScratchDirectory()
        let fileSystem: any CloudFileSystem
        switch self {
        case .memory:
            fileSystem = MemoryFileSystem()
        case .localDirectory:
            let root = scratch.appendingPathComponent("shared")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
            fileSystem = LocalDirectoryFileSystem(rootDirectory: root)
        }
        try await fileSystem.connect()
        return (fileSystem, scratch, { removeScratch(scratch) })
    }
}

@Suite struct CloudFileSystemContractTests {
    @Test(arguments: Backend.allCases) func everyOperationNeedsAConnection(backend: Backend) async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let root = scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        let fileSystem: any CloudFileSystem = backend == .memory ? MemoryFileSystem() : LocalDirectoryFileSystem(rootDirectory: root)
        #expect(await fileSystem.isConnected == false)
        let local = try localFile(Data("x".utf8), in: scratch)
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.fetchUserIdentity() }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.fileExists(atPath: "a") }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.createDirectory(atPath: "a") }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.contentsOfDirectory(atPath: "") }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.removeItem(atPath: "a") }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.uploadLocalFile(at: local, toPath: "a") }
        await #expect(throws: CloudFileSystemError.notConnected) { try await fileSystem.downloadFile(atPath: "a", toLocalFile: local) }
        try await fileSystem.connect()
        #expect(await fileSystem.isConnected)
        #expect(try await fileSystem.contentsOfDirectory(atPath: "").isEmpty)
    }

    @Test(arguments: Backend.allCases) func theIdentityIsStable(backend: Backend) async throws {
        let (fileSystem, _, cleanup) = try await backend.make()
        defer { cleanup() }
        let first = try #require(try await fileSystem.fetchUserIdentity())
        #expect(try await fileSystem.fetchUserIdentity() == first)
        try await fileSystem.connect()
        #expect(try await fileSystem.fetchUserIdentity() == first, "connecting again keeps the identity")
    }

    @Test(arguments: Backend.allCases) func createDirectoryIsIdempotentAndMakesParents(backend: Backend) async throws {
        let (fileSystem, _, cleanup) = try await backend.make()
        defer { cleanup() }
        try await fileSystem.createDirectory(atPath: "Notes/events")
        try await fileSystem.createDirectory(atPath: "Notes/events")
        try await fileSystem.createDirectory(atPath: "Notes")
        try await fileSystem.createDirectory(atPath: "")
        #expect(try await fileSystem.fileExists(atPath: "Notes") == .directory)
        #expect(try await fileSystem.fileExists(atPath: "Notes/events") == .directory)
        #expect(try await fileSystem.fileExists(atPath: "") == .directory)
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes") == [.directory(name: "events")])
    }

    @Test(arguments: Backend.allCases) func aFileInTheWayOfADirectoryIsAnError(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        try await fileSystem.uploadLocalFile(at: try localFile(Data("x".utf8), in: scratch), toPath: "plain")
        await #expect(throws: CloudFileSystemError.self) { try await fileSystem.createDirectory(atPath: "plain") }
        await #expect(throws: CloudFileSystemError.self) { try await fileSystem.createDirectory(atPath: "plain/below") }
        do {
            try await fileSystem.createDirectory(atPath: "plain")
        } catch {
            guard case .notADirectory = error else { throw error }
        }
        do {
            _ = try await fileSystem.contentsOfDirectory(atPath: "plain")
            Issue.record("a file was listed as a directory")
        } catch {
            guard case .notADirectory = error else { throw error }
        }
        #expect(try await fileSystem.fileExists(atPath: "plain/below") == .none)
    }

    @Test(arguments: Backend.allCases) func uploadThenDownloadGivesTheSameBytesAndReplaces(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        var g = SplitMix(seed: 11)
        let first = g.bytes(3 << 20 + 17), second = g.bytes(10)
        try await fileSystem.createDirectory(atPath: "Notes/events")
        try await fileSystem.uploadLocalFile(at: try localFile(first, in: scratch), toPath: "Notes/events/a.gsevent")
        #expect(try await fileSystem.fileExists(atPath: "Notes/events/a.gsevent") == .file)
        let target = scratch.appendingPathComponent("downloaded")
        try await fileSystem.downloadFile(atPath: "Notes/events/a.gsevent", toLocalFile: target)
        #expect(try Data(contentsOf: target) == first)
        try await fileSystem.uploadLocalFile(at: try localFile(second, in: scratch), toPath: "Notes/events/a.gsevent")
        try await fileSystem.downloadFile(atPath: "Notes/events/a.gsevent", toLocalFile: target)
        #expect(try Data(contentsOf: target) == second, "an upload replaces, a download overwrites")
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes/events") == [.file(name: "a.gsevent", size: 10)])
    }

    @Test(arguments: Backend.allCases) func listingsShowImmediateChildrenSortedWithSizes(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        try await fileSystem.createDirectory(atPath: "E/sub/deeper")
        for (name, size) in [("b", 2), ("a", 1), ("c", 0)] {
            try await fileSystem.uploadLocalFile(at: try localFile(Data(count: size), in: scratch), toPath: "E/\(name)")
        }
        try await fileSystem.uploadLocalFile(at: try localFile(Data(count: 5), in: scratch), toPath: "E/sub/inner")
        #expect(try await fileSystem.contentsOfDirectory(atPath: "E") == [
            .file(name: "a", size: 1), .file(name: "b", size: 2), .file(name: "c", size: 0), .directory(name: "sub"),
        ])
        #expect(try await fileSystem.contentsOfDirectory(atPath: "E/sub") == [.directory(name: "deeper"), .file(name: "inner", size: 5)])
        #expect(try await fileSystem.contentsOfDirectory(atPath: "") == [.directory(name: "E")], "the root lists no bookkeeping files")
    }

    @Test(arguments: Backend.allCases) func missingItemsAreTypedErrors(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        #expect(try await fileSystem.fileExists(atPath: "nothing") == .none)
        #expect(try await fileSystem.fileExists(atPath: "nothing/below") == .none)
        func expectNotFound(_ label: String, _ body: () async throws(CloudFileSystemError) -> Void) async {
            do {
                try await body()
                Issue.record("\(label): no error")
            } catch {
                guard case .notFound = error else { Issue.record("\(label): \(error)"); return }
            }
        }
        await expectNotFound("listing") { () throws(CloudFileSystemError) in _ = try await fileSystem.contentsOfDirectory(atPath: "nothing") }
        await expectNotFound("download") { () throws(CloudFileSystemError) in
            try await fileSystem.downloadFile(atPath: "nothing", toLocalFile: scratch.appendingPathComponent("x"))
        }
        let local = try localFile(Data("x".utf8), in: scratch)
        await expectNotFound("upload into a missing directory") { () throws(CloudFileSystemError) in
            try await fileSystem.uploadLocalFile(at: local, toPath: "nothing/file")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("x").path), "a failed download writes nothing")
        do {
            try await fileSystem.uploadLocalFile(at: scratch.appendingPathComponent("no-such-local-file"), toPath: "file")
            Issue.record("an upload of a missing local file succeeded")
        } catch {
            guard case let .localFile(path, _) = error else { throw error }
            #expect(path.hasSuffix("no-such-local-file"))
        }
        #expect(try await fileSystem.fileExists(atPath: "file") == .none, "a failed upload leaves nothing")
        try await fileSystem.uploadLocalFile(at: local, toPath: "file")
        do {
            try await fileSystem.downloadFile(atPath: "file", toLocalFile: scratch.appendingPathComponent("missing-dir/x"))
            Issue.record("a download into a missing local directory succeeded")
        } catch {
            guard case .localFile = error else { throw error }
        }
        try await fileSystem.createDirectory(atPath: "dir")
        await #expect(throws: CloudFileSystemError.isADirectory(path: "dir")) {
            try await fileSystem.downloadFile(atPath: "dir", toLocalFile: scratch.appendingPathComponent("y"))
        }
        await #expect(throws: CloudFileSystemError.isADirectory(path: "dir")) { try await fileSystem.uploadLocalFile(at: local, toPath: "dir") }
    }

    @Test(arguments: Backend.allCases) func removeIsIdempotentAndRecursive(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        try await fileSystem.createDirectory(atPath: "Notes/events/deep")
        try await fileSystem.uploadLocalFile(at: try localFile(Data("1".utf8), in: scratch), toPath: "Notes/events/deep/f")
        try await fileSystem.uploadLocalFile(at: try localFile(Data("2".utf8), in: scratch), toPath: "Notes/keep")
        try await fileSystem.removeItem(atPath: "Notes/keep")
        try await fileSystem.removeItem(atPath: "Notes/keep")
        #expect(try await fileSystem.fileExists(atPath: "Notes/keep") == .none)
        try await fileSystem.removeItem(atPath: "Notes/events")
        try await fileSystem.removeItem(atPath: "Notes/events")
        try await fileSystem.removeItem(atPath: "never/was/here")
        #expect(try await fileSystem.fileExists(atPath: "Notes/events/deep/f") == .none)
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes").isEmpty)
        // Recreating a removed directory finds it empty.
        try await fileSystem.createDirectory(atPath: "Notes/events")
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes/events").isEmpty)
    }

    @Test(arguments: Backend.allCases) func invalidPathsAreRefusedBeforeTouchingAnything(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let local = try localFile(Data("x".utf8), in: scratch)
        for path in ["/abs", "a//b", "a/", "..", "a/../b", ".hidden", "a/.part", "./a", "a\u{0}b", String(repeating: "x", count: 300)] {
            await #expect(throws: CloudFileSystemError.self, "\(path.debugDescription)") { try await fileSystem.fileExists(atPath: path) }
            await #expect(throws: CloudFileSystemError.self, "\(path.debugDescription)") { try await fileSystem.createDirectory(atPath: path) }
            await #expect(throws: CloudFileSystemError.self, "\(path.debugDescription)") { try await fileSystem.uploadLocalFile(at: local, toPath: path) }
            await #expect(throws: CloudFileSystemError.self, "\(path.debugDescription)") { try await fileSystem.removeItem(atPath: path) }
        }
        for path in [""] {
            await #expect(throws: CloudFileSystemError.self, "the root is no item") { try await fileSystem.removeItem(atPath: path) }
            await #expect(throws: CloudFileSystemError.self, "the root is no item") { try await fileSystem.uploadLocalFile(at: local, toPath: path) }
            await #expect(throws: CloudFileSystemError.self, "the root is no item") {
                try await fileSystem.downloadFile(atPath: path, toLocalFile: scratch.appendingPathComponent("r"))
            }
        }
        #expect(try await fileSystem.contentsOfDirectory(atPath: "").isEmpty)
        if backend == .localDirectory {
            #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("abs").path))
            #expect(FileManager.default.fileExists(atPath: local.path), "nothing outside the root was touched")
        }
    }

    /// Random operations on both implementations side by side: every answer and every listing agree.
    @Test func bothImplementationsAgreeOnRandomOperations() async throws {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                let (memory, scratch, cleanupMemory) = try await Backend.memory.make()
                let (folder, _, cleanupFolder) = try await Backend.localDirectory.make()
                defer { cleanupMemory(); cleanupFolder() }
                var g = SplitMix(seed: seed)
                let paths = ["a", "b", "a/x", "a/y", "b/x", "a/x/z"]
                func outcome(_ body: () async throws(CloudFileSystemError) -> String) async -> String {
                    do { return try await body() } catch { return "error \(error)" }
                }
                for step in 0..<30 {
                    let path = paths.randomElement(using: &g)!
                    let data = g.bytes(Int.random(in: 0...3, using: &g))
                    let local = try localFile(data, in: scratch)
                    let operation = Int.random(in: 0...3, using: &g)
                    var answers: [String] = []
                    for fileSystem in [memory, folder] {
                        answers.append(await outcome { () throws(CloudFileSystemError) -> String in
                            switch operation {
                            case 0: try await fileSystem.createDirectory(atPath: path)
                            case 1: try await fileSystem.uploadLocalFile(at: local, toPath: path)
                            case 2: try await fileSystem.removeItem(atPath: path)
                            default: return "\(try await fileSystem.contentsOfDirectory(atPath: path))"
                            }
                            return "ok"
                        })
                    }
                    #expect(answers[0] == answers[1], "seed \(seed), step \(step): operation \(operation) on \(path)")
                    for listed in ["", "a", "b"] {
                        let mine = await outcome { () throws(CloudFileSystemError) in "\(try await memory.contentsOfDirectory(atPath: listed))" }
                        let theirs = await outcome { () throws(CloudFileSystemError) in "\(try await folder.contentsOfDirectory(atPath: listed))" }
                        #expect(mine == theirs, "seed \(seed), step \(step): listing '\(listed)'")
                    }
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }
}
