import Foundation
import Testing
@testable import GranarySync

/// The checks before a merge (§9 step 2) and the ensemble's preparation at leech: a changed cloud or a
/// removed registration deleeches, a backend failing does not, a newer format stops with its error.
@Suite struct CloudChecksTests {
    static func deleechReason(_ outcome: CloudChecks.Outcome) -> String? {
        guard case let .forcedDeleech(error) = outcome else { return nil }
        return "\(error)"
    }

    @Test(arguments: Backend.allCases) func theFirstLeechPreparesTheEnsembleAndRecordsTheIdentity(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let a = try TransferDevice("a", in: scratch, fileSystem: fileSystem)
        #expect(try a.store.recordedCloudIdentity() == nil)
        try await a.leech()
        for directory in a.layout.directories { #expect(try await fileSystem.fileExists(atPath: directory) == .directory) }
        let marker = try await a.transit.fetch(a.layout.formatFile, name: "format.json", from: fileSystem)
        #expect(String(decoding: marker, as: UTF8.self) == #"{"format":"granary-sync","version":1}"#)
        let identity = try await fileSystem.fetchUserIdentity()
        #expect(try a.store.recordedCloudIdentity() == RecordedCloudIdentity(identity: identity))
        #expect(try await a.checks.beforeMerge().isOK)

        // A second device finds the ensemble there; its leech changes nothing remote.
        let before = try await a.snapshot()
        let b = try TransferDevice("b", in: scratch, fileSystem: fileSystem)
        try await b.leech()
        #expect(try await b.snapshot() == before)
        #expect(try await b.checks.beforeMerge().isOK)
    }

    @Test func mergeChecksNeedALeechedStore() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let a = try TransferDevice("a", in: scratch, fileSystem: MemoryFileSystem())
        await #expect(throws: SyncError.self) { try await a.checks.beforeMerge() }
        try a.store.setLeechState(.seeding)
        do { _ = try await a.checks.beforeMerge(); Issue.record("no error") } catch {
            guard case .notLeeched = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aChangedIdentityForcesADeleech() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        await cloud.setIdentity(CloudIdentity("someone else"))
        #expect(Self.deleechReason(try await a.checks.beforeMerge()) == "\(SyncError.cloudIdentityChanged)")
        // No identity at all is a change too.
        await cloud.setIdentity(nil)
        #expect(Self.deleechReason(try await a.checks.beforeMerge()) == "\(SyncError.cloudIdentityChanged)")
    }

    @Test func aReplacedSharedFolderForcesADeleechAndAnUnmountedOneIsAnError() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, cloud) = try sharedFolder(in: scratch)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await a.export()
        #expect(try await a.checks.beforeMerge().isOK)

        // Unmounted: an error to retry, never a deleech.
        let aside = scratch.appendingPathComponent("aside")
        try FileManager.default.moveItem(at: root, to: aside)
        do { _ = try await a.checks.beforeMerge(); Issue.record("no error") } catch {
            guard case .cloud(.unavailable) = error else { Issue.record("\(error)"); return }
            #expect(error.isRetryable)
        }
        // The same folder back: syncing goes on.
        try FileManager.default.moveItem(at: aside, to: root)
        #expect(try await a.checks.beforeMerge().isOK)

        // Another folder in its place (deleted and made again): a new identity.
        try FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        let fresh = LocalDirectoryFileSystem(rootDirectory: root)
        try await fresh.connect()
        #expect(Self.deleechReason(try await a.checks.beforeMerge()) == "\(SyncError.cloudIdentityChanged)")
    }

    @Test func aRemovedRegistrationForcesADeleechOnceTheStoreIsRegistered() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        // Leeched, not registered yet (the export writes the registration): no registration is expected.
        #expect(try await a.checks.beforeMerge().isOK)
        let report = try await a.export()
        #expect(report.registered)
        #expect(try a.store.state().leechState == .registered)
        #expect(try await a.checks.beforeMerge().isOK)

        try await cloud.removeItem(atPath: a.layout.path(for: .registration(store: a.storeID)))
        #expect(Self.deleechReason(try await a.checks.beforeMerge()) == "\(SyncError.storeUnregistered)")
    }

    @Test(arguments: [true, false]) func removedCloudDataForcesADeleech(registered: Bool) async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        if registered { try await a.export() }
        #expect(try a.store.state().leechState == (registered ? .registered : .leeched))
        await cloud.removeAll()
        #expect(Self.deleechReason(try await a.checks.beforeMerge()) == "\(SyncError.storeUnregistered)")
    }

    @Test(arguments: [MemoryFileSystem.Operation.connect, .fetchUserIdentity, .fileExists, .download])
    func aBackendErrorDuringTheChecksIsThrownNotADeleech(operation: MemoryFileSystem.Operation) async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await a.export()
        // A fresh checker, so that format.json is read (and its download can fail).
        try a.reopen()
        await cloud.disconnect()
        await cloud.failNext(operation, with: .unavailable(reason: "network down"))
        do { _ = try await a.checks.beforeMerge(); Issue.record("no error for a failing \(operation)") } catch {
            guard case .cloud(.unavailable) = error else { Issue.record("\(error)"); return }
        }
        #expect(try a.store.state().leechState == .registered)
        #expect(try await a.checks.beforeMerge().isOK)
    }

    @Test func aNewerFormatStopsWithItsErrorAtLeechAndAtMerge() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await a.export()
        let newer = try localFile(Data(#"{"format":"granary-sync","version":2}"#.utf8), in: scratch)
        try await cloud.uploadLocalFile(at: newer, toPath: a.layout.formatFile)

        try a.reopen()
        do { _ = try await a.checks.beforeMerge(); Issue.record("no error") } catch {
            guard case .unsupportedCloudFormat(found: 2) = error else { Issue.record("\(error)"); return }
        }
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        do { try await b.leech(); Issue.record("no error") } catch let error as SyncError {
            guard case .unsupportedCloudFormat(found: 2) = error else { Issue.record("\(error)"); return }
        }
        #expect(try b.store.recordedCloudIdentity() == nil)

        // Not a marker at all: damaged, not a newer format.
        try await cloud.uploadLocalFile(at: localFile(Data("{}".utf8), in: scratch), toPath: a.layout.formatFile)
        try a.reopen()
        do { _ = try await a.checks.beforeMerge(); Issue.record("no error") } catch {
            guard case .corruptCloudFile = error else { Issue.record("\(error)"); return }
        }
    }
}

extension CloudChecks.Outcome {
    var isOK: Bool { if case .ok = self { true } else { false } }
}
