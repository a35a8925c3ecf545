import Foundation
import Testing
@testable import GranarySync

/// The local transit folders and the clean-up of what killed runs leave behind, locally and in a
/// shared folder.
@Suite struct TransitDirectoriesTests {
    @Test func preparingRemovesWhatAKilledRunLeftAndKeepsTheFolders() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let transit = TransitDirectories(root: scratch.appendingPathComponent("transit"))
        #expect(try transit.prepare() == 0)
        _ = try transit.stageUpload(Data("staged".utf8), name: "1_A_1.gsevent")
        try Data("half".utf8).write(to: transit.download.appendingPathComponent(".x.part"))
        try Data("whole".utf8).write(to: transit.download.appendingPathComponent("2_B_1.gsevent"))
        #expect(try transit.prepare() == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: transit.upload.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: transit.download.path).isEmpty)
    }

    @Test func abandonedUploadsInASharedFolderAreRemovedOnceOld() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let root = scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("library/events"), withIntermediateDirectories: true)
        let cloud = LocalDirectoryFileSystem(rootDirectory: root)
        try await cloud.connect()
        let old = root.appendingPathComponent("library/events/.1_A_1.gsevent.X.part")
        let young = root.appendingPathComponent("library/events/.2_A_2.gsevent.Y.part")
        try Data("old".utf8).write(to: old)
        try Data("young".utf8).write(to: young)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old.path)
        #expect(try await TransitDirectories.removeAbandonedUploads(on: cloud, under: "library") == 1)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        // Maybe an upload still running on another device.
        #expect(FileManager.default.fileExists(atPath: young.path))
        // Backends whose partial uploads are invisible have nothing to clean.
        let memory = MemoryFileSystem()
        try await memory.connect()
        #expect(try await TransitDirectories.removeAbandonedUploads(on: memory, under: "library") == 0)
    }
}
