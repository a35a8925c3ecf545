import Foundation
import Testing
@testable import GranarySync

/// The test doubles of the memory file system: injected faults, identity changes, removal, damage.
@Suite struct MemoryFileSystemTests {
    @Test func injectedFaultsHitTheNextCallsOfTheirOperationOnly() async throws {
        let fileSystem = MemoryFileSystem()
        await fileSystem.failNext(.connect, with: .unavailable(reason: "offline"))
        await #expect(throws: CloudFileSystemError.unavailable(reason: "offline")) { try await fileSystem.connect() }
        try await fileSystem.connect()
        await fileSystem.failNext(.contentsOfDirectory, with: .io(path: "x", errno: EIO))
        await fileSystem.failNext(.contentsOfDirectory, with: .injected("second"))
        #expect(try await fileSystem.fileExists(atPath: "") == .directory, "another operation is not affected")
        await #expect(throws: CloudFileSystemError.io(path: "x", errno: EIO)) { try await fileSystem.contentsOfDirectory(atPath: "") }
        await #expect(throws: CloudFileSystemError.injected("second")) { try await fileSystem.contentsOfDirectory(atPath: "") }
        #expect(try await fileSystem.contentsOfDirectory(atPath: "").isEmpty)
    }

    @Test func anIdentityChangeAndARemovalAreVisibleToEveryDevice() async throws {
        let shared = MemoryFileSystem(identity: CloudIdentity("alice"))
        try await shared.connect()
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        try await shared.createDirectory(atPath: "Notes")
        try await shared.uploadLocalFile(at: try localFile(Data("abc".utf8), in: scratch), toPath: "Notes/f")
        #expect(await shared.snapshotFiles() == ["Notes/f": Data("abc".utf8)])
        await shared.setIdentity(CloudIdentity("bob"))
        #expect(try await shared.fetchUserIdentity() == CloudIdentity("bob"))
        await shared.removeAll()
        #expect(try await shared.fileExists(atPath: "Notes") == .none)
        await shared.disconnect()
        await #expect(throws: CloudFileSystemError.notConnected) { try await shared.fileExists(atPath: "Notes") }
    }

    @Test func aCorruptedFileFailsItsChecksum() async throws {
        let fileSystem = MemoryFileSystem()
        try await fileSystem.connect()
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let bytes = EventFile(kind: .eventPart, payload: Data(#"{"v":1}"#.utf8)).encoded()
        try await fileSystem.uploadLocalFile(at: try localFile(bytes, in: scratch), toPath: "e")
        #expect(await fileSystem.corrupt(path: "e"))
        #expect(await fileSystem.corrupt(path: "missing") == false)
        let copy = scratch.appendingPathComponent("copy")
        try await fileSystem.downloadFile(atPath: "e", toLocalFile: copy)
        #expect(throws: EventFileError.self) { try EventFile(decoding: Data(contentsOf: copy), name: "e") }
    }
}
