import Foundation
import Testing
@testable import GranarySync

/// One listing of the ensemble's four directories, parsed and ordered; names that are not ours are set
/// aside, and a directory gone is the cloud failing.
@Suite struct CloudSnapshotTests {
    @Test(arguments: Backend.allCases) func listsEachKindInNumericCountOrderAndSetsForeignNamesAside(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let layout = try CloudLayout(ensembleIdentifier: "library")
        for directory in layout.directories { try await fileSystem.createDirectory(atPath: directory) }
        let a = orderedStores[0], b = orderedStores[1]
        let names: [CloudFileName] = [
            .event(globalCount: 10, store: a, revision: 2, part: nil),
            .event(globalCount: 9, store: b, revision: 1, part: .init(index: 2, count: 2)),
            .event(globalCount: 9, store: b, revision: 1, part: .init(index: 1, count: 2)),
            .event(globalCount: 9, store: a, revision: 1, part: nil),
            .registration(store: a),
            .data(sha256: String(repeating: "ab", count: 32), store: b),
            .baseline(globalCount: 3, id: UUID(), store: a, part: nil),
        ]
        for (i, name) in names.enumerated() {
            try await fileSystem.uploadLocalFile(at: localFile(Data(repeating: 7, count: i + 1), in: scratch), toPath: layout.path(for: name))
        }
        try await fileSystem.uploadLocalFile(at: localFile(Data("x".utf8), in: scratch), toPath: layout.eventsDirectory + "/notes.txt")
        // A registration in the events directory is not where a GranarySync device puts one.
        try await fileSystem.uploadLocalFile(at: localFile(Data("x".utf8), in: scratch),
                                             toPath: layout.eventsDirectory + "/" + CloudFileName.registration(store: b).fileName)
        try await fileSystem.createDirectory(atPath: layout.eventsDirectory + "/sub")

        let snapshot = try await CloudSnapshot.take(of: fileSystem, layout: layout)
        #expect(snapshot.events == [names[3], names[2], names[1], names[0]])
        #expect(snapshot.stores == [names[4]])
        #expect(snapshot.data == [names[5]])
        #expect(snapshot.baselines == [names[6]])
        #expect(snapshot.size(of: names[0]) == 1)
        #expect(snapshot.size(of: names[6]) == 7)
        #expect(Set(snapshot.foreignPaths) == ["library/events/notes.txt", "library/events/sub",
                                               "library/events/" + CloudFileName.registration(store: b).fileName])
        #expect(snapshot.names.count == names.count)
    }

    @Test(arguments: Backend.allCases) func anUnchangedListingReusesThePreviousSnapshot(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let layout = try CloudLayout(ensembleIdentifier: "library")
        for directory in layout.directories { try await fileSystem.createDirectory(atPath: directory) }
        let a = orderedStores[0]
        for revision in Int64(1)...20 {
            let name = CloudFileName.event(globalCount: 21 - revision, store: a, revision: revision, part: nil)
            try await fileSystem.uploadLocalFile(at: localFile(Data("e".utf8), in: scratch), toPath: layout.path(for: name))
        }
        let first = try await CloudSnapshot.take(of: fileSystem, layout: layout)
        #expect(!first.isUnchanged)
        #expect(first.eventFileNames == first.events.map(\.fileName))
        let second = try await CloudSnapshot.take(of: fileSystem, layout: layout, after: first)
        #expect(second.isUnchanged)
        #expect(second.events == first.events && second.sizes == first.sizes)

        // A new event file, and a registration: both directories listed anew, the result as if fresh.
        let added = CloudFileName.event(globalCount: 3, store: orderedStores[1], revision: 1, part: nil)
        try await fileSystem.uploadLocalFile(at: localFile(Data("e".utf8), in: scratch), toPath: layout.path(for: added))
        try await fileSystem.uploadLocalFile(at: localFile(Data("r".utf8), in: scratch), toPath: layout.path(for: .registration(store: a)))
        let third = try await CloudSnapshot.take(of: fileSystem, layout: layout, after: second)
        let fresh = try await CloudSnapshot.take(of: fileSystem, layout: layout)
        #expect(!third.isUnchanged)
        #expect(third.events.contains(added) && third.stores == [.registration(store: a)])
        #expect(third.events == fresh.events && third.eventFileNames == fresh.eventFileNames && third.sizes == fresh.sizes)
        // A file rewritten with another size is a change too.
        try await fileSystem.uploadLocalFile(at: localFile(Data("longer".utf8), in: scratch), toPath: layout.path(for: added))
        let fourth = try await CloudSnapshot.take(of: fileSystem, layout: layout, after: third)
        #expect(!fourth.isUnchanged && fourth.size(of: added) == 6)
    }

    @Test(arguments: Backend.allCases) func aMissingDirectoryIsACloudError(backend: Backend) async throws {
        let (fileSystem, _, cleanup) = try await backend.make()
        defer { cleanup() }
        let layout = try CloudLayout(ensembleIdentifier: "library")
        try await fileSystem.createDirectory(atPath: layout.eventsDirectory)
        await #expect(throws: SyncError.self) { try await CloudSnapshot.take(of: fileSystem, layout: layout) }
        do {
            _ = try await CloudSnapshot.take(of: fileSystem, layout: layout)
        } catch {
            guard case .cloud(.notFound(let path)) = error else { Issue.record("\(error)"); return }
            #expect(path == layout.baselinesDirectory)
        }
    }
}
