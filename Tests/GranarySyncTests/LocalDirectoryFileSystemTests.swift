import Foundation
import Synchronization
import Testing
@testable import GranarySync

/// What only the local folder does: the root it will not create, the identity file, what listings
/// hide, temp-then-rename uploads — and the crash test: a process killed mid-upload leaves no visible
/// file.
@Suite struct LocalDirectoryFileSystemTests {
    @Test func aMissingRootIsUnavailableAndNotCreated() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let root = scratch.appendingPathComponent("not-mounted")
        let fileSystem = LocalDirectoryFileSystem(rootDirectory: root)
        do {
            try await fileSystem.connect()
            Issue.record("connected to a missing folder")
        } catch {
            guard case let .unavailable(reason) = error else { throw error }
            #expect(reason.contains(root.path))
        }
        #expect(!FileManager.default.fileExists(atPath: root.path))
        #expect(fileSystem.isConnected == false)
        let file = try localFile(Data(), in: scratch, name: "plain")
        await #expect(throws: CloudFileSystemError.self) { try await LocalDirectoryFileSystem(rootDirectory: file).connect() }
    }

    @Test func aFolderThatVanishesIsReportedAsUnavailable() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, fileSystem) = try sharedFolder(in: scratch)
        try await fileSystem.connect()
        try await fileSystem.createDirectory(atPath: "Notes")
        try FileManager.default.removeItem(at: root)
        let local = try localFile(Data("x".utf8), in: scratch)
        func expectUnavailable(_ label: String, _ body: () async throws(CloudFileSystemError) -> Void) async {
            do {
                try await body()
                Issue.record("\(label): no error")
            } catch {
                guard case .unavailable = error else { Issue.record("\(label): \(error)"); return }
            }
        }
        await expectUnavailable("exists") { () throws(CloudFileSystemError) in _ = try await fileSystem.fileExists(atPath: "Notes") }
        await expectUnavailable("list") { () throws(CloudFileSystemError) in _ = try await fileSystem.contentsOfDirectory(atPath: "Notes") }
        await expectUnavailable("mkdir") { () throws(CloudFileSystemError) in try await fileSystem.createDirectory(atPath: "Notes") }
        await expectUnavailable("upload") { () throws(CloudFileSystemError) in try await fileSystem.uploadLocalFile(at: local, toPath: "Notes/a") }
        await expectUnavailable("download") { () throws(CloudFileSystemError) in
            try await fileSystem.downloadFile(atPath: "Notes/a", toLocalFile: scratch.appendingPathComponent("d"))
        }
        await expectUnavailable("remove") { () throws(CloudFileSystemError) in try await fileSystem.removeItem(atPath: "Notes") }
        await expectUnavailable("identity") { () throws(CloudFileSystemError) in _ = try await fileSystem.fetchUserIdentity() }
        #expect(!FileManager.default.fileExists(atPath: root.path), "nothing recreated the folder")
    }

    @Test func theIdentityIsSharedByEveryProcessOfTheFolderAndChangesWithTheFolder() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let root = scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        // Many connections racing on a fresh folder end up with one identity (link(2) lets one win).
        let identities = try await withThrowingTaskGroup(of: CloudIdentity?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let fileSystem = LocalDirectoryFileSystem(rootDirectory: root)
                    try await fileSystem.connect()
                    return try await fileSystem.fetchUserIdentity()
                }
            }
            return try await group.reduce(into: Set<CloudIdentity?>()) { $0.insert($1) }
        }
        #expect(identities.count == 1)
        let identity = try #require(identities.first ?? nil)
        #expect(UUID(uuidString: identity.value) != nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root.path)
        #expect(leftovers == [LocalDirectoryFileSystem.identityFileName], "no temp file of the identity is left")
        // The user replaces the shared folder: a new identity, so ensembles stop syncing into it.
        try FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        let again = LocalDirectoryFileSystem(rootDirectory: root)
        try await again.connect()
        #expect(try await again.fetchUserIdentity() != identity)
    }

    @Test func aDamagedIdentityFileIsATypedError() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        for contents in ["", "not a uuid", String(repeating: "x", count: 1000), "6f1c0000-0000-4000-8000-000000000001"] {
            try Data(contents.utf8).write(to: scratch.appendingPathComponent(LocalDirectoryFileSystem.identityFileName))
            await #expect(throws: CloudFileSystemError.damagedIdentity(path: scratch.path + "/" + LocalDirectoryFileSystem.identityFileName)) {
                try await LocalDirectoryFileSystem(rootDirectory: scratch).connect()
            }
        }
    }

    @Test func listingsHideTempFilesIdentityAndConflictedCopies() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let fileSystem = LocalDirectoryFileSystem(rootDirectory: scratch)
        try await fileSystem.connect()
        try await fileSystem.createDirectory(atPath: "events")
        for name in [".3_X_1.gsevent.1234.part", "3_X_1 (conflicted copy 2026-11-27).gsevent",
                     "3_X_1.sync-conflict-20261127-101010-ABCDEFG.gsevent", "3_X_1.gsevent"] {
            try Data("x".utf8).write(to: scratch.appendingPathComponent("events/" + name))
        }
        #expect(try await fileSystem.contentsOfDirectory(atPath: "events") == [.file(name: "3_X_1.gsevent", size: 1)])
        #expect(try await fileSystem.contentsOfDirectory(atPath: "") == [.directory(name: "events")])
    }

    @Test func abandonedUploadsAreRemovedOnlyWhenOld() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let fileSystem = LocalDirectoryFileSystem(rootDirectory: scratch)
        try await fileSystem.connect()
        try await fileSystem.createDirectory(atPath: "events")
        let old = scratch.appendingPathComponent("events/.a.gsevent.1.part")
        let young = scratch.appendingPathComponent("events/.b.gsevent.2.part")
        let kept = scratch.appendingPathComponent("events/a.gsevent")
        for url in [old, young, kept] { try Data("x".utf8).write(to: url) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old.path)
        #expect(try await fileSystem.removeAbandonedUploads() == 1)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: young.path) && FileManager.default.fileExists(atPath: kept.path))
        #expect(FileManager.default.fileExists(atPath: scratch.appendingPathComponent(LocalDirectoryFileSystem.identityFileName).path))
    }

    /// The child uploads a large file again and again; killed with SIGKILL at a random moment of an
    /// upload, it must leave every listed file whole, and the partial one only as a hidden temp file.
    @Test func aProcessKilledMidUploadLeavesNoVisiblePartialFile() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        var g = SplitMix(seed: 2026)
        let content = g.bytes(24 << 20)
        let source = try localFile(content, in: scratch, name: "source")
        var killedMidUpload = 0
        for round in 0..<4 {
            let root = scratch.appendingPathComponent("shared-\(round)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
            let outcome = try UploadChild.runAndKill(root: root, source: source, afterLine: "uploading 2",
                                                     delay: Double.random(in: 0...0.08, using: &g))
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            let uploaded = outcome.lines.filter { $0.hasPrefix("uploaded ") }.count
            let fileSystem = LocalDirectoryFileSystem(rootDirectory: root)
            try await fileSystem.connect()
            let listed = try await fileSystem.contentsOfDirectory(atPath: "events")
            // Printed after the rename: the last upload may have been renamed and killed before printing.
            #expect(listed.count == uploaded || listed.count == uploaded + 1, "round \(round): \(listed.count) files, \(uploaded) uploads reported")
            for item in listed {
                #expect(item == .file(name: item.name, size: Int64(content.count)), "round \(round): \(item) is not whole")
                let copy = scratch.appendingPathComponent("check")
                try await fileSystem.downloadFile(atPath: "events/" + item.name, toLocalFile: copy)
                #expect(try Data(contentsOf: copy) == content, "round \(round): \(item.name) differs")
            }
            let raw = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("events").path)
            let temps = raw.filter { $0.hasPrefix(".") && $0.hasSuffix(".part") }
            if !temps.isEmpty {
                killedMidUpload += 1
                #expect(temps.count == 1, "round \(round): \(temps)")
                #expect(try await fileSystem.removeAbandonedUploads(olderThan: 0) == 1)
                #expect(try await fileSystem.contentsOfDirectory(atPath: "events") == listed, "removing the temp file changes no listing")
            }
        }
        // The kill must have landed inside an upload at least once, or this test proved nothing.
        #expect(killedMidUpload > 0)
    }
}

/// Runs `granary-crashtest upload` and kills it with SIGKILL `delay` seconds after it printed a line.
enum UploadChild {
    static func runAndKill(root: URL, source: URL, afterLine line: String, delay: Double) throws -> CrashChild.Outcome {
        try CrashChild.runAndKill(["upload", root.path, source.path], afterLine: line, delay: delay)
    }
}
